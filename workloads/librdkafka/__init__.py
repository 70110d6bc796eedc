"""librdkafka releases other than ordeal's own (`[client] implementation = "librdkafka"`,
`version = "2.3.0"`), each installed once into an environment of its own (environments.py)
and run in a process of its own (child.py, driven by process.py), so that two releases never
meet in one interpreter. kafka.py gives them confluent-kafka's Producer and Consumer shape, so
the workloads drive them as they drive ordeal's own confluent-kafka
(workloads/kafka_clients.py chooses).
"""
