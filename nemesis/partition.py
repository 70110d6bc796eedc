"""Network partitions: a graph of allowed links (nemesis/topologies.py) made into iptables
DROP rules inside each node's network namespace, entered from the host.

Rules live in a chain of our own, ORDEAL, jumped to first from INPUT and OUTPUT of the
node's namespace; a partition replaces the chain's content and a heal flushes it, so
healing never has to know which rules exist, and the host's own rules are never touched.
Only the peers' addresses are dropped: the host (the network's gateway) and the toxiproxy
container stay reachable, so host clients and health checks keep their path unless a
fault means to cut it (that is link_faults.py's business).
"""
from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

import networkx as nx
from pydantic import BaseModel, ConfigDict

from ground.cluster_view import ClusterView
from clusters import namespace
from clusters.node_config import BROKER_PORT, CONTROLLER_PORT, OSN_PORT, ZK_CLIENT_PORT
from ground.op import Op
from nemesis import topologies
from nemesis.fault import Fault, op
from nemesis.targets import TargetSpec, resolve, roles_hit

CHAIN = "ORDEAL"
IPT = "iptables -w 5"
PARTITIONED_ROLES = ("zookeeper", "controller", "kafka", "osn")  # toxiproxy is the clients' side, never cut here
# The port a probe connects to, per role: a refused connect proves the path as well as an open one.
PROBE_PORT = {"zookeeper": ZK_CLIENT_PORT, "controller": CONTROLLER_PORT, "kafka": BROKER_PORT, "osn": OSN_PORT}


def iptables_script(drop_ips: list[str]) -> str:
    """Shell commands that make the ORDEAL chain drop exactly `drop_ips`, both ways.
    Idempotent: creates the chain and its jumps when missing, then replaces its rules."""
    lines = [
        f"{IPT} -N {CHAIN} 2>/dev/null || true",
        f"{IPT} -C INPUT -j {CHAIN} 2>/dev/null || {IPT} -I INPUT 1 -j {CHAIN}",
        f"{IPT} -C OUTPUT -j {CHAIN} 2>/dev/null || {IPT} -I OUTPUT 1 -j {CHAIN}",
        f"{IPT} -F {CHAIN}",
    ]
    for ip in drop_ips:
        lines.append(f"{IPT} -A {CHAIN} -s {ip} -j DROP")
        lines.append(f"{IPT} -A {CHAIN} -d {ip} -j DROP")
    return "set -e\n" + "\n".join(lines) + "\n"


# Flushing a chain that was never made is not an error: nothing to heal there.
HEAL_SCRIPT = f"{IPT} -F {CHAIN} 2>/dev/null || true\n"


class Firewall:
    """Applies and heals partitions on one cluster's nodes."""

    def __init__(self, cluster: ClusterView):
        self.cluster = cluster

    def members(self) -> list[Any]:
        return [n for n in self.cluster.nodes if n.role in PARTITIONED_ROLES]

    def names(self) -> list[str]:
        return [n.name for n in self.members()]

    def apply(self, graph: nx.Graph) -> list[str]:
        """Make `graph` the network: every node of the graph drops its cut peers. A node
        that is down is skipped (its peers drop it anyway); answers the nodes changed."""
        ips = {n.name: n.ip for n in self.members()}
        changed = []
        for name, peers in topologies.drops(graph).items():
            pid = self.cluster.node(name).pid
            if pid:
                namespace.run(pid, ["sh", "-c", iptables_script([ips[p] for p in peers])])
                changed.append(name)
        return changed

    def flush(self) -> list[str]:
        """Remove every rule of ours from every running node (paused ones included)."""
        flushed = []
        for node in self.members():
            pid = node.pid
            if pid:
                namespace.run(pid, ["sh", "-c", HEAL_SCRIPT])
                flushed.append(node.name)
        return flushed

    def links(self, timeout: float = 2.0) -> dict[tuple[str, str], bool]:
        """For every ordered pair of live nodes (from, to): can `from` open a TCP connection
        to `to`'s service port, from inside its namespace? Dead peers are left out: their
        address answers nothing whatever the rules."""
        live = [n for n in self.members() if n.state in ("running", "paused")]
        pids = {n.name: n.pid for n in live}

        def probe(src: Any) -> dict[tuple[str, str], bool]:
            peers = [p for p in live if p.name != src.name]
            found = namespace.tcp_probe(pids[src.name], [(p.ip, PROBE_PORT[p.role]) for p in peers], timeout)
            return {(src.name, p.name): namespace.reachable(found[f"{p.ip}:{PROBE_PORT[p.role]}"]) for p in peers}

        result: dict[tuple[str, str], bool] = {}
        with ThreadPoolExecutor(max_workers=4) as pool:
            for part in pool.map(probe, [n for n in live if pids[n.name]]):
                result.update(part)
        return result

    def heal(self, attempts: int = 2) -> dict[str, Any]:
        """Flush everywhere, then check every link between live nodes; flush once more if
        some link is still down. Answers what a heal op records."""
        broken: list[list[str]] = []
        flushed: list[str] = []
        for _ in range(attempts):
            flushed = self.flush()
            broken = sorted(sorted(pair) for pair, up in self.links().items() if not up)
            if not broken:
                break
        dedup = sorted({tuple(p) for p in broken})
        return {"flushed": flushed, "connected": not dedup, "unreachable": [list(p) for p in dedup]}


Topology = Literal["halves", "majorities-ring", "isolate", "zk-from-brokers", "zk-split", "controller-majority"]
# The node roles a topology cuts by name, beyond its target's.
TOPOLOGY_ROLES: dict[str, set[str]] = {"zk-from-brokers": {"zookeeper"}, "zk-split": {"zookeeper"},
                                       "controller-majority": {"controller"}}


class PartitionOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    topology: Topology = "halves"
    target: TargetSpec = TargetSpec()  # whom `isolate` cuts off
    seed: int = 0


class PartitionNemesis(Fault):
    """start: cut the network into the chosen topology; stop / heal_all: flush every rule
    and check that every live node reaches every other."""

    def __init__(self, name: str, options: PartitionOptions):
        self.name = name
        super().__init__(options.seed)
        self.options = options
        self.active = False

    def roles(self) -> set[str]:
        o = self.options
        return TOPOLOGY_ROLES.get(o.topology, set()) | (roles_hit(o.target) if o.topology == "isolate" else set())

    def graph(self, rng: random.Random) -> tuple[nx.Graph, dict[str, Any]]:
        """The topology to apply now, and what the op says about its targets."""
        fw, o = Firewall(self.cluster), self.options
        names = fw.names()
        zks = [n.name for n in self.cluster.zookeepers]
        brokers = [n.name for n in self.cluster.brokers]
        if o.topology == "halves":
            return topologies.halves(names, rng), {}
        if o.topology == "majorities-ring":
            return topologies.majorities_ring(names, rng), {}
        if o.topology == "zk-split" and len(zks) > 1:
            return topologies.zk_split(names, zks), {}
        if o.topology == "controller-majority":
            active = self.cluster.controller()
            graph, cut = topologies.majority_isolated(names, [n.name for n in self.cluster.controllers], rng)
            return graph, {"nodes": cut, "active_controller": active.name if active else None}
        if o.topology in ("zk-split", "zk-from-brokers"):
            # A one-node ensemble cannot be split; cutting it from the brokers loses it all the same.
            return topologies.zk_from_brokers(names, zks, brokers), {"topology": "zk-from-brokers"}
        victims, detail = resolve(self.cluster, o.target, rng)
        return topologies.isolate(names, victims), {"nodes": victims, **detail}

    def start(self, rng: random.Random) -> Op:
        graph, detail = self.graph(rng)
        value = {**topologies.describe(graph, self.options.topology), **detail}
        self.active = True  # before the rules: a failure half-way still gets healed
        Firewall(self.cluster).apply(graph)
        return op("partition", self.name, **value)

    def stop(self) -> Op:
        value = Firewall(self.cluster).heal()
        self.active = False
        return op("heal", self.name, **value)

    def heal_all(self) -> list[Op]:
        # Always flush: rules may be left from a start that failed half-way or a crashed run.
        was_active = self.active
        healed = self.stop()
        return [healed] if was_active or not healed["value"]["connected"] else []


def partition_fault(name: str, **defaults: Any):
    def make(options: dict[str, Any]) -> PartitionNemesis:
        merged = {**defaults, **options}
        if "target" in defaults:  # options refine the default target (as process_faults'): its pick stays
            merged["target"] = {**defaults["target"], **options.get("target", {})}
        return PartitionNemesis(name, PartitionOptions.model_validate(merged))
    return make
