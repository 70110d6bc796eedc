"""clusters/kraft.py without a cluster: the cluster ids it formats with, how the active
controller is read from the controllers' DescribeQuorum answers, and (the fallback) from
their quorum-state views."""
from __future__ import annotations

import base64
import socket
import threading
import time

import pytest
from kafka.protocol.admin import DescribeQuorumRequest, DescribeQuorumResponse

from clusters.kraft import (QuorumAnswer, QuorumUnanswered, QuorumView, active_leader, ask_controller,
                            describe_quorum_request, described_leader, new_cluster_id, parse_describe_quorum,
                            parse_quorum_state)

NOT_LEADER_OR_FOLLOWER = 6


def response(leader: int, epoch: int, error: int = 0, top_error: int = 0, topic: str = "__cluster_metadata") -> bytes:
    """A DescribeQuorum v0 response as a controller writes it (header included, no size frame)."""
    t = DescribeQuorumResponse.TopicData
    answer = DescribeQuorumResponse(error_code=top_error, topics=[t(topic_name=topic, partitions=[
        t.PartitionData(partition_index=0, error_code=error, leader_id=leader, leader_epoch=epoch,
                        high_watermark=42, current_voters=[], observers=[])])])
    answer.API_VERSION = 0
    answer.with_header(correlation_id=1)
    return bytes(answer.encode(header=True))


def test_cluster_ids_are_kafka_uuids_that_kafka_storage_reads_as_a_value():
    """One id in 64 drawn plainly begins with "-", which kafka-storage format takes for an
    option: all controllers then exit at the boot. 4,000 draws meet one with certainty
    (the chance to miss is below 1e-27)."""
    ids = [new_cluster_id() for _ in range(4000)]
    assert [i for i in ids if i.startswith("-")] == []
    assert all(len(i) == 22 and len(base64.urlsafe_b64decode(i + "==")) == 16 for i in ids)
    assert len(set(ids)) == len(ids)


def test_quorum_state_files_are_read_and_a_torn_one_is_none():
    assert parse_quorum_state(b'{"leaderId":102,"leaderEpoch":7,"votedId":-1}') == QuorumView(7, 102)
    assert parse_quorum_state(b'{"leaderId":-1,"leaderEpoch":8}') == QuorumView(8, None)
    assert parse_quorum_state(b'{"leaderEp') is None


def test_the_active_controller_is_the_leader_a_majority_holds_at_the_newest_such_epoch():
    views = {"c1": QuorumView(7, 102), "c2": QuorumView(7, 102), "c3": QuorumView(5, 101)}
    assert active_leader(views, 3) == 102
    # a lone candidate at a newer epoch knows no leader: the majority's view stands
    assert active_leader({**views, "c3": QuorumView(9, None)}, 3) == 102
    # an isolated controller that still believes in an old leader is no majority
    assert active_leader({"c1": QuorumView(7, 102), "c2": QuorumView(8, None), "c3": QuorumView(8, None)}, 3) is None
    assert active_leader({"c1": QuorumView(8, 103), "c2": QuorumView(8, 103), "c3": QuorumView(7, 102)}, 3) == 103


def test_the_request_asks_for_the_metadata_logs_partition_0():
    framed = describe_quorum_request()
    assert int.from_bytes(framed[:4], "big") == len(framed) - 4
    request = DescribeQuorumRequest.decode(framed[4:], version=0, header=True)
    assert request.header.request_api_key == 55 and request.header.request_api_version == 0
    assert [(t.topic_name, [p.partition_index for p in t.partitions]) for t in request.topics] == \
        [("__cluster_metadata", [0])]


def test_only_the_leaders_answer_names_a_leader_and_an_unreadable_one_is_none():
    assert parse_describe_quorum(response(102, 7)) == QuorumAnswer(102, 7)
    # a follower or candidate answers NOT_LEADER_OR_FOLLOWER (Kafka zeroes the rest)
    assert parse_describe_quorum(response(-1, 0, error=NOT_LEADER_OR_FOLLOWER)) == QuorumAnswer(None, 0)
    assert parse_describe_quorum(response(102, 7, top_error=NOT_LEADER_OR_FOLLOWER)) == QuorumAnswer(None, 7)
    assert parse_describe_quorum(response(-1, 7)) == QuorumAnswer(None, 7)
    assert parse_describe_quorum(response(102, 7, topic="other")) is None
    assert parse_describe_quorum(response(102, 7)[:9]) is None


def test_the_leader_is_whom_the_controllers_answers_name_and_none_while_none_leads():
    follower = QuorumAnswer(None, 0)
    assert described_leader({"c1": follower, "c2": QuorumAnswer(102, 7), "c3": None}) == 102
    # SIGKILLed leader, no election yet: the others answer, none as leader -> no active controller
    assert described_leader({"c1": follower, "c2": follower, "c3": None}) is None
    # an old leader cut off that has not resigned yet, and the one elected after it
    assert described_leader({"c1": QuorumAnswer(101, 7), "c2": QuorumAnswer(102, 8), "c3": follower}) == 102
    # nobody answered at all: the caller falls back to the quorum-state files
    with pytest.raises(QuorumUnanswered):
        described_leader({"c1": None, "c2": None, "c3": None})


def serve_once(reply: bytes | None) -> tuple[str, int]:
    """A listener on localhost that reads one request and writes `reply` framed (None: it
    accepts and then says nothing, as a paused controller's kernel does)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)

    def run() -> None:
        conn, _ = server.accept()
        with conn:
            size = int.from_bytes(conn.recv(4), "big")
            conn.recv(size)
            if reply is None:
                time.sleep(3)
            else:
                conn.sendall(len(reply).to_bytes(4, "big") + reply)
        server.close()

    threading.Thread(target=run, daemon=True).start()
    return server.getsockname()


def test_a_controller_is_asked_over_its_socket_and_a_silent_one_costs_one_timeout():
    assert ask_controller(*serve_once(response(103, 4)), timeout=2) == QuorumAnswer(103, 4)
    started = time.monotonic()
    assert ask_controller(*serve_once(None), timeout=0.5) is None
    assert time.monotonic() - started < 1.5
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()
    assert ask_controller("127.0.0.1", port, timeout=0.5) is None  # refused
