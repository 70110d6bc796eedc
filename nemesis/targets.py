"""Whom a fault hits: nodes picked at random, or read from the cluster's live state (the
leader and ISR of a partition, the controller). Live state is asked of the brokers at the
moment of the fault, through the host's client path, so it is what clients see then; the
KRaft quorum's leader is read from the controllers (clusters/kraft.py).
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from clusters.health import admin_client

Pick = Literal["random", "leader", "controller", "isr", "follower", "all"]
ROLES = ("zookeeper", "controller", "kafka", "osn")
Role = Literal["zookeeper", "controller", "kafka", "osn"]


class NoTarget(RuntimeError):
    """Live state names no node to hit (no topic yet, no leader, no controller)."""


@dataclass(frozen=True)
class PartitionState:
    """One topic-partition as the cluster's metadata says now; brokers by node name."""

    topic: str
    partition: int
    leader: str | None
    replicas: list[str]
    isr: list[str]

    @property
    def followers(self) -> list[str]:
        return [r for r in self.replicas if r != self.leader]


class TargetSpec(BaseModel):
    """A fault's target: `pick` among the live nodes of `role`, or from a partition's state
    (`topic`/`partition`; a user topic picked at random when not given)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    pick: Pick = "random"
    role: Role = "kafka"
    count: int = Field(1, ge=1, description="nodes, for random / isr / follower picks")
    topic: str | None = None
    partition: int | None = Field(None, ge=0)


def roles_hit(spec: TargetSpec) -> set[str]:
    """The node roles `spec` can designate: what a variant must have for it to run."""
    if spec.pick in ("random", "all"):
        return {spec.role}
    if spec.pick == "controller":
        return set()  # the controller broker, or KRaft's active controller: every variant has one
    return {"kafka"}


def broker_name(broker_id: int) -> str:
    return f"kafka{broker_id}"


def user_partitions(cluster: Any, topic: str | None = None) -> list[tuple[str, int]]:
    """(topic, partition) of every non-internal topic (or of `topic`), from live metadata."""
    admin = admin_client(cluster.bootstrap_servers())
    meta = admin.list_topics(topic, timeout=10)
    return sorted((name, p) for name, t in meta.topics.items() if not name.startswith("__") and t.error is None
                  for p in t.partitions)


def partition_state(cluster: Any, topic: str, partition: int = 0) -> PartitionState:
    admin = admin_client(cluster.bootstrap_servers())
    meta = admin.list_topics(topic, timeout=10)
    t = meta.topics.get(topic)
    part = t.partitions.get(partition) if t is not None else None
    if part is None:
        raise NoTarget(f"no partition {topic}/{partition} in the metadata")
    return PartitionState(topic, partition, broker_name(part.leader) if part.leader >= 0 else None,
                          [broker_name(r) for r in part.replicas], [broker_name(r) for r in part.isrs])


def choose_partition(cluster: Any, rng: random.Random, topic: str | None = None,
                     partition: int | None = None) -> tuple[str, int]:
    if topic is not None and partition is not None:
        return topic, partition
    candidates = user_partitions(cluster, topic)
    if not candidates:
        raise NoTarget(f"no topic {topic} to pick a partition from" if topic else "no user topic yet")
    return rng.choice(candidates)


def controller(cluster: Any) -> str:
    """The controller broker (ZooKeeper mode) or the active controller (KRaft), by name."""
    node = cluster.controller()
    if node is None:
        raise NoTarget("no controller elected")
    return node.name


def resolve(cluster: Any, spec: TargetSpec, rng: random.Random) -> tuple[list[str], dict[str, Any]]:
    """The node names `spec` designates now, and what the op should say about why."""
    detail: dict[str, Any] = {"pick": spec.pick}
    if spec.pick == "controller":
        return [controller(cluster)], detail
    if spec.pick in ("leader", "isr", "follower"):
        topic, part = choose_partition(cluster, rng, spec.topic, spec.partition)
        state = partition_state(cluster, topic, part)
        detail.update(topic=topic, partition=part, leader=state.leader, isr=state.isr)
        if spec.pick == "leader":
            if state.leader is None:
                raise NoTarget(f"{topic}/{part} has no leader")
            return [state.leader], detail
        pool = state.isr if spec.pick == "isr" else state.followers
        if not pool:
            raise NoTarget(f"{topic}/{part} has no {spec.pick} to pick")
        return sorted(rng.sample(pool, min(spec.count, len(pool)))), detail
    live = [n.name for n in cluster.by_role(spec.role) if n.alive()]
    if spec.pick == "all":
        return live, detail
    if not live:
        raise NoTarget(f"no live {spec.role} node")
    return sorted(rng.sample(live, min(spec.count, len(live)))), detail


def elect_unclean(cluster: Any, partitions: list[tuple[str, int]], timeout: float = 15.0) -> dict[str, str]:
    """Admin electLeaders(UNCLEAN) for `partitions`, as an operator of a KRaft cluster does
    for a partition already leaderless when unclean election is switched on (the
    controller only revisits those every unclean.leader.election.interval.ms). Answers, per
    "topic/partition", "elected" or Kafka's error (ELECTION_NOT_NEEDED when it has a leader)."""
    from confluent_kafka import ElectionType, TopicPartition

    if not partitions:
        return {}
    # Timeouts are those of socket.timeout.ms: confluent-kafka 2.16.1's elect_leaders raises
    # TypeError for request_timeout or operation_timeout (a bug in its argument parsing).
    admin = admin_client(cluster.bootstrap_servers(), **{"socket.timeout.ms": int(timeout * 1000)})
    try:
        results = admin.elect_leaders(ElectionType.UNCLEAN, [TopicPartition(t, p) for t, p in partitions]) \
            .result(timeout=timeout + 1)
    except Exception as exc:  # noqa: BLE001 - recorded: the election could not be asked for
        return {f"{t}/{p}": f"{exc.__class__.__name__}: {exc}" for t, p in partitions}
    return {f"{tp.topic}/{tp.partition}": "elected" if err is None else str(err.args[0].name() if err.args else err)
            for tp, err in results.items()}


def leaderless(cluster: Any, topics: list[str]) -> list[tuple[str, int]]:
    """(topic, partition) of `topics` with no leader in the metadata now."""
    admin = admin_client(cluster.bootstrap_servers())
    found = []
    for topic in topics:
        meta = admin.list_topics(topic, timeout=10).topics.get(topic)
        if meta is not None and meta.error is None:
            found += [(topic, p) for p, part in meta.partitions.items() if part.leader < 0]
    return sorted(found)
