"""The topology picture: which nodes, which links, and one panel per fault."""
from __future__ import annotations

from reports.fault_intervals import FaultInterval
from reports.topology import MAX_PANELS, cluster_graph, cluster_nodes, topology_chart


def test_node_names_seen_in_the_history_win_over_run_json_sizes():
    assert cluster_nodes({"kafka7", "zk1"}, {"brokers": 4, "zookeepers": 3}) == ["zk1", "kafka7"]


def test_run_json_sizes_name_nodes_when_the_history_names_none():
    assert cluster_nodes(set(), {"zookeepers": 1, "brokers": 2, "osns": 1}) == ["zk1", "kafka1", "kafka2", "osn1"]


def test_osns_reach_brokers_but_not_each_other_or_zookeeper():
    g = cluster_graph(["zk1", "kafka1", "osn1", "osn2"])
    assert g.has_edge("osn1", "kafka1") and not g.has_edge("osn1", "osn2") and not g.has_edge("osn1", "zk1")


def test_one_panel_per_fault_up_to_the_cap():
    faults = [FaultInterval("kill", i, None, ["kafka1"], [], [], i) for i in range(MAX_PANELS + 3)]
    png, drawn = topology_chart(["zk1", "kafka1"], faults)
    assert png.startswith("data:image/png;base64,") and drawn == MAX_PANELS


def test_no_nodes_means_no_picture():
    assert topology_chart([], []) == (None, 0)


def test_roles_the_history_never_names_come_from_run_json():
    nodes = cluster_nodes({"osn1", "osn2"}, {"zookeepers": 1, "brokers": 1, "osns": 3})
    assert nodes == ["zk1", "kafka1", "osn1", "osn2"]


def test_a_kraft_cluster_draws_its_controllers_as_the_quorum_brokers_talk_to():
    nodes = cluster_nodes({"kafka2"}, {"zookeepers": 0, "controllers": 3, "brokers": 2, "osns": 1})
    assert nodes == ["controller1", "controller2", "controller3", "kafka2", "osn1"]
    g = cluster_graph(nodes)
    assert g.has_edge("controller1", "controller2") and g.has_edge("kafka2", "controller3")
    assert not g.has_edge("osn1", "controller1")
    png, drawn = topology_chart(nodes, [FaultInterval("partition", 1, None, [], [("controller1", "kafka2")], [], 1)])
    assert png.startswith("data:image/png;base64,") and drawn == 1
