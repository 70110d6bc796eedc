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


def test_heal_of_one_fault_leaves_other_faults_open():
    part, conf = _track((1, "partition", {"fault": "p", "cut": [["a", "b"]]}),
                        (2, "config", {"fault": "u", "key": "unclean.leader.election.enable", "set": True}),
                        (3, "heal", {"fault": "p", "connected": True}))
    assert part.end == 3 and conf.end is None


def test_heal_all_at_the_end_closes_every_fault():
    ivs = _track((1, "kill", {"fault": "k", "nodes": ["kafka1"]}), (2, "pause", {"fault": "z", "nodes": ["zk1"]}),
                 (9, "heal", {"all": True, "faults": ["k", "z"]}))
    assert [iv.end for iv in ivs] == [9, 9]


def test_start_without_nodes_closes_kills_of_the_same_fault():
    a, b = _track((1, "kill", {"fault": "k1", "nodes": ["kafka1"]}), (2, "kill", {"fault": "k2", "nodes": ["osn1"]}),
                  (3, "start", {"fault": "k2", "nodes": []}))
    assert a.end is None and b.end == 3


def test_labels_name_topology_setting_and_toxic():
    p, c, link = _track((1, "partition", {"topology": "halves", "components": [["a"], ["b"]]}),
                        (2, "config", {"key": "unclean.leader.election.enable", "set": True}),
                        (3, "link-fault", {"toxic": "latency", "nodes": ["kafka1"]}))
    assert p.label == "partition halves: a | b"
    assert c.label == "config unclean.leader.election.enable=true"
    assert link.label == "link-fault latency kafka1"


def test_a_disk_loss_is_open_until_its_own_heal_and_says_what_was_wiped():
    wiped = {"/var/lib/kafka": {"volume": "v", "kib": 848, "entries": {"data/t0-0": 840}}}
    other, iv = _track((1, "kill", {"fault": "kill-osn", "nodes": ["osn1"]}),
                       (2, "disk-loss", {"fault": "disk-loss", "nodes": ["kafka3"], "wiped": wiped}),
                       (3, "heal", {"fault": "kill-osn", "nodes": []}),
                       (9, "heal", {"fault": "disk-loss", "nodes": ["kafka3"], "back": True}))
    assert (iv.kind, iv.start, iv.end, iv.nodes) == ("disk-loss", 2, 9, ["kafka3"])
    assert iv.label == "disk-loss kafka3 (848 KiB wiped)"
