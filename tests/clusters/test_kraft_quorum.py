"""clusters/kraft.py without a cluster: the cluster ids it formats with, and how the
active controller is read from the controllers' quorum-state views."""
from __future__ import annotations

import base64

from clusters.kraft import QuorumView, active_leader, new_cluster_id, parse_quorum_state


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
