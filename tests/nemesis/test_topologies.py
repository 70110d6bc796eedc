"""Topologies -> graphs of allowed links -> drop lists -> iptables scripts, without Docker."""
from __future__ import annotations

import random
from itertools import combinations

import pytest

from nemesis import topologies as T
from nemesis.partition import CHAIN, HEAL_SCRIPT, iptables_script

ZK = ["zk1", "zk2", "zk3"]
KAFKA = ["kafka1", "kafka2", "kafka3", "kafka4"]
NODES = ZK + KAFKA


def test_complete_graph_cuts_nothing() -> None:
    g = T.complete(NODES)
    assert T.cut_links(g) == []
    assert all(peers == [] for peers in T.drops(g).values())


def test_isolate_one_cuts_it_from_everyone_else_only() -> None:
    g = T.isolate(NODES, ["kafka2"])
    assert T.cut_links(g) == sorted(tuple(sorted(("kafka2", n))) for n in NODES if n != "kafka2")
    assert T.components(g) == [["kafka2"], sorted(n for n in NODES if n != "kafka2")]
    assert T.drops(g)["kafka2"] == sorted(n for n in NODES if n != "kafka2")
    assert T.drops(g)["zk1"] == ["kafka2"]


def test_isolate_refuses_unknown_nodes() -> None:
    with pytest.raises(ValueError, match="kafka9"):
        T.isolate(NODES, ["kafka9"])


def test_halves_split_into_two_cliques_deterministically() -> None:
    g = T.halves(NODES, random.Random(3))
    parts = T.components(g)
    assert parts is not None and [len(p) for p in parts] == [3, 4]
    assert sorted(sum(parts, [])) == sorted(NODES)
    assert len(T.cut_links(g)) == 3 * 4
    assert T.components(T.halves(NODES, random.Random(3))) == parts


@pytest.mark.parametrize("n", [4, 5, 6, 7, 8, 9])
def test_majorities_ring_every_node_sees_a_majority(n: int) -> None:
    nodes = [f"n{i}" for i in range(n)]
    g = T.majorities_ring(nodes, random.Random(n))
    views = {v: frozenset([v, *g.neighbors(v)]) for v in g}
    assert all(len(view) >= n // 2 + 1 for view in views.values())
    assert T.cut_links(g), "some link must be cut"
    assert T.components(g) is None  # not a clean split: the cut links describe it
    if n >= 5:
        assert len(set(views.values())) == n  # no two nodes see the same majority


def test_separate_cuts_only_between_the_sides() -> None:
    g = T.separate(NODES, ["kafka1", "kafka2"], ["kafka3"])
    assert T.cut_links(g) == [("kafka1", "kafka3"), ("kafka2", "kafka3")]
    assert g.has_edge("kafka3", "zk1") and g.has_edge("kafka1", "zk1") and g.has_edge("kafka3", "kafka4")
    with pytest.raises(ValueError, match="both sides"):
        T.separate(NODES, ["kafka1"], ["kafka1"])


def test_zk_from_brokers_keeps_the_ensemble_and_the_brokers_whole() -> None:
    g = T.zk_from_brokers(NODES, ZK, KAFKA)
    assert set(T.cut_links(g)) == {tuple(sorted((z, k))) for z in ZK for k in KAFKA}
    assert T.components(g) == [ZK, KAFKA]


def test_zk_split_cuts_every_ensemble_link_and_nothing_else() -> None:
    g = T.zk_split(NODES, ZK)
    assert T.cut_links(g) == list(combinations(ZK, 2))
    assert all(g.has_edge(z, k) for z in ZK for k in KAFKA)


def test_drops_are_symmetric_so_a_restarted_end_stays_cut() -> None:
    g = T.halves(NODES, random.Random(1))
    d = T.drops(g)
    assert all(a in d[b] for a in d for b in d[a])


def test_describe_names_topology_cut_and_components() -> None:
    value = T.describe(T.isolate(NODES, ["zk1"]), "isolate")
    assert value["topology"] == "isolate"
    assert ["kafka1", "zk1"] in value["cut"]
    assert value["components"][0] == ["zk1"]
    assert "components" not in T.describe(T.separate(NODES, ["kafka1"], ["kafka2"]), "leader-from-followers")


def test_iptables_script_uses_our_chain_only_and_drops_both_ways() -> None:
    script = iptables_script(["10.0.0.21", "10.0.0.22"])
    lines = script.splitlines()
    assert lines[0] == "set -e"
    assert f"-N {CHAIN}" in lines[1]
    assert f"-I INPUT 1 -j {CHAIN}" in lines[2] and f"-C INPUT -j {CHAIN}" in lines[2]
    assert f"-I OUTPUT 1 -j {CHAIN}" in lines[3]
    assert lines[4].endswith(f"-F {CHAIN}")  # the new rules replace, never add to, the old ones
    assert [ln.split(" -A ")[1] for ln in lines[5:]] == [
        f"{CHAIN} -s 10.0.0.21 -j DROP", f"{CHAIN} -d 10.0.0.21 -j DROP",
        f"{CHAIN} -s 10.0.0.22 -j DROP", f"{CHAIN} -d 10.0.0.22 -j DROP"]
    # Nothing but our chain's rules and the two jumps to it is ever added or removed.
    assert not any(op in script for op in ("-D ", "-P ", "-X", "-t nat"))
    assert HEAL_SCRIPT.startswith(f"iptables -w 5 -F {CHAIN} ")


def test_iptables_script_without_peers_just_empties_the_chain() -> None:
    assert iptables_script([]).splitlines()[-1].endswith(f"-F {CHAIN}")
