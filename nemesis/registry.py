"""Every fault by name (redpanda's FAULTS): what a scenario's `[nemesis] faults` may name.

One entry per fault, with the shape it is made from; nothing registers itself on import.
The fault kinds variants state expectations for (ground/fault_kinds.py) are among these
names; the rest are shapes for scenarios that name them, parts of the mixes and the
compound faults of random schedules (harness/schedules/random_faults.py).
"""
from __future__ import annotations

from typing import Any

from ground.fault_kinds import canonical
from ground.nemesis_protocol import FaultFactory
from nemesis.broker_fencing import BrokerFromControllers, FencingOptions
from nemesis.disk_loss import DiskLoss, DiskLossOptions
from nemesis.link_faults import LinkFaultNemesis, LinkFaultOptions
from nemesis.liveness_probe import NAME as KAFKA_LOSS_PROBED
from nemesis.migration import KafkaToRaft, MigrationOptions
from nemesis.liveness_probe import KafkaLossProbed, LivenessOptions
from nemesis.noop import NoopNemesis
from nemesis.partition import partition_fault
from nemesis.process_faults import process_fault
from nemesis.rebalance_storm import NAME as REBALANCE_STORM
from nemesis.rebalance_storm import RebalanceStorm, StormOptions
from nemesis.mixed import GROUP_MIXED_DEFAULT, TXN_MIXED_DEFAULT, Mixed, MixedOptions
from nemesis.targeted_loss import TargetedIsrShrink, TargetedLossOptions
from nemesis.unclean_toggle import UncleanOptions, UncleanToggle


def _mixed(name: str, defaults: dict[str, Any]) -> FaultFactory:
    return lambda options: Mixed(MixedOptions.model_validate({**defaults, **options}), FAULTS, name=name)


FAULTS: dict[str, FaultFactory] = {
    "noop": NoopNemesis,
    # Processes: SIGKILL and restart, or SIGSTOP and SIGCONT (nemesis/process_faults.py).
    "kill-broker": process_fault("kill-broker", "kill", role="kafka"),
    "kill-leader": process_fault("kill-leader", "kill", pick="leader"),
    "kill-controller": process_fault("kill-controller", "kill", pick="controller"),
    "pause-broker": process_fault("pause-broker", "pause", role="kafka"),
    "pause-controller": process_fault("pause-controller", "pause", pick="controller"),
    "kill-osn": process_fault("kill-osn", "kill", role="osn"),
    "pause-osn": process_fault("pause-osn", "pause", role="osn"),
    # The orderer leading a channel's Raft cluster (etcdraft only: Fabric's own log names it).
    "kill-raft-leader": process_fault("kill-raft-leader", "kill", role="osn", pick="raft-leader"),
    "kill-zookeeper": process_fault("kill-zookeeper", "kill", role="zookeeper"),
    "pause-zookeeper": process_fault("pause-zookeeper", "pause", role="zookeeper"),
    "kill-kraft-controller": process_fault("kill-kraft-controller", "kill", role="controller"),
    "pause-kraft-controller": process_fault("pause-kraft-controller", "pause", role="controller"),
    # Compound process faults, for random schedules: every broker killed and then started
    # together, a majority paused, a minority killed or paused.
    "kill-all-brokers": process_fault("kill-all-brokers", "kill", role="kafka", pick="all"),
    "pause-all-brokers": process_fault("pause-all-brokers", "pause", role="kafka", pick="all"),
    "pause-majority": process_fault("pause-majority", "pause", role="kafka", pick="majority"),
    "kill-minority": process_fault("kill-minority", "kill", role="kafka", pick="minority"),
    "pause-minority": process_fault("pause-minority", "pause", role="kafka", pick="minority"),
    # Transactions: the broker coordinating a kafka-txn producer's transactional.id (the leader
    # of its __transaction_state partition), or its consumers' group (of __consumer_offsets).
    "kill-txn-coordinator": process_fault("kill-txn-coordinator", "kill", pick="txn-coordinator"),
    "pause-txn-coordinator": process_fault("pause-txn-coordinator", "pause", pick="txn-coordinator"),
    "kill-group-coordinator": process_fault("kill-group-coordinator", "kill", pick="group-coordinator"),
    "pause-group-coordinator": process_fault("pause-group-coordinator", "pause", pick="group-coordinator"),
    # Consumer groups: members joining and leaving a group in use (nemesis/rebalance_storm.py).
    REBALANCE_STORM: lambda options: RebalanceStorm(StormOptions.model_validate(options)),
    # Network partitions: topologies (nemesis/topologies.py) made iptables rules (partition.py).
    "partition-halves": partition_fault("partition-halves", topology="halves"),
    "isolate-leader": partition_fault("isolate-leader", topology="isolate", target={"pick": "leader"}),
    "isolate-controller": partition_fault("isolate-controller", topology="isolate", target={"pick": "controller"}),
    "zk-quorum-loss": partition_fault("zk-quorum-loss", topology="zk-split"),
    "controller-quorum-loss": partition_fault("controller-quorum-loss", topology="controller-majority"),
    "partition-majorities-ring": partition_fault("partition-majorities-ring", topology="majorities-ring"),
    "isolate-node": partition_fault("isolate-node", topology="isolate"),
    "isolate-raft-leader": partition_fault("isolate-raft-leader", topology="isolate",
                                           target={"pick": "raft-leader", "role": "osn"}),
    "zk-from-brokers": partition_fault("zk-from-brokers", topology="zk-from-brokers"),
    "isolate-txn-coordinator": partition_fault("isolate-txn-coordinator", topology="isolate",
                                               target={"pick": "txn-coordinator"}),
    "isolate-group-coordinator": partition_fault("isolate-group-coordinator", topology="isolate",
                                                 target={"pick": "group-coordinator"}),
    "isolate-broker-from-controllers":
        lambda options: BrokerFromControllers(FencingOptions.model_validate(options)),
    # Links, settings, storage, Fabric's liveness probe.
    "link-faults": lambda options: LinkFaultNemesis("link-faults", LinkFaultOptions.model_validate(options)),
    "unclean-toggle": lambda options: UncleanToggle(UncleanOptions.model_validate(options)),
    "targeted-isr-shrink": lambda options: TargetedIsrShrink(TargetedLossOptions.model_validate(options)),
    "disk-loss": lambda options: DiskLoss(DiskLossOptions.model_validate(options)),
    "disk-loss-sole-in-sync":
        lambda options: DiskLoss(DiskLossOptions.model_validate({"pick": "sole-in-sync", **options})),
    KAFKA_LOSS_PROBED: lambda options: KafkaLossProbed(LivenessOptions.model_validate(options)),
    # Fabric's orderers migrated from Kafka to Raft as the guide says (nemesis/migration.py).
    "kafka-to-raft": lambda options: KafkaToRaft(MigrationOptions.model_validate(options)),
    # Mixes: a seeded pick among other faults per start (nemesis/mixed.py).
    "mixed": _mixed("mixed", {}),
    "txn-mixed": _mixed("txn-mixed", {"faults": TXN_MIXED_DEFAULT}),
    "group-mixed": _mixed("group-mixed", {"faults": GROUP_MIXED_DEFAULT}),
}


def fault_names() -> list[str]:
    return sorted(FAULTS)


def fault_factory(name: str) -> FaultFactory:
    """The factory named `name` (or its new name, ground.fault_kinds.RENAMED); KeyError if there is none."""
    return FAULTS[canonical(name)]


def register_fault(name: str, factory: FaultFactory) -> None:
    """Add a fault that is not shipped (a test's stand-in) under `name`."""
    FAULTS[name] = factory
