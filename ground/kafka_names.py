"""Names the kafka-txn workload gives Kafka and faults aim at (nemesis/targets.py finds the
coordinator of an id or a group): transactional ids "<prefix>-<n>", n counted from 0 per
run and reused, and consumer groups "<prefix>-c<thread>" of each worker thread's consumer."""
from __future__ import annotations

TRANSACTIONAL_ID_PREFIX = GROUP_PREFIX = "ordeal-txn"
