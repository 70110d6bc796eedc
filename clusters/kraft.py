"""KRaft's metadata quorum: which controller is active (the quorum's leader).

Which controller is active is not in what brokers tell clients: in KRaft a Metadata or
DescribeCluster answer names a random live broker as "controller" (KIP-590), and librdkafka
has no DescribeQuorum. So each controller is asked DescribeQuorum itself, on its CONTROLLER
listener (controllers answer clients there since KIP-919): only the leader answers it with
the quorum (its own id and epoch); a follower, a candidate or a voter that has lost its
leader answers NOT_LEADER_OR_FOLLOWER. That is the quorum's own word, live: there is no
active controller while none answers as the leader (an election, a lost quorum), and should
two answer as leader (an old one cut off, not resigned yet, and the one elected after it),
the newer epoch is the leader. Asking through a broker instead (kafka-python's admin
client, 3408a3a, reverted) forwards the request to the controller the broker last knew:
after a SIGKILL of the active controller each ask hung to the client's 5 s timeout for
some 20 s, so the new leader was seen too late; the controllers answer at once.

Only when no controller answers at all (all paused, killed or cut off from the host) is the
quorum read from the controllers' files instead. Each controller keeps its view in
`__cluster_metadata-0/quorum-state` (Kafka's FileQuorumStateStore, a small JSON file
rewritten at every election state it enters): the epoch, and the leader it follows or is,
once known. Those files go stale: a controller that is isolated or paused keeps an old
view, and a lone candidate keeps raising its epoch without learning a leader; so from them
the active controller is the leader a majority of the voters agree on at the newest epoch
that has one, and none while no majority agrees. That is a guess from the last states
written, which is why it is only the fallback.
"""
from __future__ import annotations

import base64
import json
import socket
import struct
import time
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

QUORUM_STATE = "/var/lib/kafka/data/__cluster_metadata-0/quorum-state"
METADATA_TOPIC = "__cluster_metadata"
DESCRIBE_TIMEOUT = 1.5  # seconds for one controller's answer (connect, send, read), all asked at once


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


# -- DescribeQuorum, asked of the controllers ----------------------------------------------
@dataclass(frozen=True)
class QuorumAnswer:
    """One controller's DescribeQuorum answer: `leader` is the leader's id when it answered
    as the quorum's leader (None when it answered an error: not the leader), at `epoch`."""

    leader: int | None
    epoch: int


class QuorumUnanswered(Exception):
    """No controller answered a DescribeQuorum (all down, paused or cut off from the host)."""


def describe_quorum_request(correlation_id: int = 1) -> bytes:
    """A framed DescribeQuorum v0 request for the metadata log's partition 0."""
    from kafka.protocol.admin import DescribeQuorumRequest

    topic = DescribeQuorumRequest.TopicData
    request = DescribeQuorumRequest(topics=[
        topic(topic_name=METADATA_TOPIC, partitions=[topic.PartitionData(partition_index=0)])])
    request.API_VERSION = 0
    request.with_header(correlation_id=correlation_id, client_id="ordeal-quorum")
    return bytes(request.encode(header=True, framed=True))


def parse_describe_quorum(payload: bytes) -> QuorumAnswer | None:
    """The answer in a DescribeQuorum v0 response (without its size frame); None when it
    cannot be read as one."""
    from kafka.protocol.admin import DescribeQuorumResponse

    try:
        response = DescribeQuorumResponse.decode(payload, version=0, header=True)
        partition = next(p for t in response.topics if t.topic_name == METADATA_TOPIC
                         for p in t.partitions if p.partition_index == 0)
    except Exception:  # noqa: BLE001 - a torn or foreign answer: none
        return None
    if response.error_code or partition.error_code or partition.leader_id < 0:
        return QuorumAnswer(None, partition.leader_epoch)  # NOT_LEADER_OR_FOLLOWER and the like
    return QuorumAnswer(partition.leader_id, partition.leader_epoch)


def ask_controller(host: str, port: int, timeout: float = DESCRIBE_TIMEOUT) -> QuorumAnswer | None:
    """One controller's DescribeQuorum answer; None when it gives none within `timeout`
    seconds (down, paused, cut off, or not listening yet)."""
    deadline = time.monotonic() + timeout

    def left() -> float:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError
        return remaining

    def read(sock: socket.socket, n: int) -> bytes:
        data = b""
        while len(data) < n:
            sock.settimeout(left())
            chunk = sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("closed")
            data += chunk
        return data

    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.settimeout(left())
            sock.sendall(describe_quorum_request())
            (size,) = struct.unpack(">i", read(sock, 4))
            return parse_describe_quorum(read(sock, size))
    except OSError:  # refused, unreachable, reset, timed out (TimeoutError is an OSError)
        return None


def asked_controllers(addresses: dict[str, tuple[str, int]],
                      timeout: float = DESCRIBE_TIMEOUT) -> dict[str, QuorumAnswer | None]:
    """Every controller's answer (None: none), asked all at once: bounded by one `timeout`."""
    with ThreadPoolExecutor(max_workers=max(1, len(addresses))) as pool:
        futures = {name: pool.submit(ask_controller, host, port, timeout) for name, (host, port) in addresses.items()}
        return {name: f.result() for name, f in futures.items()}


def described_leader(answers: dict[str, QuorumAnswer | None]) -> int | None:
    """The node id of the quorum's leader by the controllers' DescribeQuorum answers: the
    one that answered as leader (at the newest epoch, should an old leader not have resigned
    yet); None when controllers answered and none as leader. QuorumUnanswered when none
    answered at all."""
    answered = [a for a in answers.values() if a is not None]
    if not answered:
        raise QuorumUnanswered(f"no answer from {', '.join(sorted(answers)) or 'no controller'}")
    leaders = [(a.epoch, a.leader) for a in answered if a.leader is not None]
    return max(leaders)[1] if leaders else None


# -- the fallback: the controllers' quorum-state files --------------------------------------
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
    """The node id of the quorum's leader by the files (the fallback): the (epoch, leader)
    held by a majority of `voters` at the highest epoch that a majority holds; None without
    such a majority."""
    held = Counter((v.epoch, v.leader) for v in views.values() if v.leader is not None)
    agreed = [(epoch, leader) for (epoch, leader), n in held.items() if n > voters // 2]
    return max(agreed)[1] if agreed else None
