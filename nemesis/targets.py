"""Whom a fault hits: nodes picked at random, or read from the cluster's live state (the
leader and ISR of a partition, the controller). Live state is asked of the brokers at the
moment of the fault, through the host's client path, so it is what clients see then; the
KRaft quorum's leader is read from the controllers (clusters/kraft.py).
"""
from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ground.cluster_view import ClusterView
from fabric.material import SYSTEM_CHANNEL
from clusters.health import admin_client
from ground.kafka_names import GROUP_PREFIX, TRANSACTIONAL_ID_PREFIX
from ground.nemesis_protocol import NoTarget

Pick = Literal["random", "leader", "controller", "isr", "follower", "all", "minority", "majority",
               "txn-coordinator", "group-coordinator", "raft-leader"]
# Internal topics whose partition leaders coordinate: a txn's (its transactional.id's) and a
# consumer group's.
COORDINATION_TOPICS = {"txn-coordinator": "__transaction_state", "group-coordinator": "__consumer_offsets"}
ROLES = ("zookeeper", "controller", "kafka", "osn")
# Picks among the nodes of the spec's role (the others read a partition's or the cluster's state).
ROLE_PICKS = ("random", "all", "minority", "majority")
Role = Literal["zookeeper", "controller", "kafka", "osn"]


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

    @property
    def in_sync_followers(self) -> list[str]:
        return [f for f in self.followers if f in self.isr]


class TargetSpec(BaseModel):
    """A fault's target: `pick` among the live nodes of `role`, or from a partition's state
    (`topic`/`partition`; a user topic picked at random when not given). For `raft-leader`,
    `topic` names the channel (a channel's Kafka topic bears its name)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    pick: Pick = "random"
    role: Role = "kafka"
    count: int = Field(1, ge=1, description="nodes, for random / isr / follower picks")
    topic: str | None = None
    partition: int | None = Field(None, ge=0)
    # txn-coordinator / group-coordinator: whose coordinator (a transactional.id, or a group
    # id); when not given, the kafka-txn workload's id of a random n below `keys`, or a group
    # with members now (subscribed consumers), else the kafka-txn workload's group so picked.
    key: str | None = Field(None, min_length=1)
    keys: int = Field(6, ge=1, le=1024)


def java_string_hash(text: str) -> int:
    """Java's String.hashCode: s[0]*31^(n-1) + ... + s[n-1] over UTF-16 code units, in int32."""
    h = 0
    units = text.encode("utf-16-be")
    for i in range(0, len(units), 2):
        h = (31 * h + int.from_bytes(units[i:i + 2], "big")) & 0xFFFFFFFF
    return h - 2**32 if h >= 2**31 else h


def coordinator_partition(key: str, partitions: int) -> int:
    """The partition of __transaction_state (or __consumer_offsets) whose leader coordinates `key`:
    Kafka's TransactionStateManager.partitionFor (GroupMetadataManager's alike) is
    Utils.abs(key.hashCode) % partitions, where Utils.abs(Integer.MIN_VALUE) is 0."""
    h = java_string_hash(key)
    return (0 if h == -2**31 else abs(h)) % partitions


def coordinator(cluster: ClusterView, spec: TargetSpec, rng: random.Random) -> tuple[str, dict[str, Any]]:
    """The broker coordinating a transactional.id or a consumer group now: the leader of its
    partition of the internal topic, read from live metadata."""
    txn = spec.pick == "txn-coordinator"
    admin = admin_client(cluster.bootstrap_servers())
    key = spec.key or (f"{TRANSACTIONAL_ID_PREFIX}-{rng.randrange(spec.keys)}" if txn
                       else _group_id(live_group(admin, rng)) or f"{GROUP_PREFIX}-c{rng.randrange(spec.keys)}")
    topic = COORDINATION_TOPICS[spec.pick]
    meta = admin.list_topics(topic, timeout=10).topics.get(topic)
    if meta is None or meta.error is not None or not meta.partitions:
        raise NoTarget(f"no {topic} yet (no {'transaction' if txn else 'group'} has used a coordinator)")
    part = coordinator_partition(key, len(meta.partitions))
    state = partition_state(cluster, topic, part)
    if state.leader is None:
        raise NoTarget(f"{topic}/{part} (coordinator of {key}) has no leader")
    return state.leader, {"key": key, "topic": topic, "partition": part, "leader": state.leader, "isr": state.isr}


# Group states without members. Any other is a group subscribed consumers are in: librdkafka
# names the classic states (STABLE, PREPARING_REBALANCING, ...) and lists KIP-848's own
# (assigning, reconciling) as UNKNOWN.
_MEMBERLESS = frozenset({"EMPTY", "DEAD"})


def live_group(admin: Any, rng: random.Random) -> Any | None:
    """A consumer group with members now (the brokers' listing of it: group_id, state, type),
    picked at random (in name order, so a seed picks alike), or None when there is none or
    the brokers cannot say: a group fault then hits a group that is in use, whose members
    must rejoin through its coordinator."""
    try:
        listed = admin.list_consumer_groups(request_timeout=10).result(timeout=15).valid
    except Exception:  # noqa: BLE001 - a broker down or slow: the caller falls back
        return None
    groups = sorted((g for g in listed if getattr(g.state, "name", "EMPTY") not in _MEMBERLESS),
                    key=lambda g: g.group_id)
    return rng.choice(groups) if groups else None


def _group_id(listing: Any | None) -> str | None:
    return None if listing is None else listing.group_id


def roles_hit(spec: TargetSpec) -> set[str]:
    """The node roles `spec` can designate: what a variant must have for it to run."""
    if spec.pick in ROLE_PICKS:
        return {spec.role}
    if spec.pick == "controller":
        return set()  # the controller broker, or KRaft's active controller: every variant has one
    if spec.pick == "raft-leader":
        return {"osn"}
    return {"kafka"}


# Clients partition_state makes in turn to hear one broker's own answer.
VIA_TRIES = 10


def broker_name(broker_id: int) -> str:
    return f"kafka{broker_id}"


def user_partitions(cluster: ClusterView, topic: str | None = None) -> list[tuple[str, int]]:
    """(topic, partition) of every non-internal topic (or of `topic`), from live metadata."""
    admin = admin_client(cluster.bootstrap_servers())
    meta = admin.list_topics(topic, timeout=10)
    return sorted((name, p) for name, t in meta.topics.items() if not name.startswith("__") and t.error is None
                  for p in t.partitions)


def partition_state(cluster: ClusterView, topic: str, partition: int = 0, via: str | None = None) -> PartitionState:
    """The partition as the metadata says. `via` names the one broker whose answer counts:
    a broker cut from the controller keeps the ISR it last heard of. Bootstrapping a client
    to `via` alone is not enough, for librdkafka sends a metadata request to any broker it
    has learnt of and reached (measured on a cut cluster: 3 answers in 10 came from
    another broker, the cut one among them). So the answer's broker is checked, and
    another answer is asked of a new client, up to VIA_TRIES times."""
    if via is None:
        meta = admin_client(cluster.bootstrap_servers()).list_topics(topic, timeout=10)
    else:
        address = cluster.proxy_address(cluster.node(via))
        for _ in range(VIA_TRIES):
            meta = admin_client(address).list_topics(topic, timeout=10)
            # librdkafka names a broker "host:port/id" ("/bootstrap" before it knows the id).
            if meta.orig_broker_name.startswith(f"{address}/"):
                break
        else:
            raise NoTarget(f"{via} did not answer for {topic}/{partition} in {VIA_TRIES} tries "
                           f"(the last answer came from {meta.orig_broker_name})")
    t = meta.topics.get(topic)
    part = t.partitions.get(partition) if t is not None else None
    if part is None:
        raise NoTarget(f"no partition {topic}/{partition} in the metadata")
    return _state(topic, partition, part)


def partition_states(cluster: ClusterView) -> dict[tuple[str, int], PartitionState]:
    """Every partition's state from one metadata answer (any broker's: a choice among many
    partitions, where one broker's older view of one of them costs nothing but the pick)."""
    meta = admin_client(cluster.bootstrap_servers()).list_topics(timeout=10)
    return {(name, p): _state(name, p, part) for name, t in meta.topics.items() if t.error is None
            for p, part in t.partitions.items()}


def _state(topic: str, partition: int, part: Any) -> PartitionState:
    return PartitionState(topic, partition, broker_name(part.leader) if part.leader >= 0 else None,
                          [broker_name(r) for r in part.replicas], [broker_name(r) for r in part.isrs])


def high_watermark(cluster: ClusterView, topic: str, partition: int, via: str) -> int | None:
    """The partition's high watermark as the broker `via` (its leader) answers it: the end
    of what the current ISR holds, so what acks=all may have acknowledged. None when the
    broker does not answer."""
    from confluent_kafka import TopicPartition
    from confluent_kafka.admin import OffsetSpec

    admin = admin_client(cluster.proxy_address(cluster.node(via)))
    try:
        found = admin.list_offsets({TopicPartition(topic, partition): OffsetSpec.latest()}, request_timeout=5)
        return next(iter(found.values())).result(timeout=6).offset
    except Exception:  # noqa: BLE001 - a leader that does not answer has committed nothing we can count
        return None


def hold_committing(cluster: ClusterView, state: PartitionState, hold: float, records: int, timeout: float) -> int | None:
    """Hold a shrunk ISR so that it commits something to lose: at least `hold` seconds, and
    on until the leader's high watermark has advanced by `records` (at most `timeout`
    seconds in all). Seconds alone leave it to the clients' luck: a writer stuck on another
    partition for an op timeout can commit nothing here in a 5 s hold. Answers the records
    committed meanwhile (None: the leader did not say)."""
    assert state.leader is not None
    began = time.monotonic()
    first = high_watermark(cluster, state.topic, state.partition, state.leader)
    time.sleep(hold)
    while True:
        now = high_watermark(cluster, state.topic, state.partition, state.leader)
        first = now if first is None else first  # counted from the first answer there is
        committed = None if first is None or now is None else now - first
        if (committed is not None and committed >= records) or time.monotonic() - began >= timeout:
            return committed
        time.sleep(0.5)


def data_partitions(cluster: ClusterView, topic: str | None = None, exclude: tuple[str, ...] = ()) -> list[tuple[str, int]]:
    """The partitions a fault may pick: those of `topic`, or where none is named every user
    partition but those of the topics in `exclude` and of Fabric's system channel, which
    carries no workload's data (a loss there is seen by no check: a targeted sequence that
    picked it would find nothing)."""
    if topic:
        return user_partitions(cluster, topic)
    return [(t, p) for t, p in user_partitions(cluster) if t != SYSTEM_CHANNEL and t not in exclude]


def channel_topics(cluster: ClusterView) -> tuple[str, ...]:
    """The topics of the ordering service's channels (topic = channel id), which a fault
    built to lose acknowledged writes leaves alone unless named: where a channel's partition
    loses records its OSNs had consumed, each OSN's next fetch is out of range, which halts
    the channel for good (Fabric 1.4.12's chain.go calls ErrOffsetOutOfRange unrecoverable,
    and its Broadcast still answers SUCCESS; the model does the same). A halted channel has
    no final Deliver that reaches its end, so the loss makes the verdict unknown, never
    invalid: the sequence would prove nothing where a workload partition's loss is judged."""
    variant = cluster.variant
    return tuple(variant.orderer.channels) if variant.cluster.osns else ()


def choose_partition(cluster: ClusterView, rng: random.Random, topic: str | None = None,
                     partition: int | None = None, exclude: tuple[str, ...] = (),
                     fit: Callable[[PartitionState], bool] | None = None) -> tuple[str, int]:
    """The partition named, or one picked at random among data_partitions; where `fit` is
    given, among those whose state it accepts if any does (else among all: the fault then
    says what the pick lacks). A fault's second cycle comes soon after its first has killed
    and restarted brokers, whose partitions' ISRs have not all grown back: picked blind, a
    targeted sequence's second cycle mostly found its partition's ISR short and did nothing."""
    if topic is not None and partition is not None:
        return topic, partition
    candidates = data_partitions(cluster, topic, exclude)
    if not candidates:
        raise NoTarget(f"no topic {topic} to pick a partition from" if topic else "no user topic yet")
    if fit is not None and len(candidates) > 1:
        states = partition_states(cluster)
        fitting = [c for c in candidates if c in states and fit(states[c])]
        candidates = fitting or candidates
    return rng.choice(candidates)


def raft_leader_of(cluster: ClusterView, channel: str) -> str:
    """The orderer leading `channel`'s Raft cluster now, by the orderers' own logs
    (fabric/raft_leaders.py); NoTarget on a Kafka-based network or without a leader."""
    from fabric.raft_leaders import raft_leader

    logs = {n.name: n.container.logs(tail=20000).decode(errors="replace") for n in cluster.osns}
    leader = raft_leader(logs, channel)
    if leader is None:
        raise NoTarget(f"no Raft leader of {channel} in the orderers' logs")
    return leader


def controller(cluster: ClusterView) -> str:
    """The controller broker (ZooKeeper mode) or the active controller (KRaft), by name."""
    node = cluster.controller()
    if node is None:
        raise NoTarget("no controller elected")
    return node.name


def resolve(cluster: ClusterView, spec: TargetSpec, rng: random.Random) -> tuple[list[str], dict[str, Any]]:
    """The node names `spec` designates now, and what the op should say about why."""
    detail: dict[str, Any] = {"pick": spec.pick}
    if spec.pick == "controller":
        return [controller(cluster)], detail
    if spec.pick == "raft-leader":
        channel = spec.topic or rng.choice(list(cluster.variant.orderer.channels))
        return [raft_leader_of(cluster, channel)], {**detail, "channel": channel}
    if spec.pick in COORDINATION_TOPICS:
        leader, more = coordinator(cluster, spec, rng)
        return [leader], {**detail, **more}
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
    every = cluster.by_role(spec.role)
    live = [n.name for n in every if n.alive()]
    if spec.pick == "all":
        return live, detail
    if not live:
        raise NoTarget(f"no live {spec.role} node")
    count = spec.count
    if spec.pick in ("minority", "majority"):
        # Of all the role's nodes, as Jepsen counts them (3 brokers: 1 and 2; 4: 1 and 3),
        # taken among the live ones.
        count = max(1, (len(every) - 1) // 2) if spec.pick == "minority" else len(every) // 2 + 1
    return sorted(rng.sample(live, min(count, len(live)))), detail


def elect_unclean(cluster: ClusterView, partitions: list[tuple[str, int]], timeout: float = 15.0) -> dict[str, str]:
    """Admin electLeaders(UNCLEAN) for `partitions`, as an operator of a KRaft cluster does
    for a partition already leaderless when unclean election is switched on (the
    controller only revisits those every unclean.leader.election.interval.ms). Answers, per
    "topic/partition", "elected" or Kafka's error (ELECTION_NOT_NEEDED when it has a leader)."""
    from confluent_kafka import ElectionType, TopicPartition

    if not partitions:
        return {}
    # Timeouts are those of socket.timeout.ms: confluent-kafka's elect_leaders (2.6.0 to 2.16.2)
    # raises SystemError for request_timeout or operation_timeout, a missing comma in its C
    # extension's keyword list (findings/confluent-kafka-elect-leaders-timeout/).
    admin = admin_client(cluster.bootstrap_servers(), **{"socket.timeout.ms": int(timeout * 1000)})
    try:
        results = admin.elect_leaders(ElectionType.UNCLEAN, [TopicPartition(t, p) for t, p in partitions]) \
            .result(timeout=timeout + 1)
    except Exception as exc:  # noqa: BLE001 - recorded: the election could not be asked for
        return {f"{t}/{p}": f"{exc.__class__.__name__}: {exc}" for t, p in partitions}
    return {f"{tp.topic}/{tp.partition}": "elected" if err is None else str(err.args[0].name() if err.args else err)
            for tp, err in results.items()}


def leaderless(cluster: ClusterView, topics: list[str]) -> list[tuple[str, int]]:
    """(topic, partition) of `topics` with no leader in the metadata now."""
    admin = admin_client(cluster.bootstrap_servers())
    found = []
    for topic in topics:
        meta = admin.list_topics(topic, timeout=10).topics.get(topic)
        if meta is not None and meta.error is None:
            found += [(topic, p) for p, part in meta.partitions.items() if part.leader < 0]
    return sorted(found)
