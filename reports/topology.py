"""The cluster as a networkx graph, drawn once whole and once per fault with what it cut.

Links follow who talks to whom: the metadata quorum among itself (the ZooKeeper ensemble,
or KRaft's controllers), brokers with each other and with the quorum, OSNs with brokers
(OSNs never talk to each other directly, they meet in Kafka).
"""
from __future__ import annotations

import re
from itertools import combinations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import networkx as nx  # noqa: E402

from reports.fault_intervals import FaultInterval  # noqa: E402
from reports.plots import to_data_uri  # noqa: E402

ROLES = ("zk", "controller", "kafka", "osn")
ROLE_COLOURS = {"zk": "#74c0fc", "controller": "#91a7ff", "kafka": "#ffd43b", "osn": "#b2f2bb", "other": "#dee2e6"}
MAX_PANELS = 8


def role_of(node: str) -> str:
    for role in ROLES:
        if re.fullmatch(rf"{role}\d+", node):
            return role
    return "other"


def cluster_nodes(seen: set[str], sizes: dict[str, int]) -> list[str]:
    """Per role, the node names seen in the history, else zk1..zkZ (or controller1..controllerC),
    kafka1..kafkaK, osn1..osnN from run.json (a Kafka-only history names no OSN, an
    ordering-only one no broker)."""
    counts = {"zk": sizes.get("zookeepers", 0), "controller": sizes.get("controllers", 0),
              "kafka": sizes.get("brokers", 0), "osn": sizes.get("osns", 0)}
    names = set(seen)
    for role, k in counts.items():
        if not any(role_of(n) == role for n in seen):
            names.update(f"{role}{i}" for i in range(1, k + 1))
    key = lambda n: (ROLES.index(role_of(n)) if role_of(n) in ROLES else len(ROLES), int(re.sub(r"\D", "", n) or 0), n)
    return sorted(names, key=key)


def cluster_graph(nodes: list[str]) -> nx.Graph:
    g = nx.Graph()
    for n in nodes:
        g.add_node(n, role=role_of(n))
    talks = {("zk", "zk"), ("controller", "controller"), ("kafka", "kafka"), ("kafka", "zk"), ("kafka", "controller"),
             ("osn", "kafka")}
    for a, b in combinations(nodes, 2):
        ra, rb = role_of(a), role_of(b)
        if (ra, rb) in talks or (rb, ra) in talks:
            g.add_edge(a, b)
    return g


def _layout(nodes: list[str]) -> dict[str, tuple[float, float]]:
    """Rows by role (the metadata quorum top, brokers middle, OSNs bottom), spread evenly."""
    pos = {}
    present = [role for role in ROLES + ("other",) if any(role_of(n) == role for n in nodes)]
    for row, role in enumerate(present):
        members = [n for n in nodes if role_of(n) == role]
        for i, n in enumerate(members):
            pos[n] = ((i + 1) / (len(members) + 1), -row)
    return pos


def topology_chart(nodes: list[str], faults: list[FaultInterval]) -> tuple[str | None, int]:
    """One panel for the whole cluster, then one per fault (capped); returns (PNG, faults drawn)."""
    if not nodes:
        return None, 0
    g = cluster_graph(nodes)
    pos = _layout(nodes)
    shown = faults[:MAX_PANELS]
    panels = [None] + shown
    cols = min(3, len(panels))
    rows = -(-len(panels) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.8 * cols, 2.9 * rows), squeeze=False)
    for ax in axes.flat:
        ax.axis("off")
    for ax, fault in zip(axes.flat, panels):
        cut = fault.cut_edges() if fault is not None else set()
        down = set(fault.nodes) if fault is not None and fault.kind in ("kill", "pause", "crash") else set()
        kept = [e for e in g.edges if frozenset(e) not in cut]
        severed = [tuple(e) for e in cut if all(n in pos for n in e)]
        nx.draw_networkx_edges(g, pos, edgelist=kept, ax=ax, edge_color="#adb5bd", width=0.8)
        nx.draw_networkx_edges(g, pos, edgelist=severed, ax=ax, edge_color="#e03131", style="dashed", width=1.4)
        colours = ["#495057" if n in down else ROLE_COLOURS[role_of(n)] for n in g.nodes]
        nx.draw_networkx_nodes(g, pos, ax=ax, node_color=colours, node_size=760, edgecolors="#343a40", linewidths=0.8)
        nx.draw_networkx_labels(g, pos, ax=ax, font_size=6.5,
                                font_color="#111", labels={n: n for n in g.nodes if n not in down})
        nx.draw_networkx_labels(g, pos, ax=ax, font_size=6.5, font_color="white", labels={n: n for n in down})
        if fault is None:
            ax.set_title("cluster", fontsize=9)
        else:
            verb = {"kill": "killed", "pause": "paused", "crash": "crashed"}.get(fault.kind)
            if verb:
                what = f"{verb}: {', '.join(fault.nodes)}"
            elif fault.kind == "partition":
                what = f"{len(severed)} links cut"
            else:  # nothing cut: say what was done instead
                what = fault.label if len(fault.label) <= 48 else fault.label[:47] + "…"
            ax.set_title(f"#{fault.index} {fault.kind} at {fault.start / 1e9:.1f}s\n{what}", fontsize=8)
        ax.margins(0.12)
    fig.tight_layout()
    return to_data_uri(fig), len(shown)
