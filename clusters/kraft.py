"""KRaft's metadata quorum, read from the controllers themselves.

Which controller is active (the quorum's leader) is not in what brokers tell clients: in
KRaft a Metadata or DescribeCluster answer names a random live broker as "controller"
(KIP-590), and librdkafka has no DescribeQuorum. Each controller keeps its view of the
quorum in `__cluster_metadata-0/quorum-state` (Kafka's FileQuorumStateStore, a small JSON
file rewritten at every election state it enters): the epoch, and the leader it follows
or is, once known. A controller that is isolated or paused keeps an old view, and a lone
candidate keeps raising its epoch without learning a leader; so the active controller is
the leader a majority of the voters agree on at the newest epoch that has one, and there
is none while no majority agrees (an election, a lost quorum).
"""
from __future__ import annotations

import base64
import json
import uuid
from collections import Counter
from dataclasses import dataclass

QUORUM_STATE = "/var/lib/kafka/data/__cluster_metadata-0/quorum-state"


def new_cluster_id() -> str:
    """A cluster id as `kafka-storage random-uuid` prints one: 16 random bytes, URL-safe
    base64 without padding, drawn again while it begins with "-" (Kafka's Uuid.randomUuid
    does the same). `kafka-storage format -t -abc...` reads such an id as an option and
    exits ("argument --cluster-id/-t: expected one argument"): every controller of one
    KRaft boot in 64 then exited at once, as CI's smoke suite once met."""
    while True:
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
        if not cluster_id.startswith("-"):
            return cluster_id


@dataclass(frozen=True)
class QuorumView:
    """One controller's quorum-state: its epoch and the leader it knows there (None while
    it knows none: a candidate, or a voter that has only voted)."""

    epoch: int
    leader: int | None


def parse_quorum_state(raw: bytes) -> QuorumView | None:
    """The view in a quorum-state file; None when it cannot be read as one."""
    try:
        data = json.loads(raw)
        epoch = int(data["leaderEpoch"])
        leader = int(data.get("leaderId", -1))
    except (ValueError, KeyError, TypeError):
        return None
    return QuorumView(epoch, leader if leader >= 0 else None)


def active_leader(views: dict[str, QuorumView], voters: int) -> int | None:
    """The node id of the quorum's leader: the (epoch, leader) held by a majority of
    `voters` at the highest epoch that a majority holds; None without such a majority."""
    held = Counter((v.epoch, v.leader) for v in views.values() if v.leader is not None)
    agreed = [(epoch, leader) for (epoch, leader), n in held.items() if n > voters // 2]
    return max(agreed)[1] if agreed else None
