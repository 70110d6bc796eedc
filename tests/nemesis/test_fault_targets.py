"""Each fault hits what it names and its heal undoes it, on a real cluster (issue 41, item 3).

Every fault kind of ground/variant.py FAULT_KINDS, and the coordinator faults txn-mixed draws
from, is built from the registry with its scenario's options (scenarios/<kind>.toml) and
started with a fixed seed. Before the start, Kafka itself is asked whom the fault must hit: the
partition leaders from metadata, the controller (Metadata's controller id in ZooKeeper mode,
DescribeQuorum of each KRaft controller), the coordinator of each transactional id and group
of the kafka-txn workload (FindCoordinator, asked of every broker). The fault's op says which
partition, key or node it chose; the test checks that this is whom Kafka named and that the real
state agrees: Docker's state of every container (exactly the victim killed or paused), TCP
connects from inside each node's namespace (exactly the links the fault names are cut),
toxiproxy's own list of toxics, ZooKeeper's `srvr`, a wiped disk's marker gone. Then the
fault's stop is checked to have undone it: the node runs and serves, every link is up, the
victim is back in the ISR of its partitions, the cluster is whole again.

Two clusters from the plugin's pool, in this order: fabric-recommended (ZooKeeper mode, 3.9.2,
Fabric's orderer), then kraft-recommended (KRaft 4.4.0: 3 controllers). The full targeted
sequence (targeted-isr-shrink's kill and unclean election) and unclean-toggle are proven by
tests/nemesis/test_chaos.py and tests/clusters/test_kraft.py; here only targeted-isr-shrink's
cut is checked against Kafka's ISR.
"""
from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import requests
from confluent_kafka.admin import NewTopic

from clusters import namespace
from clusters.health import admin_client, ensemble_has_leader, zookeeper_mode
from clusters.kafka_topics import create_topics
from clusters.node_config import CONTROLLER_ID_BASE, CONTROLLER_PORT
from ground.variant import load_variant
from ground.fault_kinds import FAULT_KINDS
from ground.kafka_names import GROUP_PREFIX, TRANSACTIONAL_ID_PREFIX
from harness.scenario import load_scenario, scenario_path
from nemesis.link_faults import remove_toxics
from nemesis.partition import PROBE_PORT, Firewall
from nemesis.registry import fault_factory
from nemesis.targets import TargetSpec
from tests.nemesis.probes import api_versions_round_trip, read_exactly
from tests.support import until

pytestmark = [pytest.mark.cluster, pytest.mark.chaos]

SEED = 7          # every start's seed: one fixed, replayable choice per fault
TOPIC = "fault-targets"  # a workload-like topic: the loss faults leave channels alone
WHOLE_TIMEOUT = 150.0  # seconds for a healed cluster to be whole again (a restarted broker's ISR)
PROBE_TIMEOUT = 1.0    # a TCP connect on the cluster's bridge answers in well under this
KEYS = TargetSpec().keys  # the coordinator faults pick among the workload's first ids and groups
MARKER = "ordeal-fault-targets-marker"


# -- Kafka's own answers, by raw requests (librdkafka has neither FindCoordinator for a
# transactional id nor DescribeQuorum) -----------------------------------------------------

def _string(text: str) -> bytes:
    raw = text.encode()
    return struct.pack(">h", len(raw)) + raw


def _uvarint(buf: bytes, at: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        byte = buf[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, at
        shift += 7


def _request(address: str, api_key: int, version: int, body: bytes, flexible: bool, timeout: float) -> bytes:
    """One request, its response body (the header read past). A flexible version's request
    header carries an empty tagged-field section, and so does its response header."""
    host, port = address.rsplit(":", 1)
    header = struct.pack(">hhi", api_key, version, 41) + _string("ordeal-fault-targets") + (b"\x00" if flexible else b"")
    with socket.create_connection((host, int(port)), timeout=timeout) as s:
        s.settimeout(timeout)
        s.sendall(struct.pack(">i", len(header + body)) + header + body)
        size, correlation = struct.unpack(">ii", read_exactly(s, 8))
        rest = read_exactly(s, size - 4)
    assert correlation == 41
    return rest[_uvarint(rest, 0)[1]:] if flexible else rest


def find_coordinator(address: str, key: str, key_type: int, timeout: float = 5.0) -> tuple[int, int]:
    """FindCoordinator v2 for a group (key_type 0) or a transactional id (1): (error code,
    node id). The broker answers from its own metadata: the leader of the key's partition of
    __consumer_offsets / __transaction_state (which the first such request creates)."""
    rest = _request(address, 10, 2, _string(key) + struct.pack(">b", key_type), False, timeout)
    _throttle, error, message = struct.unpack(">ihh", rest[:8])
    at = 8 + max(message, 0)
    return error, struct.unpack(">i", rest[at:at + 4])[0]


def describe_quorum(address: str, timeout: float = 2.0) -> tuple[int, int]:
    """DescribeQuorum v0 of __cluster_metadata-0, asked of one controller: (error code, leader
    id). Only the quorum's leader answers error 0; the others NOT_LEADER_OR_FOLLOWER (6)."""
    topic = b"__cluster_metadata"
    body = b"\x02" + bytes([len(topic) + 1]) + topic + b"\x02" + struct.pack(">i", 0) + b"\x00\x00\x00"
    rest = _request(address, 55, 0, body, True, timeout)
    (error,) = struct.unpack(">h", rest[:2])
    topics, at = _uvarint(rest, 2)
    if error or topics < 2:
        return error or -1, -1
    name, at = _uvarint(rest, at)
    parts, at = _uvarint(rest, at + name - 1)
    if parts < 2:
        return -1, -1
    _index, error, leader = struct.unpack(">ihi", rest[at:at + 10])
    return error, leader


def quorum_leader(cluster: Any) -> str | None:
    """KRaft's active controller as the quorum answers it; None while no controller (or more
    than one) answers as leader."""
    leaders = set()
    for node in cluster.controllers:
        try:
            error, leader = describe_quorum(f"{node.ip}:{CONTROLLER_PORT}")
        except OSError:
            continue
        if error == 0:
            leaders.add(f"controller{leader - CONTROLLER_ID_BASE}")
    return leaders.pop() if len(leaders) == 1 else None


def coordinator_of(cluster: Any, key: str, key_type: int, timeout: float = 60.0) -> str:
    """The broker every broker names as the coordinator of `key` (asked until they agree)."""
    deadline = time.monotonic() + timeout
    while True:
        answers = {b.name: find_coordinator(cluster.proxy_address(b), key, key_type) for b in cluster.brokers}
        nodes = {node for error, node in answers.values() if error == 0}
        if len(nodes) == 1 and all(error == 0 for error, _ in answers.values()):
            return f"kafka{nodes.pop()}"
        assert time.monotonic() < deadline, f"brokers do not agree on the coordinator of {key}: {answers}"
        time.sleep(0.5)


@dataclass
class KafkaSays:
    """Whom Kafka names, asked just before a fault starts."""

    leaders: dict[tuple[str, int], str | None]
    replicas: dict[tuple[str, int], list[str]]
    isr: dict[tuple[str, int], list[str]]
    controller: str | None
    coordinators: dict[str, str] = field(default_factory=dict)  # "txn:<id>" / "group:<group>" -> broker

    def target(self, value: dict[str, Any]) -> str | None:
        """The node a fault's op must name for its pick (None for a random pick)."""
        pick = value.get("pick")
        if pick in ("leader", "sole-in-sync"):
            return self.leaders[(value["topic"], value["partition"])]
        if pick == "controller":
            return self.controller
        if pick == "txn-coordinator":
            return self.coordinators[f"txn:{value['key']}"]
        if pick == "group-coordinator":
            return self.coordinators[f"group:{value['key']}"]
        return None


def ask_kafka(cluster: Any, coordinators: bool = False) -> KafkaSays:
    meta = admin_client(cluster.bootstrap_servers()).list_topics(timeout=10)
    parts = {(t, p): part for t, topic in meta.topics.items() for p, part in topic.partitions.items()}
    if cluster.kraft:
        boss = quorum_leader(cluster)
    else:
        boss = f"kafka{meta.controller_id}" if meta.controller_id >= 0 else None
    says = KafkaSays({tp: f"kafka{p.leader}" if p.leader >= 0 else None for tp, p in parts.items()},
                     {tp: [f"kafka{r}" for r in p.replicas] for tp, p in parts.items()},
                     {tp: [f"kafka{r}" for r in p.isrs] for tp, p in parts.items()}, boss)
    if coordinators:
        for n in range(KEYS):
            says.coordinators[f"txn:{TRANSACTIONAL_ID_PREFIX}-{n}"] = coordinator_of(
                cluster, f"{TRANSACTIONAL_ID_PREFIX}-{n}", 1)
            says.coordinators[f"group:{GROUP_PREFIX}-c{n}"] = coordinator_of(cluster, f"{GROUP_PREFIX}-c{n}", 0)
    return says


# -- the real state ----------------------------------------------------------------------

def docker_states(cluster: Any) -> dict[str, str]:
    return {n.name: n.state for n in cluster.nodes}


def changed(before: dict[str, str], after: dict[str, str]) -> dict[str, str]:
    return {name: state for name, state in after.items() if before.get(name) != state}


def cut_links(cluster: Any, sources: list[str] | None = None) -> set[tuple[str, str]]:
    """Ordered (from, to) pairs of live nodes where `from` cannot open a TCP connection to
    `to`'s service port from inside its own namespace (a DROP rule times the connect out; a
    paused peer's kernel still answers)."""
    live = [n for n in cluster.nodes if n.role in PROBE_PORT and n.state in ("running", "paused")]
    pids = {n.name: n.pid for n in live}

    def probe(src: Any) -> set[tuple[str, str]]:
        peers = [p for p in live if p.name != src.name]
        seen = namespace.tcp_probe(pids[src.name], [(p.ip, PROBE_PORT[p.role]) for p in peers], PROBE_TIMEOUT)
        return {(src.name, p.name) for p in peers if not namespace.reachable(seen[f"{p.ip}:{PROBE_PORT[p.role]}"])}

    chosen = [n for n in live if sources is None or n.name in sources]
    with ThreadPoolExecutor(max_workers=len(chosen) or 1) as pool:  # all at once: most of a probe is waiting
        return set().union(*pool.map(probe, chosen))


def between(side_a: list[str], side_b: list[str]) -> set[tuple[str, str]]:
    """Every ordered pair across the two sides."""
    return {(a, b) for a in side_a for b in side_b} | {(b, a) for a in side_a for b in side_b}


def partitioned(cluster: Any) -> list[str]:
    return [n.name for n in cluster.nodes if n.role in PROBE_PORT]


def own_metadata(cluster: Any, broker: Any, tries: int = 10) -> Any | None:
    """Metadata as `broker` itself answers it (librdkafka may ask another broker it learnt
    of: the answering broker is checked), or None."""
    address = cluster.proxy_address(broker)
    for _ in range(tries):
        try:
            meta = admin_client(address).list_topics(timeout=5)
        except Exception:  # noqa: BLE001 - not answering yet
            return None
        if meta.orig_broker_name.startswith(f"{address}/"):
            return meta
    return None


def serves(cluster: Any, node: Any) -> bool:
    """The node's new process does its job: a broker answers and is in the ISR of every
    partition it replicates as its own metadata says, a controller answers DescribeQuorum,
    a ZooKeeper node serves in the ensemble, an OSN reports healthy."""
    if node.state != "running":
        return False
    if node.role == "kafka":
        if api_versions_round_trip(cluster.proxy_address(node), timeout=2) is None:
            return False
        meta = own_metadata(cluster, node)
        return meta is not None and node.node_id in meta.brokers and all(
            node.node_id in p.isrs for t in meta.topics.values() for p in t.partitions.values()
            if node.node_id in p.replicas)
    if node.role == "controller":
        try:
            return describe_quorum(f"{node.ip}:{CONTROLLER_PORT}")[0] in (0, 6)
        except OSError:
            return False
    if node.role == "zookeeper":
        return zookeeper_mode(node.ip) in ("leader", "follower", "standalone")
    if node.role == "osn":
        return bool(cluster.osn_healthy(node))
    return True


def not_whole(cluster: Any) -> str | None:
    """Why the cluster is not whole (None when it is): a node not running, no metadata quorum
    leader, a broker missing from the metadata, a partition without a leader or with a
    replica out of its ISR, an OSN not healthy."""
    stopped = sorted(n.name for n in cluster.nodes if n.state != "running")
    if stopped:
        return f"not running: {stopped}"
    if cluster.kraft and quorum_leader(cluster) is None:
        return "no KRaft quorum leader"
    if not cluster.kraft and not ensemble_has_leader([z.ip for z in cluster.zookeepers]):
        return "no ZooKeeper leader"
    try:
        meta = admin_client(cluster.bootstrap_servers()).list_topics(timeout=10)
    except Exception as exc:  # noqa: BLE001 - said, and asked again
        return f"no metadata: {exc}"
    missing = {b.node_id for b in cluster.brokers} - set(meta.brokers)
    if missing:
        return f"brokers not listed: {sorted(missing)}"
    short = sorted(f"{t}/{p}" for t, topic in meta.topics.items() for p, part in topic.partitions.items()
                   if part.leader < 0 or set(part.isrs) != set(part.replicas))
    if short:
        return f"{len(short)} partitions without a leader or a full ISR, e.g. {short[:3]}"
    unhealthy = [n.name for n in cluster.osns if not cluster.osn_healthy(n)]
    return f"OSNs not healthy: {unhealthy}" if unhealthy else None


def assert_whole(cluster: Any, timeout: float = WHOLE_TIMEOUT) -> None:
    reason = not_whole(cluster)
    deadline = time.monotonic() + timeout
    while reason is not None and time.monotonic() < deadline:
        time.sleep(0.5)
        reason = not_whole(cluster)
    assert reason is None, f"{cluster.variant.name} not whole {timeout:.0f} s after the heal: {reason}"


def toxics(cluster: Any) -> dict[str, list[str]]:
    """toxiproxy's own list: proxy name -> its toxics' types."""
    proxies = requests.get(f"{cluster.toxiproxy_api()}/proxies", timeout=5).json()
    return {name: sorted(t["type"] for t in proxy.get("toxics", [])) for name, proxy in proxies.items()}


# -- fixtures ------------------------------------------------------------------------------

def scenario_options(kind: str) -> dict[str, Any]:
    """The options the fault kind's scenario gives it; the coordinator faults have no scenario
    of their own and run with their defaults, as txn-mixed draws them."""
    if not scenario_path(kind).exists():
        return {}
    return load_scenario(kind).nemesis.options.get(kind, {})


def prepared(cluster: Any, coordinators: bool) -> Any:
    """The cluster with a workload topic and, where the coordinator faults run, both
    coordinators' internal topics (the first FindCoordinator of each kind creates them), whole."""
    k = cluster.variant.kafka
    create_topics(cluster.bootstrap_servers(), [NewTopic(TOPIC, 4, k.replication_factor,
                                                         config={"min.insync.replicas": str(k.min_insync_replicas)})])
    if coordinators:
        coordinator_of(cluster, f"{TRANSACTIONAL_ID_PREFIX}-0", 1, timeout=120)
        coordinator_of(cluster, f"{GROUP_PREFIX}-c0", 0, timeout=120)
    assert_whole(cluster)
    return cluster


@pytest.fixture(scope="module")
def zk_cluster(cluster_pool: Any) -> Any:
    return prepared(cluster_pool.get(load_variant("fabric-recommended")), coordinators=True)


@pytest.fixture(scope="module")
def kraft_cluster(cluster_pool: Any) -> Any:
    return prepared(cluster_pool.get(load_variant("kraft-recommended")), coordinators=False)


def restore(cluster: Any) -> None:
    """Whatever a failed test left: no rule, no toxic, every node running."""
    Firewall(cluster).flush()
    remove_toxics(cluster)
    for node in cluster.nodes:
        if node.state == "paused":
            node.resume()
        elif node.state != "running":
            node.start()


@pytest.fixture
def build(request: pytest.FixtureRequest) -> Iterator[Callable[..., Any]]:
    """build(kind, cluster) -> the fault of `kind` with its scenario's options, set up on the
    cluster. A test that failed leaves it healed (heal_all, then anything left undone); one
    that passed has checked its stop undid everything, and the cluster is whole."""
    made: list[tuple[Any, Any]] = []
    failed_before = request.session.testsfailed

    def make(kind: str, cluster: Any) -> Any:
        fault = fault_factory(kind)(scenario_options(kind))
        fault.setup(cluster)
        made.append((fault, cluster))
        return fault

    yield make
    if request.session.testsfailed == failed_before:
        return
    for fault, cluster in made:
        try:
            fault.heal_all()
        finally:
            restore(cluster)


def start(fault: Any, kind: str, seed: int = SEED) -> dict[str, Any]:
    return fault.invoke({"f": "start", "fault": kind, "seed": seed})


def stop(fault: Any, kind: str) -> dict[str, Any]:
    return fault.invoke({"f": "stop", "fault": kind})


# -- what each shape of fault must have done, and undone -------------------------------------

PROCESS = {  # fault -> (the Docker state its start leaves the victim in, the op its stop answers)
    **{name: ("exited", "start") for name in ("kill-broker", "kill-leader", "kill-controller", "kill-osn",
                                              "kill-txn-coordinator", "kill-group-coordinator")},
    **{name: ("paused", "resume") for name in ("pause-broker", "pause-controller", "pause-osn",
                                               "pause-txn-coordinator", "pause-group-coordinator",
                                               "pause-txn-coordinator")},
}
ROLE = {"kill-osn": "osn", "pause-osn": "osn"}  # random picks; the others' random pick is a broker
ISOLATE = ("isolate-leader", "isolate-controller", "isolate-txn-coordinator", "isolate-group-coordinator")


def victim_of(cluster: Any, says: KafkaSays, name: str, done: dict[str, Any]) -> str:
    """The one node the op names, checked against whom Kafka named for its pick."""
    value = done["value"]
    assert len(value["nodes"]) == 1, done
    victim = value["nodes"][0]
    named = says.target(value)
    if value.get("pick", "random") == "random":
        assert cluster.node(victim).role == ROLE.get(name, "kafka"), done
    else:
        assert named is not None, f"Kafka names no {value['pick']} for {value}"
        assert victim == named, f"{name} hit {victim}; Kafka named {named} as the {value['pick']} ({value})"
    return victim


def hit(cluster: Any, says: KafkaSays, before: dict[str, str], name: str, done: dict[str, Any]) -> Callable[
        [dict[str, Any]], None]:
    """Check that the started fault `name` (its op `done`) hit whom Kafka named and nothing
    else; answer the check of its stop's op."""
    assert done["value"]["fault"] == name, done
    if name in PROCESS:
        state, undo = PROCESS[name]
        victim = victim_of(cluster, says, name, done)
        assert changed(before, docker_states(cluster)) == {victim: state}, (done, docker_states(cluster))

        def healed(undone: dict[str, Any]) -> None:
            assert undone["f"] == undo and undone["value"]["nodes"] == [victim], undone
            until(lambda: serves(cluster, cluster.node(victim)), WHOLE_TIMEOUT, step=0.5, what=f"{victim} to serve")
        return healed
    if name in ISOLATE or name == "partition-halves":
        if name == "partition-halves":
            sides = done["value"]["components"]
            assert sorted(n for side in sides for n in side) == sorted(partitioned(cluster)) and len(sides) == 2, done
            assert abs(len(sides[0]) - len(sides[1])) <= 1, done
            expected = between(*sides)
        else:
            victim = victim_of(cluster, says, name, done)
            expected = between([victim], [n for n in partitioned(cluster) if n != victim])
        assert done["f"] == "partition" and changed(before, docker_states(cluster)) == {}, done
        cut = cut_links(cluster)
        assert cut == expected, f"{name}: cut but not named {sorted(cut - expected)}, named but up " \
                                f"{sorted(expected - cut)}"

        def reconnected(undone: dict[str, Any]) -> None:
            assert undone["f"] == "heal" and undone["value"]["connected"] is True, undone
            assert cut_links(cluster) == set()
        return reconnected
    if name == "link-faults":
        victim = victim_of(cluster, says, name, done)
        kind = done["value"]["toxic"]
        assert {p: t for p, t in toxics(cluster).items() if t} == {victim: [kind]}, toxics(cluster)
        trip = api_versions_round_trip(cluster.proxy_address(cluster.node(victim)), timeout=3)
        if kind in ("timeout", "reset_peer"):
            assert trip is None, f"{victim} answered through its {kind} toxic in {trip} s"
        elif kind == "latency":
            assert trip is not None and trip >= done["value"]["attributes"]["latency"] / 1000 * 0.8, trip
        others = [b for b in cluster.brokers if b.name != victim]
        assert all(api_versions_round_trip(cluster.proxy_address(b), timeout=3) is not None for b in others)

        def cleared(undone: dict[str, Any]) -> None:
            assert undone["f"] == "heal" and undone["value"]["toxics_removed"] == [f"{victim}/ordeal-{kind}-"
                                                                                    f"{done['value']['stream']}"]
            assert all(not t for t in toxics(cluster).values()), toxics(cluster)
            assert api_versions_round_trip(cluster.proxy_address(cluster.node(victim)), timeout=3) is not None
        return cleared
    raise AssertionError(f"no check for {name}")


def prove(cluster: Any, build: Callable[..., Any], kind: str, seed: int = SEED) -> dict[str, Any]:
    """Start `kind` (for a mix: its part picked by `seed`), check it hit whom Kafka named,
    stop it, check the stop undid it and the cluster is whole again. Answers the start's op."""
    assert_whole(cluster)
    fault = build(kind, cluster)
    says = ask_kafka(cluster, coordinators="coordinator" in kind or kind == "txn-mixed")
    before = docker_states(cluster)
    done = start(fault, kind, seed)
    try:
        healed = hit(cluster, says, before, done["value"]["fault"], done)
    finally:
        undone = stop(fault, kind)
    healed(undone)
    assert_whole(cluster)
    return done


# -- fabric-recommended: ZooKeeper mode ------------------------------------------------------

# One node killed, paused or cut, or one proxy's link faulted: whom Kafka names for the pick.
ZK_KINDS = ["kill-broker", "pause-broker", "kill-leader", "kill-controller", "pause-controller", "isolate-leader",
            "isolate-controller", "partition-halves", "link-faults", "kill-osn", "pause-osn",
            "pause-txn-coordinator", "pause-txn-coordinator", "kill-txn-coordinator", "isolate-txn-coordinator",
            "pause-group-coordinator", "kill-group-coordinator", "isolate-group-coordinator"]
# Seeds whose picks are a pause and a cut (cheap); each start is checked for whichever part it picked.
MIX_SEEDS = [("mixed", 1), ("mixed", 4), ("txn-mixed", 1), ("txn-mixed", 4)]


@pytest.mark.parametrize("kind", ZK_KINDS)
def test_fault_hits_whom_kafka_names_and_its_stop_undoes_it(zk_cluster: Any, build: Callable[..., Any],
                                                            kind: str) -> None:
    prove(zk_cluster, build, kind)


@pytest.mark.parametrize("kind, seed", MIX_SEEDS)
def test_each_start_of_a_mix_hits_whom_its_picked_part_names(zk_cluster: Any, build: Callable[..., Any],
                                                             kind: str, seed: int) -> None:
    done = prove(zk_cluster, build, kind, seed)
    assert done["value"]["fault"] in fault_factory(kind)({}).parts


def test_zk_quorum_loss_cuts_every_zookeeper_from_the_others_until_healed(zk_cluster: Any,
                                                                        build: Callable[..., Any]) -> None:
    cluster = zk_cluster
    assert_whole(cluster)
    fault = build("zk-quorum-loss", cluster)
    zks = [z.name for z in cluster.zookeepers]
    done = start(fault, "zk-quorum-loss")
    try:
        assert done["f"] == "partition" and done["value"]["topology"] == "zk-split", done
        expected = {(a, b) for a in zks for b in zks if a != b}
        assert cut_links(cluster) == expected
        # ZooKeeper's own word: no node serves (a follower gives up its leader after syncLimit ticks).
        assert until(lambda: all(zookeeper_mode(z.ip) is None for z in cluster.zookeepers), 30, step=0.5, last=True), \
            {z.name: zookeeper_mode(z.ip) for z in cluster.zookeepers}
    finally:
        undone = stop(fault, "zk-quorum-loss")
    assert undone["value"]["connected"] is True and cut_links(cluster) == set()
    until(lambda: ensemble_has_leader([z.ip for z in cluster.zookeepers]), 30, step=0.5,
          what="a ZooKeeper leader after the heal")
    assert_whole(cluster)


def test_kafka_loss_probed_cuts_every_osn_from_every_broker_only_until_healed(zk_cluster: Any,
                                                                           build: Callable[..., Any]) -> None:
    cluster = zk_cluster
    assert_whole(cluster)
    fault = build("kafka-loss-probed", cluster)
    osns, brokers = [n.name for n in cluster.osns], [n.name for n in cluster.brokers]
    before = docker_states(cluster)
    done = start(fault, "kafka-loss-probed")
    try:
        assert done["f"] == "partition" and sorted(done["value"]["nodes"]) == sorted(osns), done
        # From the OSNs only, at once: the prober restarts an OSN after 3 failed probes (6 s).
        assert cut_links(cluster, sources=osns) == {(o, b) for o in osns for b in brokers}
        assert cut_links(cluster, sources=[brokers[0]]) == {(brokers[0], o) for o in osns}
    finally:
        undone = stop(fault, "kafka-loss-probed")
    assert undone["f"] == "heal" and undone["value"]["connected"] is True, undone
    assert cut_links(cluster) == set()
    restarts = sum(s["restarts"] for s in undone["value"].get("probes", {}).values())
    if restarts == 0:  # stopped before any probe's third failure: no OSN was touched
        assert changed(before, docker_states(cluster)) == {}
    fault.heal_all()  # starts an OSN a restart crashed (Fabric 1.4.12), as a run's end does
    assert_whole(cluster)


def test_targeted_isr_shrink_cuts_the_leader_and_its_kept_followers_from_the_stale_ones(
        zk_cluster: Any, build: Callable[..., Any]) -> None:
    """The cut alone (the kill and the unclean election that follow are test_chaos.py's); healed
    by heal_all, which a run calls at its end."""
    cluster = zk_cluster
    assert_whole(cluster)
    fault = build("targeted-isr-shrink", cluster)
    says = ask_kafka(cluster)
    done = start(fault, "targeted-isr-shrink")
    try:
        plan = done["value"]
        tp = (plan["topic"], plan["partition"])
        assert plan["topic"] not in cluster.variant.orderer.channels, plan
        assert plan["leader"] == says.leaders[tp] == plan["in_sync"][0], (plan, says.leaders[tp])
        assert sorted(plan["in_sync"] + plan["stale"]) == sorted(says.isr[tp]), (plan, says.isr[tp])
        assert len(plan["in_sync"]) == cluster.variant.kafka.min_insync_replicas and plan["stale"], plan
        assert cut_links(cluster) == between(plan["in_sync"], plan["stale"])
    finally:
        healed = fault.heal_all()
    assert [h["f"] for h in healed] == ["heal", "start"] and healed[0]["value"]["connected"] is True, healed
    assert cut_links(cluster) == set()
    assert_whole(cluster)


def _data_volume(node: Any) -> str:
    return next(m["Destination"] for m in node.container.attrs["Mounts"] if m.get("Type") == "volume" and m.get("RW"))


def _mark(nodes: list[Any]) -> dict[str, Path]:
    """A file on each node's data volume (beside Kafka's log directory, not in it)."""
    marks = {}
    for node in nodes:
        path = Path(f"/proc/{node.pid}/root{_data_volume(node)}/{MARKER}")
        path.write_text(node.name)
        marks[node.name] = Path(f"{_data_volume(node)}/{MARKER}")
    return marks


def _unmark(nodes: list[Any]) -> None:
    for node in nodes:
        if node.pid:
            Path(f"/proc/{node.pid}/root{_data_volume(node)}/{MARKER}").unlink(missing_ok=True)


def _started_at(cluster: Any) -> dict[str, str]:
    found = {}
    for node in cluster.nodes:
        node.container.reload()
        found[node.name] = node.container.attrs["State"]["StartedAt"]
    return found


def _wiped(cluster: Any, marks: dict[str, Path]) -> list[str]:
    return sorted(name for name, path in marks.items() if cluster.node(name).read_file(str(path)) is None)


def test_disk_loss_empties_the_disk_of_the_broker_it_names_only(zk_cluster: Any, build: Callable[..., Any]) -> None:
    cluster = zk_cluster
    assert_whole(cluster)
    fault = build("disk-loss", cluster)
    began = _started_at(cluster)
    marks = _mark(cluster.brokers)
    try:
        done = start(fault, "disk-loss")
        victim = done["value"]["nodes"][0]
        assert done["f"] == "disk-loss" and done["value"]["started"] == [victim], done
        assert cluster.node(victim).role == "kafka"
        assert _wiped(cluster, marks) == [victim]
        assert sorted(n for n, at in _started_at(cluster).items() if at != began[n]) == [victim]
        undone = stop(fault, "disk-loss")
        assert undone["value"]["back"] is True and undone["value"]["nodes"] == [victim], undone
        # Back in every ISR once it caught up: waited for, as the other faults' victims are.
        until(lambda: serves(cluster, cluster.node(victim)), WHOLE_TIMEOUT, step=0.5, what=f"{victim} to serve")
        assert_whole(cluster)
    finally:
        _unmark(cluster.brokers)


# -- the ordering nodes (once tests/nemesis/test_osn_chaos.py, which booted a cluster of its own) --

@pytest.mark.parametrize("kind, did, undid", [("kill-osn", "kill", "start"), ("pause-osn", "pause", "resume")])
def test_a_faulted_osn_does_not_answer_until_its_fault_is_undone(zk_cluster: Any, kind: str, did: str,
                                                                 undid: str) -> None:
    cluster = zk_cluster
    fault = fault_factory(kind)({})
    fault.setup(cluster)
    try:
        done = start(fault, kind)
        osn = cluster.node(done["value"]["nodes"][0])
        assert (done["f"], osn.role) == (did, "osn"), done
        assert not cluster.osn_healthy(osn)
        assert stop(fault, kind)["f"] == undid
        until(lambda: cluster.osn_healthy(osn), WHOLE_TIMEOUT, step=0.5, what=f"{osn.name} healthy again")
        assert fault.heal_all() == []
    finally:
        restore(cluster)


def test_an_isolated_osn_cannot_reach_a_broker_until_healed(zk_cluster: Any) -> None:
    from clusters.node_config import CLUSTER_PORT

    cluster = zk_cluster
    fault = fault_factory("isolate-node")({"target": {"role": "osn"}})
    fault.setup(cluster)
    try:
        done = start(fault, "isolate-node")
        osn, broker = cluster.node(done["value"]["nodes"][0]), cluster.brokers[0]
        assert osn.role == "osn"
        address = f"{broker.ip}:{CLUSTER_PORT}"
        assert namespace.tcp_probe(osn.pid, [(broker.ip, CLUSTER_PORT)])[address] == "timeout"
        healed = stop(fault, "isolate-node")
        assert healed["f"] == "heal" and healed["value"]["connected"] is True
        assert namespace.reachable(namespace.tcp_probe(osn.pid, [(broker.ip, CLUSTER_PORT)])[address])
    finally:
        restore(cluster)


# -- kraft-recommended: KRaft 4.4.0, 3 controllers -------------------------------------------

@pytest.mark.nightly  # with its own KRaft boot, about 105 s of make test for the three (2026-12-07)
def test_pause_controller_freezes_the_quorums_leader_until_resumed(kraft_cluster: Any,
                                                                  build: Callable[..., Any]) -> None:
    """In KRaft "controller" is the quorum's leader, a controller node (read by the fault from
    the controllers' quorum-state files, here from DescribeQuorum). kill- and isolate-controller
    pick it the same way (nemesis/targets.py controller), and kill and cut as proven above."""
    done = prove(kraft_cluster, build, "pause-controller")
    assert done["value"]["nodes"][0].startswith("controller"), done


@pytest.mark.nightly  # with its own KRaft boot, about 105 s of make test for the three (2026-12-07)
def test_controller_quorum_loss_cuts_a_majority_each_alone_and_no_leader_remains_until_healed(
        kraft_cluster: Any, build: Callable[..., Any]) -> None:
    cluster = kraft_cluster
    assert_whole(cluster)
    fault = build("controller-quorum-loss", cluster)
    controllers = [c.name for c in cluster.controllers]
    done = start(fault, "controller-quorum-loss")
    try:
        cut = done["value"]["nodes"]
        assert set(cut) <= set(controllers) and len(cut) > len(controllers) // 2, done
        everyone = partitioned(cluster)
        assert cut_links(cluster) == set().union(*(between([c], [n for n in everyone if n != c]) for c in cut))
        assert until(lambda: quorum_leader(cluster) is None, 20, step=0.5, last=True), \
            f"{quorum_leader(cluster)} still answers as leader"
    finally:
        undone = stop(fault, "controller-quorum-loss")
    assert undone["value"]["connected"] is True and cut_links(cluster) == set()
    until(lambda: quorum_leader(cluster), 30, step=0.5, what="a quorum leader after the heal")
    assert_whole(cluster)


def _listed_by_others(cluster: Any, broker: str) -> bool | None:
    """Whether the other brokers, each asked itself, list `broker` (KRaft lists unfenced
    brokers only); None unless they agree."""
    views = {meta is not None and int(broker[len("kafka"):]) in meta.brokers
             for meta in (own_metadata(cluster, b) for b in cluster.brokers if b.name != broker) if meta is not None}
    return views.pop() if len(views) == 1 else None


@pytest.mark.nightly  # with its own KRaft boot, about 105 s of make test for the three (2026-12-07)
def test_isolate_broker_from_controllers_cuts_one_broker_from_the_controllers_only(
        kraft_cluster: Any, build: Callable[..., Any]) -> None:
    cluster = kraft_cluster
    assert_whole(cluster)
    fault = build("isolate-broker-from-controllers", cluster)
    done = start(fault, "isolate-broker-from-controllers")
    try:
        (victim,) = done["value"]["nodes"]
        assert cluster.node(victim).role == "kafka"
        assert cut_links(cluster) == between([victim], [c.name for c in cluster.controllers])
        # The controllers' own word, through the other brokers: the victim is fenced.
        until(lambda: _listed_by_others(cluster, victim) is False, 30, step=0.5, what=f"{victim} to be fenced")
    finally:
        undone = stop(fault, "isolate-broker-from-controllers")
    assert undone["value"]["connected"] is True and cut_links(cluster) == set(), undone
    until(lambda: _listed_by_others(cluster, victim), 30, step=0.5, what=f"{victim} unfenced after the heal")
    assert_whole(cluster)


def test_disk_loss_sole_in_sync_pauses_the_followers_kafka_names_and_wipes_the_leader(
        kraft_cluster: Any, build: Callable[..., Any]) -> None:
    cluster = kraft_cluster
    assert_whole(cluster)
    fault = build("disk-loss-sole-in-sync", cluster)
    says = ask_kafka(cluster)
    began = _started_at(cluster)
    marks = _mark(cluster.brokers)
    paused: set[str] = set()
    isr_seen: dict[tuple[str, int], set[tuple[str, ...]]] = {}
    result: dict[str, Any] = {}

    def run() -> None:
        try:
            result["done"] = start(fault, "disk-loss-sole-in-sync")
        except BaseException as exc:  # noqa: BLE001 - said by the test
            result["error"] = exc

    worker = threading.Thread(target=run)
    worker.start()
    try:
        while worker.is_alive():  # what Docker and the metadata show while the sequence runs
            paused |= {n.name for n in cluster.brokers if n.state == "paused"}
            try:
                meta = admin_client(cluster.bootstrap_servers()).list_topics(TOPIC, timeout=2)
                for p, part in meta.topics[TOPIC].partitions.items():
                    isr_seen.setdefault((TOPIC, p), set()).add(tuple(sorted(f"kafka{r}" for r in part.isrs)))
            except Exception:  # noqa: BLE001 - metadata may be late while brokers are paused
                pass
            time.sleep(0.3)
        worker.join()
        assert "error" not in result, result.get("error")
        done = result["done"]
        value = done["value"]
        victim = value["nodes"][0]
        tp = (value["topic"], value["partition"])
        assert victim == says.leaders[tp], f"wiped {victim}; Kafka named {says.leaders[tp]} leader of {tp}"
        followers = sorted(r for r in says.replicas[tp] if r != victim)
        assert paused == set(followers), f"paused {sorted(paused)}; Kafka named followers {followers} of {tp}"
        assert (victim,) in isr_seen.get(tp, set()), f"the ISR of {tp} was never {victim} alone: {isr_seen.get(tp)}"
        assert _wiped(cluster, marks) == [victim]
        assert sorted(n for n, at in _started_at(cluster).items() if at != began[n]) == [victim]
        undone = stop(fault, "disk-loss-sole-in-sync")
        assert undone["value"]["back"] is True, undone
        assert all(cluster.node(f).state == "running" for f in followers)
        # Back in every ISR once it caught up: waited for, as the other faults' victims are.
        until(lambda: serves(cluster, cluster.node(victim)), WHOLE_TIMEOUT, step=0.5, what=f"{victim} to serve")
        assert_whole(cluster)
    finally:
        worker.join()
        _unmark(cluster.brokers)


# Kinds with a test of their own above, and the one proven by other modules' cluster tests.
OWN_TESTS = {
    "zk-quorum-loss": test_zk_quorum_loss_cuts_every_zookeeper_from_the_others_until_healed,
    "kafka-loss-probed": test_kafka_loss_probed_cuts_every_osn_from_every_broker_only_until_healed,
    "targeted-isr-shrink": test_targeted_isr_shrink_cuts_the_leader_and_its_kept_followers_from_the_stale_ones,
    "disk-loss": test_disk_loss_empties_the_disk_of_the_broker_it_names_only,
    "controller-quorum-loss": test_controller_quorum_loss_cuts_a_majority_each_alone_and_no_leader_remains_until_healed,
    "isolate-broker-from-controllers": test_isolate_broker_from_controllers_cuts_one_broker_from_the_controllers_only,
    "disk-loss-sole-in-sync": test_disk_loss_sole_in_sync_pauses_the_followers_kafka_names_and_wipes_the_leader,
}
ELSEWHERE = {"unclean-toggle": ["tests/nemesis/test_chaos.py::test_unclean_election_setting_reads_back_true_then_false",
                                "tests/clusters/test_kraft.py::test_a_leaderless_partition_is_elected_explicitly_when_"
                                "unclean_election_is_switched_on"],
             # subscribed consumers under group faults: the coordinator faults are proven here (txn-mixed's
             # parts); the pick of a group with members and the storm in the tests named
             "group-mixed": ["tests/workloads/test_kafka_txn.py::test_a_group_fault_without_a_key_hits_the_"
                             "coordinator_of_a_group_with_members",
                             "tests/workloads/test_on_cluster.py::test_a_rebalance_storm_makes_a_subscribed_consumer_"
                             "record_revocations_and_ends_at_stop"],
             # a schedule of the other kinds' faults, not a fault: each of its faults is proven by its
             # own kind here, its compound faults and its schedule in the tests named
             "random": ["tests/nemesis/test_compound_faults.py::test_kill_all_brokers_kills_every_broker_and_its_"
                        "stop_starts_them_all",
                        "tests/harness/test_random_schedule.py::test_a_run_does_the_planned_schedule_in_order_and_"
                        "its_seed_replays_it"],
             # random's faults and disk-loss (proven here): what it adds is that its plans draw the loss
             "random-disk": ["tests/harness/test_random_schedule.py::test_random_disk_draws_randoms_faults_and_a_"
                             "disk_loss_in_most_runs"]}


def test_every_fault_kind_has_a_proof_here_or_in_a_named_cluster_test() -> None:
    covered = set(ZK_KINDS) | {kind for kind, _ in MIX_SEEDS} | set(OWN_TESTS) | set(ELSEWHERE)
    assert sorted(set(FAULT_KINDS) - covered) == []
    assert {kind for kind, _ in MIX_SEEDS} == {"mixed", "txn-mixed"}
    # Every fault txn-mixed draws from has a proof of its own too, not only when a seed picks it.
    assert set(fault_factory("txn-mixed")({}).parts) <= set(ZK_KINDS)
