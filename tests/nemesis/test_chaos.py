"""Each fault kind applied to a real cluster, verified from outside, and healed.

One small cluster for the whole module (tests/nemesis/small.toml: 1 ZooKeeper, 3 brokers,
fabric-recommended's Kafka settings: RF 3, min ISR 2, no unclean election, acks=all).
"""
from __future__ import annotations

import json
import re
import signal
import threading
import time
from pathlib import Path

import pytest

from clusters.cluster import PROXY_BASE_PORT, Cluster
from clusters.namespace import reachable, tcp_probe
from ground.variant import load_variant
from harness.plan import prepare
from harness.runner import Runner
from harness.scenario import parse_scenario
from nemesis import unclean_toggle
from nemesis.link_faults import remove_toxics
from nemesis.partition import PROBE_PORT, Firewall, PartitionNemesis, PartitionOptions
from nemesis.registry import fault_factory
from nemesis.targets import TargetSpec, partition_state, partition_states
from tests.nemesis.probes import api_versions_round_trip
from tests.nemesis.traffic import Writer, create_topic, read_all
from tests.support import until

pytestmark = [pytest.mark.cluster, pytest.mark.chaos]
SMALL = Path(__file__).with_name("small.toml")


@pytest.fixture(scope="module")
def cluster():
    c = Cluster.up(load_variant(str(SMALL)))
    try:
        yield c
    finally:
        c.down()


@pytest.fixture(autouse=True)
def whole(cluster: Cluster):
    """Every test starts on a whole, healthy cluster and leaves one behind, whatever it did.
    Whole includes every partition's ISR back to its full replica set: a broker that was
    paused or killed rejoins the ISRs only through its leaders' AlterPartition requests to
    the controller, the path the targeted ISR shrink needs next (it once stalled in CI
    right after the paused-controller test, the leader's shrink never answered)."""
    cluster.wait_healthy(120)
    assert until(lambda: not _under_replicated(cluster), 120, step=0.5, last=True), \
        f"ISRs still short of their replicas after 120 s: {_under_replicated(cluster)}"
    yield
    Firewall(cluster).flush()
    remove_toxics(cluster)
    for node in cluster.nodes:
        if node.state != "running":
            node.start()


def _under_replicated(cluster: Cluster) -> list[str]:
    """Partitions whose ISR is short of their replicas, as one metadata answer gives them."""
    return [f"{s.topic}-{s.partition} isr={s.isr}" for s in partition_states(cluster).values()
            if sorted(s.isr) != sorted(s.replicas)]


def start(nemesis, cluster: Cluster, name: str) -> dict:
    nemesis.setup(cluster)
    return nemesis.invoke({"f": "start", "fault": name})


def stop(nemesis, name: str) -> dict:
    return nemesis.invoke({"f": "stop", "fault": name})


def test_isolated_broker_reaches_no_peer_until_healed_even_while_paused(cluster: Cluster) -> None:
    nem = PartitionNemesis("isolate-one", PartitionOptions(topology="isolate", target=TargetSpec(pick="random")))
    done = start(nem, cluster, "isolate-one")
    victim = cluster.node(done["value"]["nodes"][0])
    assert done["f"] == "partition" and done["value"]["components"][0] == [victim.name]
    peers = [n for n in cluster.nodes if n.role in PROBE_PORT and n is not victim]
    addrs = [(p.ip, PROBE_PORT[p.role]) for p in peers]  # other brokers' 9093, ZooKeeper's 2181
    proxy = (cluster.toxiproxy.ip, PROXY_BASE_PORT + victim.node_id)  # where host clients reach it
    seen = tcp_probe(victim.pid, addrs + [proxy], timeout=2)
    assert {a: seen[f"{a[0]}:{a[1]}"] for a in addrs} == {a: "timeout" for a in addrs}
    assert seen[f"{proxy[0]}:{proxy[1]}"] == "open"  # the client path stays
    other = next(p for p in peers if p.role == "kafka")
    assert tcp_probe(other.pid, [(victim.ip, PROBE_PORT["kafka"])])[f"{victim.ip}:9093"] == "timeout"

    victim.pause()  # healing must not need the node to answer
    try:
        healed = nem.heal_all()
    finally:
        victim.resume()
    assert [h["f"] for h in healed] == ["heal"] and healed[0]["value"]["connected"] is True
    seen = tcp_probe(victim.pid, addrs, timeout=2)
    assert all(reachable(r) for r in seen.values()), seen
    assert nem.heal_all() == []  # nothing left to undo


def test_paused_broker_does_not_answer_until_resumed(cluster: Cluster) -> None:
    nem = fault_factory("pause-broker")({})
    done = start(nem, cluster, "pause-broker")
    victim = cluster.node(done["value"]["nodes"][0])
    other = next(b for b in cluster.brokers if b is not victim)
    assert done["f"] == "pause" and victim.state == "paused"
    assert api_versions_round_trip(cluster.proxy_address(victim), timeout=2) is None
    assert api_versions_round_trip(cluster.proxy_address(other), timeout=2) is not None
    undone = stop(nem, "pause-broker")
    assert undone == {"f": "resume", "value": {"fault": "pause-broker", "nodes": [victim.name]}}
    until(lambda: api_versions_round_trip(cluster.proxy_address(victim), timeout=2), 10, step=0.5,
          what=f"{victim.name} to answer ApiVersions after its resume")


def test_killed_leader_loses_leadership_and_serves_again_after_start(cluster: Cluster) -> None:
    create_topic(cluster, "kill-t")
    nem = fault_factory("kill-leader")({"target": {"topic": "kill-t", "partition": 0}})
    done = start(nem, cluster, "kill-leader")
    victim = cluster.node(done["value"]["nodes"][0])
    assert done["f"] == "kill" and done["value"]["leader"] == victim.name and victim.state == "exited"
    assert api_versions_round_trip(cluster.proxy_address(victim), timeout=2) is None
    until(lambda: partition_state(cluster, "kill-t").leader not in (None, victim.name), 30, step=0.5,
          what=f"another replica than {victim.name} to lead kill-t")
    undone = stop(nem, "kill-leader")
    assert undone["f"] == "start" and undone["value"]["nodes"] == [victim.name]
    until(lambda: api_versions_round_trip(cluster.proxy_address(victim), timeout=2), 60, step=0.5,
          what=f"{victim.name} to answer ApiVersions after its start")
    assert nem.heal_all() == []


@pytest.mark.nightly  # a 40-s pause by design: 45 s of make test
def test_a_topic_asked_for_while_the_controller_is_paused_is_created_once_it_resumes(cluster: Cluster) -> None:
    # Longer than a client's request timeout and than the controller's ZooKeeper session: the
    # first request goes unanswered, and the new controller has too few brokers for RF 3.
    victim = cluster.controller()
    assert victim is not None
    victim.pause()
    resume = threading.Timer(40, victim.resume)
    resume.start()
    started = time.monotonic()
    try:
        create_topic(cluster, "paused-controller-t")
    finally:
        resume.join()
    assert time.monotonic() - started >= 40
    assert partition_state(cluster, "paused-controller-t").leader is not None


def test_unclean_election_setting_reads_back_true_then_false(cluster: Cluster) -> None:
    create_topic(cluster, "toggle-t")
    nem = fault_factory("unclean-toggle")({"topics": ["toggle-t"]})
    done = start(nem, cluster, "unclean-toggle")
    names = ["toggle-t", *(b.name for b in cluster.brokers)]
    assert done["f"] == "config" and done["value"]["set"] is True
    assert done["value"]["read_back"] == {n: True for n in names}
    assert {n: s.value for n, s in unclean_toggle.read(cluster, names).items()} == {n: True for n in names}
    undone = stop(nem, "unclean-toggle")
    assert undone["f"] == "heal" and undone["value"]["restored"] == {n: False for n in sorted(names)}
    after = unclean_toggle.read(cluster, names)
    assert all(s.value is False and not s.overridden for s in after.values())  # inherited again
    assert nem.heal_all() == []


def _round_trips(address: str, n: int = 5) -> list[float]:
    trips = [api_versions_round_trip(address, timeout=3) for _ in range(n)]
    assert None not in trips, f"a round trip through {address} got no answer within 3 s: {trips}"
    return trips


def _a_trip_under(address: str, seconds: float, timeout: float = 30) -> float:
    """A round trip quicker than `seconds`, within `timeout` (a loaded machine may be slow
    now and then, but a link that adds `seconds` to every answer never gives one)."""
    seen: list[float] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        seen += _round_trips(address, 3)
        if min(seen) < seconds:
            return min(seen)
    pytest.fail(f"no round trip through {address} under {seconds * 1000:.0f} ms in {timeout} s: "
                f"{sorted(round(t * 1000) for t in seen)[:10]} ms", pytrace=False)


def test_latency_toxic_adds_its_delay_to_a_round_trip_until_healed(cluster: Cluster) -> None:
    address = cluster.proxy_address(cluster.brokers[0])
    before = _a_trip_under(address, 0.3)  # the link does not already take what the toxic adds
    nem = fault_factory("link-faults")({"kinds": ["latency"], "latency_ms": 300, "jitter_ms": 0,
                                        "target": {"pick": "all"}})
    done = start(nem, cluster, "link-faults")
    assert done["f"] == "link-fault" and done["value"]["toxic"] == "latency"
    during = _round_trips(address)
    healed = nem.heal_all()
    after = _a_trip_under(address, 0.3)
    print(f"ApiVersions round trip through toxiproxy: quickest {before * 1000:.1f} ms, with 300 ms latency "
          f"{min(during) * 1000:.1f}-{max(during) * 1000:.1f} ms, healed quickest {after * 1000:.1f} ms")
    # 300 ms is added to every answer (no jitter): no round trip can be quicker, however idle
    # the machine; after the heal one is again.
    assert min(during) >= 0.3, during
    assert healed[0]["value"]["toxics_removed"] == sorted(f"{b.name}/ordeal-latency-downstream"
                                                         for b in cluster.brokers)


def test_timeout_toxic_silences_a_broker_for_clients_until_healed(cluster: Cluster) -> None:
    nem = fault_factory("link-faults")({"kinds": ["timeout"], "timeout_ms": 0})
    done = start(nem, cluster, "link-faults")
    victim = cluster.node(done["value"]["nodes"][0])
    assert api_versions_round_trip(cluster.proxy_address(victim), timeout=2) is None
    stop(nem, "link-faults")
    assert api_versions_round_trip(cluster.proxy_address(victim), timeout=2) is not None


def _not_shrunk(cluster: Cluster, topic: str, plan: dict, state: object, acked_since_cut: int) -> str:
    """Why the ISR did not shrink, in full (this has failed now and then in CI, where the
    cluster's logs go with the clone): the plan, the partition's state as its leader
    gave it, who controls now, how many sends were acknowledged after the cut (none: the
    leader's log did not grow, and a cut follower that was caught up stays in the ISR), the
    links the firewall left, each broker's last log lines about the partition, and its last
    lines about AlterPartition requests and from the controller (the leader once proposed the
    shrink and no later line said more: whether the proposal reached the controller is what
    the next failure should tell)."""
    try:  # a probe that fails must not hide the rest of what is said
        down: object = sorted(pair for pair, up in Firewall(cluster).links().items() if not up)
    except Exception as exc:  # noqa: BLE001
        down = f"not probed ({exc})"
    lines = [f"ISR not shrunk to {plan.get('in_sync')} in 40 s: {state}",
             f"plan: {json.dumps(plan, sort_keys=True)}", f"controller now: {cluster.controller()}",
             f"acknowledged since the cut: {acked_since_cut}", f"links down: {down}"]
    # The leader first: CI shows the head and tail of a long failure, and its lines matter most.
    brokers = sorted((n for n in cluster.nodes if n.role == "kafka"), key=lambda n: n.name != plan.get("leader"))
    for node in brokers:
        log = node.logs().decode(errors="replace").splitlines()
        about = [line for line in log if f"{topic}-0" in line][-10:]
        alter = [line for line in log if "NetworkClient" not in line  # connection noise, not decisions
                 and re.search(r"AlterPartition|alter partition|Controller id=|Shrinking ISR", line, re.I)][-10:]
        kept = set(about) | set(alter)
        said = [line for line in log if line in kept]
        lines += [f"{node.name}: {line}" for line in said] or [f"{node.name}: no line about {topic}-0"]
    return "\n".join(lines)


def _targeted_run(cluster: Cluster, topic: str, options: dict,
                  acks: str = "all") -> tuple[dict, dict, dict[int, int], list[int], int]:
    """The targeted sequence on `topic` under a steady writer: ops of the cut and of the
    rest, the acknowledged values, the final read, and how many acks came in while the
    ISR was shrunk to the in-sync group."""
    writer = Writer(cluster, topic, acks=acks).start()
    nem = fault_factory("targeted-isr-shrink")({"topic": topic, "partition": 0, **options})
    try:
        assert until(lambda: writer.acked_count() > 20, 10, step=0.5, last=True), \
            f"{writer.acked_count()} writes acknowledged in 10 s"
        cut = start(nem, cluster, "targeted-isr-shrink")
        at_cut = writer.acked_count()
        # The leader shrinks the ISR after replica.lag.time.max.ms; its AlterPartition took 30 s
        # more to land on a slow CI day (2026-11-29), so the wait is bounded at 75 s.
        shrunk = nem.wait_isr_shrunk(timeout=75)
        if sorted(shrunk.isr) != sorted(cut["value"]["in_sync"]):
            pytest.fail(_not_shrunk(cluster, topic, cut["value"], shrunk, writer.acked_count() - at_cut))
        at_shrink = writer.acked_count()
        until(lambda: writer.acked_count() - at_shrink >= 20, 10, step=0.5, last=True)  # or fewer: counted below
        acked_while_shrunk = writer.acked_count() - at_shrink
        rest = stop(nem, "targeted-isr-shrink")
    finally:
        acked = writer.stop(drain=3)
        nem.heal_all()
    return cut, rest, acked, read_all(cluster, topic, timeout=90), acked_while_shrunk


@pytest.mark.nightly  # about a minute or more each; smoke runs the scenario form
def test_targeted_isr_shrink_loses_acknowledged_writes_with_unclean_election(cluster: Cluster) -> None:
    # Unclean election enabled on this topic (a topic's setting wins over the brokers').
    create_topic(cluster, "loss-unclean", {"unclean.leader.election.enable": "true"})
    cut, rest, acked, values, while_shrunk = _targeted_run(cluster, "loss-unclean", {})
    assert cut["f"] == "partition" and cut["value"]["leader"] in cut["value"]["in_sync"]
    steps = rest["value"]["steps"]
    assert [s["f"] for s in steps] == ["partition", "kill", "kill", "heal", "start"]
    leader, kept = cut["value"]["in_sync"]
    assert steps[1]["value"]["nodes"] == [leader] and steps[1]["value"]["elected"] == kept  # clean
    # The hold lasted until the shrunk ISR had committed min_committed (10) records, as its leader counts them.
    assert steps[1]["value"]["committed_while_shrunk"] >= 10, steps[1]
    assert rest["value"]["elected"] in cut["value"]["stale"]  # then the stale follower, uncleanly
    lost = [v for v in acked if v not in set(values)]
    print(f"unclean: {len(acked)} acknowledged ({while_shrunk} while the ISR was shrunk), "
          f"{len(values)} read back, {len(lost)} acknowledged writes lost")
    assert while_shrunk > 0 and len(lost) >= 1


@pytest.mark.nightly  # about a minute or more each; the nightly suite runs the scenario form too
def test_targeted_isr_shrink_loses_nothing_without_unclean_election(cluster: Cluster) -> None:
    create_topic(cluster, "loss-clean")
    cut, rest, acked, values, while_shrunk = _targeted_run(cluster, "loss-clean", {"election_timeout": 15})
    assert rest["value"]["elected"] is None  # no stale follower may lead; the partition waits
    lost = [v for v in acked if v not in set(values)]
    print(f"clean: {len(acked)} acknowledged ({while_shrunk} while the ISR was shrunk), "
          f"{len(values)} read back, {len(lost)} acknowledged writes lost")
    assert while_shrunk > 0 and lost == []


@pytest.mark.nightly  # about a minute or more each; the nightly suite runs the scenario form on acks-1
def test_targeted_sequence_loses_what_a_lone_leader_acknowledged_with_acks_1(cluster: Cluster) -> None:
    # No unclean election: the loss comes from the clean election of a follower that was cut
    # from the leader for `lag` seconds while acks=1 let the leader acknowledge alone.
    create_topic(cluster, "loss-acks1")
    cut, rest, acked, values, _ = _targeted_run(cluster, "loss-acks1", {"election_timeout": 15, "lag": 4}, acks="1")
    steps = rest["value"]["steps"]
    assert steps[1]["value"]["elected"] == cut["value"]["in_sync"][1] and rest["value"]["elected"] is None
    lost = [v for v in acked if v not in set(values)]
    print(f"acks=1: {len(acked)} acknowledged, {len(values)} read back, {len(lost)} acknowledged writes lost")
    assert len(lost) >= 1


def test_unclean_toggle_heal_removes_broker_values_a_crashed_run_left(cluster: Cluster) -> None:
    broker = cluster.brokers[0].name
    unclean_toggle.write(cluster, {broker: True})  # as if a run died between start and stop
    left = unclean_toggle.read_settled(cluster, {broker: unclean_toggle.Setting(True, True)})
    assert left[broker] == unclean_toggle.Setting(True, True)
    nem = fault_factory("unclean-toggle")({})
    nem.setup(cluster)
    healed = nem.heal_all()
    assert healed[0]["value"]["restored"] == {broker: False}
    assert not unclean_toggle.read(cluster, [broker])[broker].overridden


def test_interrupted_harness_run_heals_the_active_partition_before_it_ends(cluster: Cluster, tmp_path: Path) -> None:
    scenario = parse_scenario({
        "variant": str(SMALL), "workloads": [{"name": "noop"}], "concurrency": 1, "rate": 5, "duration": 60,
        "recovery_wait": 0.1, "final_read_time_limit": 1, "op_timeout": 2, "seed": 1,
        "nemesis": {"faults": ["partition-halves"], "interval": 3}}, "nemesis-interrupted")
    runner = Runner(prepare(scenario, "nemesis-interrupted"), tmp_path, cluster=cluster, check=False,
                    handle_signals=False)
    # What SIGTERM does, once the first partition (at 3 s) is in the history (a fault's op is
    # recorded when it has taken effect, and written at once) and before its planned heal (6 s).
    done, seen = threading.Event(), []

    def stop_once_partitioned() -> None:
        while not done.wait(0.05):
            for history in tmp_path.glob("**/history.jsonl"):
                raw = history.read_bytes()
                ops = [json.loads(line) for line in raw[:raw.rfind(b"\n") + 1].splitlines()]
                seen[:] = [o["f"] for o in ops if o["process"] == "nemesis"]
                if "partition" in seen:
                    runner.stop(signal.SIGTERM)
                    return

    watcher = threading.Thread(target=stop_once_partitioned, daemon=True)
    watcher.start()
    try:
        result = runner.run()
    finally:
        done.set()
        watcher.join()
    ops = [json.loads(line) for line in result.history.read_text().splitlines()]
    nemesis_ops = [o for o in ops if o["process"] == "nemesis"]
    assert result.signal == signal.SIGTERM, f"the run was not stopped mid-partition; its nemesis ops: {seen}"
    assert [o["f"] for o in nemesis_ops] == ["partition", "heal", "heal"]
    assert nemesis_ops[1]["value"]["connected"] is True and nemesis_ops[2]["value"]["all"] is True
    assert all(Firewall(cluster).links().values())
