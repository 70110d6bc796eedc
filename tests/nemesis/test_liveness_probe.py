"""kafka-loss-probed against fakes: nodes, firewall and the HTTP probe injected. No Docker.

Probes run every 10 ms here; every wait is bounded (support.until) and every fault is healed
at the end of its test (the `fault` fixture), so no probe thread outlives a test."""
from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import networkx as nx
import pytest

from ground.variant import load_variant
from ground.fault_kinds import FAULT_KINDS
from nemesis import liveness_probe
from nemesis.liveness_probe import BY, KafkaLossProbed, LivenessOptions, http_probe
from nemesis.registry import fault_factory
from nemesis.mixed import run_schedule
from tests import support

FAST = {"probe_interval": 0.01, "probe_timeout": 0.01, "failure_threshold": 3}


class FakeNode(support.FakeNode):
    """Its verbs also go into the cluster's one list of events, in the order they happened."""

    def __init__(self, name: str, role: str, ip: str, events: list[tuple[str, str]], lock: threading.Lock):
        super().__init__(name, role, ip)
        self._events, self._lock = events, lock

    def _verb(self, verb: str) -> None:
        with self._lock:
            self.calls.append(verb)
            self._events.append((verb, self.name))


class FakeCluster(support.FakeCluster):
    def __init__(self, brokers: int = 3, osns: int = 3):
        self.events: list[tuple[str, str]] = []
        self.lock = threading.Lock()
        specs = [("zk1", "zookeeper")] + [(f"kafka{i}", "kafka") for i in range(1, brokers + 1)] \
            + [(f"osn{i}", "osn") for i in range(1, osns + 1)]
        super().__init__([FakeNode(name, role, f"10.0.0.{i}", self.events, self.lock)
                          for i, (name, role) in enumerate(specs, start=2)])

    def by_ip(self, ip: str) -> FakeNode:
        return next(n for n in self.nodes if n.ip == ip)


class FakeFirewall:
    def __init__(self, cluster: FakeCluster):
        self.cluster = cluster
        self.applied: list[nx.Graph] = []
        self.heals = 0

    def names(self) -> list[str]:
        return [n.name for n in self.cluster.nodes]

    def apply(self, graph: nx.Graph) -> list[str]:
        self.applied.append(graph)
        return sorted(graph)

    def heal(self) -> dict:
        self.heals += 1
        return {"flushed": self.names(), "connected": True, "unreachable": []}


class FakeProbe:
    """probe(ip, timeout): healthy per `health(node)`; every probe logged as an event."""

    def __init__(self, cluster: FakeCluster, health: Callable[[FakeNode], bool]):
        self.cluster, self.health = cluster, health
        self.count: dict[str, int] = {}

    def __call__(self, ip: str, timeout: float) -> bool:
        node = self.cluster.by_ip(ip)
        assert node.role == "osn", "only OSNs are probed"
        assert 0 < timeout <= 1
        with self.cluster.lock:
            self.count[node.name] = self.count.get(node.name, 0) + 1
            self.cluster.events.append(("probe", node.name))
        return node.state == "running" and self.health(node)


class Rig:
    def __init__(self, health: Callable[[FakeNode], bool], *, bind: bool = True, **options):
        self.cluster = FakeCluster()
        self.firewall = FakeFirewall(self.cluster)
        self.probe = FakeProbe(self.cluster, health)
        self.recorded: list[dict] = []
        self.fault = KafkaLossProbed(LivenessOptions(**{**FAST, **options}), probe=self.probe,
                                     firewall=lambda cluster: self.firewall)
        self.fault.setup(self.cluster)
        if bind:
            self.fault.bind_recorder(self.recorded.append)

    def ops(self, f: str, node: str | None = None) -> list[dict]:
        return [o for o in list(self.recorded) if o["f"] == f and (node is None or o["value"]["nodes"] == [node])]

    def probes(self, name: str) -> int:
        with self.cluster.lock:
            return self.probe.count.get(name, 0)


@pytest.fixture
def rigs() -> Iterator[Callable[..., Rig]]:
    made: list[Rig] = []

    def make(health: Callable[[FakeNode], bool], **kw) -> Rig:
        made.append(Rig(health, **kw))
        return made[-1]

    yield make
    for rig in made:
        rig.fault.heal_all()
        assert not rig.fault.probing


def test_restarts_a_node_after_threshold_failures_in_a_row(rigs) -> None:
    rig = rigs(lambda node: node.name != "osn1")
    started = rig.fault.invoke({"f": "start", "fault": "kafka-loss-probed"})
    assert started["f"] == "partition" and started["value"]["nodes"] == ["osn1", "osn2", "osn3"]
    support.until(lambda: rig.ops("start", "osn1"), 5.0, step=0.005, what="osn1 started again")
    kill, start = rig.ops("kill", "osn1")[0], rig.ops("start", "osn1")[0]
    assert kill["value"] == {"fault": "kafka-loss-probed", "nodes": ["osn1"], "by": BY, "failures": 3}
    assert start["value"] == {"fault": "kafka-loss-probed", "nodes": ["osn1"], "by": BY}
    assert rig.recorded.index(kill) < rig.recorded.index(start)
    with rig.cluster.lock:
        osn1 = [verb for verb, name in rig.cluster.events if name == "osn1"]
    assert osn1[:5] == ["probe", "probe", "probe", "kill", "start"]
    assert rig.cluster.node("osn2").calls == rig.cluster.node("osn3").calls == []
    healed = rig.fault.invoke({"f": "stop", "fault": "kafka-loss-probed"})
    assert healed["f"] == "heal" and healed["value"]["probes"]["osn1"]["restarts"] >= 1
    assert "liveness_ops" not in healed["value"]  # bound: recorded as they happened


def test_failures_must_be_in_a_row(rigs) -> None:
    # Every other probe of osn1 fails: never three in a row, never a restart.
    flip = {"n": 0}

    def health(node: FakeNode) -> bool:
        if node.name != "osn1":
            return True
        flip["n"] += 1
        return flip["n"] % 2 == 0

    rig = rigs(health)
    rig.fault.start(rig.fault.rng)
    support.until(lambda: rig.probes("osn1") >= 12, 5.0, step=0.005, what="12 probes of osn1")
    rig.fault.stop()
    assert rig.ops("kill") == [] and rig.cluster.node("osn1").calls == []


def test_no_restart_while_healthy(rigs) -> None:
    rig = rigs(lambda node: True)
    rig.fault.start(rig.fault.rng)
    support.until(lambda: all(rig.probes(n) >= 5 for n in ("osn1", "osn2", "osn3")), 5.0, step=0.005,
                  what="5 probes of every OSN")
    healed = rig.fault.stop()
    assert rig.recorded == []
    assert all(n.calls == [] for n in rig.cluster.nodes)
    assert all(s["failed"] == 0 and s["restarts"] == 0 for s in healed["value"]["probes"].values())


def test_never_starts_a_node_that_exited_by_itself(rigs) -> None:
    rig = rigs(lambda node: False)
    rig.cluster.node("osn2").crash()
    rig.fault.start(rig.fault.rng)
    support.until(lambda: rig.ops("start", "osn1") and rig.ops("start", "osn3") and rig.probes("osn2") >= 3,
                  5.0, step=0.005, what="osn1 and osn3 started again, 3 probes of osn2")
    more = rig.probes("osn1") + 3  # another threshold's worth of probes of the others, osn2's prober could have acted in
    support.until(lambda: rig.probes("osn1") >= more, 5.0, step=0.005, what="3 more probes of osn1")
    assert rig.cluster.node("osn2").calls == [] and rig.cluster.node("osn2").state == "exited"
    assert rig.probes("osn2") == 3  # left alone at its first threshold, no longer probed
    healed = rig.fault.stop()
    assert healed["value"]["exited_by_themselves"] == ["osn2"]
    assert rig.cluster.node("osn2").calls == []  # stop does not start it either: the crash stays visible


def test_fabric_cascade_restart_then_crash_stays_down_until_heal_all(rigs) -> None:
    """Fabric 1.4.12: the first probe a restarted orderer answers without a Kafka producer
    kills it. The prober restarts each OSN once and never again; heal_all starts them."""

    def health(node: FakeNode) -> bool:
        if "start" in node.calls:  # restarted during the cut: no producer, nil pointer
            node.crash()
        return False

    rig = rigs(health)
    rig.fault.start(rig.fault.rng)
    osns = ["osn1", "osn2", "osn3"]
    support.until(lambda: all(rig.ops("start", n) for n in osns), 5.0, step=0.005, what="every OSN started again")
    support.until(lambda: not rig.fault.probing, 5.0, step=0.005,
                  what="every prober to find its node gone and stop")
    assert all(rig.cluster.node(n).calls == ["kill", "start"] for n in osns)
    assert all(rig.cluster.node(n).state == "exited" and not rig.cluster.node(n).expected_down for n in osns)
    healed = rig.fault.stop()
    assert healed["value"]["exited_by_themselves"] == osns
    assert all(rig.cluster.node(n).state == "exited" for n in osns)
    ops = rig.fault.heal_all()
    assert [o["f"] for o in ops] == ["start"] and ops[0]["value"]["nodes"] == osns
    assert all(rig.cluster.node(n).state == "running" for n in osns)


def test_stop_heals_the_partition_and_ends_probing(rigs) -> None:
    rig = rigs(lambda node: True)
    rig.fault.start(rig.fault.rng)
    graph = rig.firewall.applied[-1]
    osns, brokers = ["osn1", "osn2", "osn3"], ["kafka1", "kafka2", "kafka3"]
    assert not any(graph.has_edge(o, b) for o in osns for b in brokers)  # every OSN cut from every broker
    assert all(graph.has_edge(a, b) for a in brokers + ["zk1"] for b in brokers + ["zk1"] if a != b)
    assert all(graph.has_edge(a, b) for a in osns for b in osns + ["zk1"] if a != b)
    support.until(lambda: rig.probes("osn1") >= 2, 5.0, step=0.005, what="2 probes of osn1")
    probers = list(rig.fault._threads)
    healed = rig.fault.stop()
    assert rig.firewall.heals == 1 and healed["value"]["connected"] is True
    assert not rig.fault.probing and not rig.fault.active
    assert probers and not any(t.is_alive() for t in probers)  # ended, not merely forgotten: none probes again


def test_heal_all_ends_probing_heals_and_starts_every_down_osn(rigs) -> None:
    rig = rigs(lambda node: True)
    rig.fault.start(rig.fault.rng)
    support.until(lambda: rig.probes("osn3") >= 2, 5.0, step=0.005, what="2 probes of osn3")
    rig.cluster.node("osn3").crash()
    ops = rig.fault.heal_all()
    assert [o["f"] for o in ops] == ["heal", "start"]
    assert ops[1]["value"] == {"fault": "kafka-loss-probed", "nodes": ["osn3"], "by": "heal"}
    assert not rig.fault.probing and rig.firewall.heals == 1
    assert rig.cluster.node("osn3").state == "running"
    assert rig.fault.heal_all() == [] and rig.firewall.heals == 2  # idempotent: always flushes, nothing to say


def test_heal_all_right_after_setup_touches_nothing_but_the_rules(rigs) -> None:
    rig = rigs(lambda node: True)
    assert rig.fault.heal_all() == []
    assert all(n.calls == [] for n in rig.cluster.nodes) and rig.probe.count == {}


def test_without_a_recorder_the_ops_come_with_stop_and_heal_all(rigs) -> None:
    rig = rigs(lambda node: node.name != "osn1", bind=False)
    rig.fault.start(rig.fault.rng)
    support.until(lambda: rig.cluster.node("osn1").calls[:2] == ["kill", "start"], 5.0, step=0.005,
                  what="osn1 killed and started")
    healed = rig.fault.stop()
    kept = healed["value"]["liveness_ops"]
    assert [o["f"] for o in kept][:2] == ["kill", "start"] and kept[0]["value"]["by"] == BY
    rig.fault.start(rig.fault.rng)
    support.until(lambda: rig.cluster.node("osn1").calls.count("start") >= 2, 5.0, step=0.005,
                  what="osn1 started a second time")
    ops = rig.fault.heal_all()
    assert [o["f"] for o in ops][:2] == ["kill", "start"] and ops[-1]["f"] == "heal"


def test_probing_ends_by_itself_at_the_limit() -> None:
    cluster = FakeCluster()
    fault = KafkaLossProbed(LivenessOptions(**FAST), probe=FakeProbe(cluster, lambda node: True),
                            firewall=FakeFirewall, probing_limit=0.05)
    fault.setup(cluster)
    fault.start(fault.rng)
    try:
        support.until(lambda: not fault.probing, 2, step=0.005, what="probing to end at its limit")
    finally:
        fault.heal_all()


def test_a_hung_probe_is_waited_for_and_acts_on_nothing_after_the_stop(rigs) -> None:
    release = threading.Event()

    def health(node: FakeNode) -> bool:
        release.wait(0.3)  # an answer that never comes in time
        return False

    rig = rigs(health, failure_threshold=1)
    rig.fault.start(rig.fault.rng)
    support.until(lambda: rig.probes("osn1") >= 1, 5.0, step=0.005, what="a probe of osn1")
    rig.fault.stop()
    assert not rig.fault.probing
    assert all(n.calls == [] for n in rig.cluster.nodes)  # halted mid-probe: no restart after the stop


def test_options_are_checked() -> None:
    make = fault_factory("kafka-loss-probed")
    assert isinstance(make({}), KafkaLossProbed)
    o = make({}).options
    assert (o.probe_interval, o.probe_timeout, o.failure_threshold) == (2.0, 1.0, 3)
    for bad in ({"no_such_option": 1}, {"probe_interval": 0}, {"probe_interval": 600}, {"failure_threshold": 0},
                {"probe_timeout": 3, "probe_interval": 2}, {"failure_threshold": 1000}):
        with pytest.raises(ValueError):
            make(bad)


def test_the_fault_kind_and_its_expectations() -> None:
    assert "kafka-loss-probed" in FAULT_KINDS
    for name in ("fabric-recommended", "unclean-election", "min-isr-1", "acks-1", "rf-equals-k"):
        v = load_variant(name)
        assert v.orderer.implementation == "fabric-1.4.12" and v.expected("kafka-loss-probed") == "invalid"
    model = load_variant("fabric-recommended-model")
    assert model.orderer.implementation == "model" and model.expected("kafka-loss-probed") == "valid"


def test_mixed_and_run_schedule_bind_the_recorder() -> None:
    mixed = fault_factory("mixed")({"faults": ["kafka-loss-probed", "kill-osn"]})
    seen: list[dict] = []
    mixed.bind_recorder(seen.append)
    assert mixed.parts["kafka-loss-probed"].record == seen.append
    cluster = FakeCluster()
    fault = KafkaLossProbed(LivenessOptions(**FAST), probe=FakeProbe(cluster, lambda node: node.name != "osn2"),
                            firewall=FakeFirewall)
    fault.setup(cluster)
    recorded: list[dict] = []
    run_schedule([fault], interval=0.2, duration=0.3, seed=1, record=recorded.append)
    assert not fault.probing
    fs = [(o["f"], o["value"].get("by")) for o in recorded]
    assert fs[0] == ("partition", None) and ("kill", BY) in fs and ("start", BY) in fs
    assert fs.index(("kill", BY)) < fs.index(("heal", None))  # recorded as done, inside the window


class _Healthz(BaseHTTPRequestHandler):
    status = 200

    def do_GET(self) -> None:  # noqa: N802
        self.send_response(self.status if self.path == "/healthz" else 404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.mark.parametrize("status, healthy", [(200, True), (503, False)])
def test_http_probe_is_healthy_on_200_only(monkeypatch, status: int, healthy: bool) -> None:
    handler = type("Handler", (_Healthz,), {"status": status})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        monkeypatch.setattr(liveness_probe, "OSN_OPERATIONS_PORT", server.server_address[1])
        assert http_probe("127.0.0.1", 1.0) is healthy
    finally:
        server.shutdown()
        server.server_close()
    assert http_probe("127.0.0.1", 0.5) is False  # nothing listens any more
