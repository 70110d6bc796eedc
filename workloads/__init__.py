"""ordeal's workloads: what the clients do to the cluster (Jepsen's client + generator).

registry.py names every workload (WORKLOADS): kafka_log's "kafka-log" (sends, assign/poll
consumers, final reads of every partition), kafka_txn's "kafka-txn" (transactions),
ordering's "ordering" (Broadcast, Deliver followers, final Deliver of every block from
every OSN) and noop's "noop" (no cluster).
"""
