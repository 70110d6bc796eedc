"""Every workload by name (redpanda's WORKLOADS): what a scenario's `[[workloads]] name`
may name. Nothing registers itself on import."""
from __future__ import annotations

from ground.workload import WorkloadFactory
from workloads.kafka_log import kafka_log_workload
from workloads.kafka_txn import kafka_txn_workload
from workloads.noop import noop_workload
from workloads.ordering import ordering_workload

WORKLOADS: dict[str, WorkloadFactory] = {
    "kafka-log": kafka_log_workload,  # sends, assign/poll consumers, final reads (format 1)
    "kafka-txn": kafka_txn_workload,  # Kafka transactions (format 2)
    "ordering": ordering_workload,  # Broadcast, Deliver followers, final Deliver of every block
    "noop": noop_workload,  # no cluster: an in-memory log
}


def workload_names() -> list[str]:
    return sorted(WORKLOADS)


def workload_factory(name: str) -> WorkloadFactory:
    """The factory named `name`; KeyError if there is none."""
    return WORKLOADS[name]


def register_workload(name: str, factory: WorkloadFactory) -> None:
    """Add a workload that is not shipped (a test's stand-in) under `name`."""
    WORKLOADS[name] = factory
