"""Whom a fault hits: nodes picked at random, or read from the cluster's live state (the
leader and ISR of a partition, the controller). Live state is asked of the brokers at the
moment of the fault, through the host's client path, so it is what clients see then.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from clusters.health import admin_client

Pick = Literal["random", "leader", "controller", "isr", "follower", "all"]
ROLES = ("zookeeper", "kafka", "osn")


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
    role: Literal["zookeeper", "kafka", "osn"] = "kafka"
    count: int = Field(1, ge=1, description="nodes, for random / isr / follower picks")
    topic: str | None = None
    partition: int | None = Field(None, ge=0)


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
