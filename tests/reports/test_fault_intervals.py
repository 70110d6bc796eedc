"""Fault intervals: which op opens a fault, which closes it, and what a partition cuts."""
from __future__ import annotations

from reports.fault_intervals import FaultInterval, FaultTracker


def _track(*ops):
    tracker = FaultTracker()
    for i, (t, f, value) in enumerate(ops):
        tracker.feed({"index": i, "time": t, "process": "nemesis", "type": "info", "f": f, "value": value})
    return tracker.intervals


def test_partition_is_closed_by_the_next_heal():
    (iv,) = _track((10, "partition", {"components": [["a"], ["b"]]}), (20, "heal", {}))
    assert (iv.kind, iv.start, iv.end) == ("partition", 10, 20)


def test_kill_is_closed_by_start_of_the_same_node_only():
    a, b = _track((1, "kill", {"nodes": ["kafka1"]}), (2, "kill", {"nodes": ["kafka2"]}),
                  (3, "start", {"nodes": ["kafka2"]}))
    assert a.end is None and b.end == 3


def test_pause_is_closed_by_resume():
    (iv,) = _track((1, "pause", {"nodes": ["zk1"]}), (5, "resume", {"nodes": ["zk1"]}))
    assert iv.end == 5


def test_a_new_config_fault_closes_the_previous_one():
    a, b = _track((1, "config", {"unclean.leader.election.enable": True}),
                  (4, "config", {"unclean.leader.election.enable": False}))
    assert a.end == 4 and b.end is None


def test_unknown_value_shapes_still_open_an_interval():
    (iv,) = _track((1, "link-fault", "latency 200ms"))
    assert iv.kind == "link-fault" and iv.nodes == ["latency 200ms"]


def test_invoke_of_a_nemesis_op_opens_nothing():
    tracker = FaultTracker()
    tracker.feed({"index": 0, "time": 1, "process": "nemesis", "type": "invoke", "f": "kill", "value": {}})
    assert tracker.intervals == []


def test_components_cut_every_link_across_sides_and_none_within():
    iv = FaultInterval("partition", 0, None, [], [], [["zk1", "kafka1"], ["zk2", "kafka2"]], 0)
    cut = iv.cut_edges()
    assert frozenset(("zk1", "zk2")) in cut and frozenset(("zk1", "kafka1")) not in cut and len(cut) == 4


def test_explicit_cut_links_are_kept():
    iv = FaultInterval("partition", 0, None, [], [("osn1", "kafka2")], [], 0)
    assert iv.cut_edges() == {frozenset(("osn1", "kafka2"))}
