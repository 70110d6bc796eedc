"""Network partitions as graphs of allowed links (Jepsen's grudges, inverted).

Pure functions over node names: each answers an undirected networkx graph holding every
node and an edge for every link that stays up. Everything not an edge is cut. No Docker
here, so every shape is unit-tested; nemesis/partition.py turns a graph into iptables rules.
"""
from __future__ import annotations

import math
import random
from collections.abc import Iterable, Sequence
from itertools import combinations

import networkx as nx


def complete(nodes: Iterable[str]) -> nx.Graph:
    """Nothing cut: the healed network."""
    return nx.complete_graph(sorted(set(nodes)))


def grudge(nodes: Iterable[str], groups: Sequence[Iterable[str]]) -> nx.Graph:
    """Links stay up inside each group; every node of one group is cut from every node of
    another. Nodes named in no group keep every link (they sit on both sides)."""
    graph = complete(nodes)
    side = {n: i for i, group in enumerate(groups) for n in group}
    unknown = sorted(set(side) - set(graph))
    if unknown:
        raise ValueError(f"not nodes of the cluster: {', '.join(unknown)}")
    graph.remove_edges_from([(a, b) for a, b in list(graph.edges) if a in side and b in side and side[a] != side[b]])
    return graph


def isolate(nodes: Iterable[str], victims: Iterable[str]) -> nx.Graph:
    """The victims (together) are cut from everyone else."""
    nodes = sorted(set(nodes))
    victims = sorted(set(victims))
    return grudge(nodes, [victims, [n for n in nodes if n not in victims]])


def halves(nodes: Iterable[str], rng: random.Random) -> nx.Graph:
    """Two components from a shuffle; the first holds the smaller half (Jepsen's bisect)."""
    shuffled = sorted(set(nodes))
    rng.shuffle(shuffled)
    mid = len(shuffled) // 2
    return grudge(shuffled, [shuffled[:mid], shuffled[mid:]])


def majorities_ring(nodes: Iterable[str], rng: random.Random) -> nx.Graph:
    """Every node sees a majority, and (from five nodes on) no two see the same one: the
    nodes sit on a shuffled ring and each keeps its nearest neighbours on both sides."""
    ring = sorted(set(nodes))
    rng.shuffle(ring)
    n = len(ring)
    graph = nx.Graph()
    graph.add_nodes_from(ring)
    reach = math.ceil((n // 2) / 2)  # neighbours per side, so that 1 + 2*reach >= n//2 + 1
    for i, a in enumerate(ring):
        for step in range(1, reach + 1):
            b = ring[(i + step) % n]
            if a != b:
                graph.add_edge(a, b)
    return graph


def separate(nodes: Iterable[str], side_a: Iterable[str], side_b: Iterable[str]) -> nx.Graph:
    """Only the links between side_a and side_b are cut; both sides keep every other link
    (e.g. a partition leader cut from its followers but not from ZooKeeper)."""
    a, b = set(side_a), set(side_b)
    if a & b:
        raise ValueError(f"a node on both sides: {', '.join(sorted(a & b))}")
    return grudge(nodes, [sorted(a), sorted(b)])


def zk_from_brokers(nodes: Iterable[str], zookeepers: Iterable[str], brokers: Iterable[str]) -> nx.Graph:
    """ZooKeeper cut from every broker: sessions expire, no controller can act; the
    ensemble itself and the brokers among themselves stay connected."""
    return separate(nodes, zookeepers, brokers)


def zk_split(nodes: Iterable[str], zookeepers: Iterable[str]) -> nx.Graph:
    """Every ZooKeeper node cut from every other one: no quorum anywhere, though each is
    still reachable from the brokers."""
    nodes = sorted(set(nodes))
    graph = complete(nodes)
    graph.remove_edges_from(combinations(sorted(set(zookeepers)), 2))
    return graph


def majority_isolated(nodes: Iterable[str], quorum: Sequence[str], rng: random.Random) -> tuple[nx.Graph, list[str]]:
    """A majority of the `quorum`'s members (picked with `rng`), each cut from every other
    node, the rest included: no side holds a majority, so the quorum has no leader (KRaft's
    controllers). Answers the graph and the members cut."""
    members = sorted(set(quorum))
    cut = sorted(rng.sample(members, len(members) // 2 + 1))
    nodes = sorted(set(nodes))
    return grudge(nodes, [[m] for m in cut] + [[n for n in nodes if n not in cut]]), cut


def cut_links(graph: nx.Graph) -> list[tuple[str, str]]:
    """Every pair of nodes without a link, sorted."""
    return sorted(tuple(sorted(e)) for e in nx.non_edges(graph))


def components(graph: nx.Graph) -> list[list[str]] | None:
    """The sides of a clean split (each connected component a clique), or None when the
    graph is not one (a ring, one-sided cuts): then the cut links alone describe it."""
    parts = [sorted(c) for c in nx.connected_components(graph)]
    for part in parts:
        k = len(part)
        if graph.subgraph(part).number_of_edges() != k * (k - 1) // 2:
            return None
    return sorted(parts, key=lambda p: (len(p), p))


def drops(graph: nx.Graph) -> dict[str, list[str]]:
    """Per node, the peers whose traffic it drops. Both ends of a cut link drop it, so the
    cut outlives a restart of either end (a restarted container gets a fresh namespace)."""
    return {n: sorted(p for p in graph if p != n and not graph.has_edge(n, p)) for n in sorted(graph)}


def describe(graph: nx.Graph, topology: str) -> dict:
    """The part of a partition op's value that says what was cut (reports read
    `components` and `cut`)."""
    value: dict = {"topology": topology, "cut": [list(e) for e in cut_links(graph)]}
    parts = components(graph)
    if parts is not None and len(parts) > 1:
        value["components"] = parts
    return value
