"""ordeal's workloads: what the clients do to the cluster (Jepsen's client + generator).

kafka_log registers "kafka-log" (sends, assign/poll consumers, final reads of every
partition); ordering registers "ordering" (Broadcast, Deliver followers, final Deliver of
every block from every OSN). harness.workload imports every module here on first use.
"""
