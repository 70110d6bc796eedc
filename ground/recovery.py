"""The words of a cluster's recovery probe (Cluster.recovery_gaps) that the runner reads: a
gap that names an OSN not serving ends with OSN_NOT_SERVING, so that the runner can tell a
halted orderer from a Kafka still rejoining (harness.runner's wait for recovery)."""
from __future__ import annotations

OSN_NOT_SERVING = "not serving every channel"
# Seconds an OSN may stay not serving once Kafka is whole before the wait gives it up: a chain
# cut off from Kafka reconnects within seconds (ordeal's orderers retry every second).
OSN_GRACE = 60.0
