"""Kafka's own Java client (the kafka-clients jar) for the Kafka workloads, beside librdkafka.

The workloads are written against confluent-kafka's Producer and Consumer; workloads/java/
kafka.py gives the Java client that same shape, so one workload drives either client
(workloads/kafka_clients.py chooses). The jar is resolved by Maven at the release the
variant names (libs.py) and runs in the run's own process through JPype: the Python
workers call the client directly, and a delivery report calls back into Python as
librdkafka's does, so an op's invoke and completion are recorded exactly as with librdkafka.
"""
