"""Fault objects against a fake cluster: registry, process faults and their undo, live
targets, the targeted sequence's choice of replicas, the mixed schedule. No Docker."""
from __future__ import annotations

import random
from types import SimpleNamespace

import pytest

from ground.fault_kinds import FAULT_KINDS, MODE_FAULT_KINDS, SCHEDULE_KINDS
from nemesis import targeted_loss, targets
from nemesis.fault import Fault, op
from nemesis.registry import fault_factory
from nemesis.mixed import run_schedule
from nemesis.targets import PartitionState, TargetSpec, resolve
from tests import support


class FakeCluster(support.FakeCluster):
    def __init__(self, brokers: int = 3, osns: int = 0):
        super().__init__(brokers=brokers, osns=osns)
        self.variant = SimpleNamespace(kafka=SimpleNamespace(min_insync_replicas=2,
                                                             unclean_leader_election_enable=False),
                                       cluster=SimpleNamespace(osns=osns),
                                       orderer=SimpleNamespace(channels=["ch0", "ch1"]))


def test_every_fault_kind_hits_nodes_of_its_own_mode_only() -> None:
    """ground/fault_kinds.py says which kinds need ZooKeeper or KRaft's controllers; the faults
    say which roles they hit. The two must agree, or a variant would be offered a fault it
    cannot run (or refused one it can)."""
    from clusters.node import ROLES

    for name in FAULT_KINDS:
        if name in SCHEDULE_KINDS:  # schedules of registered faults (tests/test_registries.py), not faults
            continue
        roles = fault_factory(name)({}).roles()
        assert roles <= set(ROLES), name
        mode = MODE_FAULT_KINDS.get(name)
        if mode == "zookeeper":
            assert "zookeeper" in roles and "controller" not in roles, name
        elif mode == "kraft":
            assert "controller" in roles and "zookeeper" not in roles, name
        else:
            assert not roles & {"zookeeper", "controller"}, f"{name} hits {roles} but has no mode"


@pytest.mark.parametrize("name", ["kill-broker", "partition-halves", "link-faults", "unclean-toggle",
                                  "targeted-isr-shrink", "mixed"])
def test_unknown_options_are_refused_with_a_value_error(name: str) -> None:
    with pytest.raises(ValueError):
        fault_factory(name)({"no_such_option": 1})


def test_kill_then_stop_starts_the_same_node() -> None:
    cluster = FakeCluster()
    nem = fault_factory("kill-broker")({"seed": 4})
    nem.setup(cluster)
    killed = nem.invoke({"f": "start", "fault": "kill-broker"})
    assert killed["f"] == "kill" and len(killed["value"]["nodes"]) == 1
    victim = cluster.node(killed["value"]["nodes"][0])
    assert victim.state == "exited"
    started = nem.invoke({"f": "stop", "fault": "kill-broker"})
    assert started == {"f": "start", "value": {"fault": "kill-broker", "nodes": [victim.name]}}
    assert victim.state == "running"


def test_each_start_draws_from_the_schedules_seed_so_runs_differ_and_a_seed_replays() -> None:
    cluster = FakeCluster(brokers=4)
    nem = fault_factory("kill-broker")({})
    nem.setup(cluster)

    def victim(seed: int) -> str:
        killed = nem.invoke({"f": "start", "fault": "kill-broker", "seed": seed})
        nem.invoke({"f": "stop", "fault": "kill-broker"})
        return killed["value"]["nodes"][0]

    picks = [victim(s) for s in range(30)]
    assert len(set(picks)) > 1  # the options' seed alone made every run pick the same
    assert [victim(s) for s in range(30)] == picks  # the same seeds, the same picks
    mixed = fault_factory("mixed")({"faults": ["kill-broker", "pause-broker"]})
    mixed.setup(cluster)
    firsts = set()
    for s in range(20):
        firsts.add(mixed.invoke({"f": "start", "fault": "mixed", "seed": s})["value"]["fault"])
        mixed.invoke({"f": "stop", "fault": "mixed"})
    assert firsts == {"kill-broker", "pause-broker"}  # every mixed run started with the same one


def test_heal_all_resumes_and_starts_every_node_of_the_role_and_is_idempotent() -> None:
    cluster = FakeCluster()
    nem = fault_factory("pause-broker")({})
    nem.setup(cluster)
    nem.start(nem.rng)
    cluster.node("kafka3").state = "exited"  # down for some other reason: heal starts it too
    ops = nem.heal_all()
    assert ops and ops[0]["f"] == "resume"
    assert all(n.state == "running" for n in cluster.nodes)
    assert nem.heal_all() == []


def test_a_pause_faults_heal_records_a_node_it_started_as_started_not_resumed() -> None:
    cluster = FakeCluster()
    nem = fault_factory("pause-broker")({"target": {"pick": "all"}})
    nem.setup(cluster)
    nem.start(nem.rng)
    cluster.node("kafka2").state = "exited"  # killed by another fault while paused
    ops = nem.heal_all()
    verbs = {o["f"]: o["value"]["nodes"] for o in ops}
    assert verbs == {"resume": ["kafka1", "kafka3"], "start": ["kafka2"]}, ops


def test_random_targets_come_from_the_seed_and_skip_dead_nodes() -> None:
    cluster = FakeCluster(brokers=4)
    cluster.node("kafka2").state = "exited"
    picks = [resolve(cluster, TargetSpec(role="kafka"), random.Random(9))[0] for _ in range(3)]
    assert picks[0] == picks[1] == picks[2]
    many = {resolve(cluster, TargetSpec(role="kafka"), random.Random(s))[0][0] for s in range(40)}
    assert many == {"kafka1", "kafka3", "kafka4"}


def test_targeted_sequence_keeps_the_controller_on_the_leaders_side(monkeypatch) -> None:
    cluster = FakeCluster()
    state = PartitionState("t", 0, "kafka1", ["kafka1", "kafka2", "kafka3"], ["kafka1", "kafka2", "kafka3"])
    monkeypatch.setattr(targeted_loss, "choose_partition", lambda c, rng, t, p, exclude=(), fit=None: ("t", 0))
    monkeypatch.setattr(targeted_loss, "partition_state", lambda c, t, p, via=None: state)
    for boss, stale in (("kafka2", ["kafka3"]), ("kafka3", ["kafka2"]), ("kafka1", ["kafka3"])):
        monkeypatch.setattr(targeted_loss, "controller", lambda c, boss=boss: boss)
        nem = targeted_loss.TargetedIsrShrink(targeted_loss.TargetedLossOptions())
        nem.setup(cluster)
        plan = nem.choose(nem.rng)
        assert plan["stale"] == stale and plan["in_sync"][0] == "kafka1" and len(plan["in_sync"]) == 2


def test_the_hold_lasts_until_the_shrunk_isr_has_committed_enough_and_no_longer_than_its_timeout(monkeypatch) -> None:
    state = PartitionState("t", 0, "kafka1", ["kafka1", "kafka2", "kafka3"], ["kafka1", "kafka2"])
    clock = iter(range(10_000))
    monkeypatch.setattr(targets.time, "monotonic", lambda: next(clock))
    monkeypatch.setattr(targets.time, "sleep", lambda seconds: None)
    marks = iter([100, 103, 107, 112, 130])
    monkeypatch.setattr(targets, "high_watermark", lambda *args: next(marks))
    assert targets.hold_committing(None, state, hold=5, records=10, timeout=60) == 12  # stops at 112
    marks = iter([None, 50, 52, 55, 70])  # no answer at first: counted from the first there is
    assert targets.hold_committing(None, state, hold=5, records=10, timeout=60) == 20
    monkeypatch.setattr(targets, "high_watermark", lambda *args: None)  # a leader that never answers
    assert targets.hold_committing(None, state, hold=5, records=10, timeout=20) is None
    monkeypatch.setattr(targets, "high_watermark", lambda *args: 100)  # nothing committed: bounded
    assert targets.hold_committing(None, state, hold=5, records=10, timeout=20) == 0


def test_partition_state_via_a_broker_counts_that_brokers_answer_only(monkeypatch) -> None:
    """librdkafka may answer a client bootstrapped to one broker from another (a cut one
    among them, whose ISR is from before the cut): only `via`'s own answer counts."""
    def metadata(answered_by: str, isr: list[int]) -> SimpleNamespace:
        part = SimpleNamespace(leader=1, replicas=[1, 2, 3], isrs=isr)
        return SimpleNamespace(orig_broker_name=answered_by, topics={"t": SimpleNamespace(partitions={0: part})})

    answers = iter([metadata("p:3/3", [1, 2, 3]), metadata("p:2/2", [1, 2]), metadata("p:1/bootstrap", [1, 2])])
    asked: list[str] = []

    def client(servers: str) -> SimpleNamespace:
        asked.append(servers)
        return SimpleNamespace(list_topics=lambda topic, timeout: next(answers))

    monkeypatch.setattr(targets, "admin_client", client)
    cluster = SimpleNamespace(node=lambda name: name, proxy_address=lambda name: f"p:{name[-1]}")
    assert targets.partition_state(cluster, "t", 0, via="kafka1").isr == ["kafka1", "kafka2"]
    assert asked == ["p:1"] * 3  # a new client each time, bootstrapped to kafka1's proxy only
    answers = iter([metadata("p:3/3", [1, 2, 3])] * targets.VIA_TRIES)
    with pytest.raises(targets.NoTarget, match="kafka1 did not answer"):
        targets.partition_state(cluster, "t", 0, via="kafka1")


def test_faults_pick_partitions_that_carry_data_not_fabrics_system_channel(monkeypatch) -> None:
    found = {None: [("ch0", 0), ("ordeal-sys", 0), ("t0", 0), ("t0", 1)], "ordeal-sys": [("ordeal-sys", 0)]}
    monkeypatch.setattr(targets, "user_partitions", lambda cluster, topic=None: found[topic])
    picks = {targets.choose_partition(None, random.Random(s)) for s in range(60)}
    assert picks == {("ch0", 0), ("t0", 0), ("t0", 1)}
    assert targets.choose_partition(None, random.Random(1), "ordeal-sys") == ("ordeal-sys", 0)  # named: as asked


def test_sequences_built_to_lose_writes_leave_the_ordering_channels_alone_unless_named(monkeypatch) -> None:
    """A channel whose partition lost what its OSNs had read halts on every OSN (Fabric's
    ErrOffsetOutOfRange): the loss could only make the verdict unknown."""
    found = {None: [("ch0", 0), ("ch1", 0), ("ordeal-sys", 0), ("t0", 0), ("t0", 1)], "ch1": [("ch1", 0)]}
    monkeypatch.setattr(targets, "user_partitions", lambda cluster, topic=None: found[topic])
    assert targets.channel_topics(FakeCluster(osns=3)) == ("ch0", "ch1")
    assert targets.channel_topics(FakeCluster(osns=0)) == ()
    picked: list[tuple[str, int]] = []
    state = PartitionState("t0", 0, "kafka1", ["kafka1", "kafka2", "kafka3"], ["kafka1", "kafka2", "kafka3"])
    monkeypatch.setattr(targeted_loss, "partition_state", lambda c, t, p, via=None: state)
    monkeypatch.setattr(targets, "partition_states", lambda c: {pair: state for pair in found[None]})
    monkeypatch.setattr(targeted_loss, "controller", lambda c: "kafka1")
    for topic in (None, "ch1"):
        for seed in range(30):
            nem = targeted_loss.TargetedIsrShrink(targeted_loss.TargetedLossOptions(topic=topic, seed=seed))
            nem.setup(FakeCluster(brokers=4, osns=3))
            plan = nem.choose(nem.rng)
            picked.append((plan["topic"], plan["partition"]))
    assert set(picked[:30]) == {("t0", 0), ("t0", 1)} and set(picked[30:]) == {("ch1", 0)}


def test_targeted_sequence_picks_a_partition_whose_isr_spares_a_follower_to_go_stale(monkeypatch) -> None:
    """A second cycle comes soon after the first killed and restarted brokers: partitions
    whose ISR has not grown back (one in-sync follower, min.insync.replicas 2) cannot lose
    one, so they are not picked while another can; with none that can, the pick is blind and
    the cycle says why it did nothing."""
    replicas = ["kafka1", "kafka2", "kafka3"]
    states = {("t0", 0): PartitionState("t0", 0, "kafka1", replicas, ["kafka1", "kafka2"]),
              ("t0", 1): PartitionState("t0", 1, "kafka2", replicas, replicas),
              ("t1", 0): PartitionState("t1", 0, None, replicas, ["kafka3"]),
              ("t1", 1): PartitionState("t1", 1, "kafka3", replicas, ["kafka3", "kafka1"])}
    monkeypatch.setattr(targets, "user_partitions", lambda cluster, topic=None: sorted(states))
    monkeypatch.setattr(targets, "partition_states", lambda c: states)
    monkeypatch.setattr(targeted_loss, "partition_state", lambda c, t, p, via=None: states[(t, p)])
    monkeypatch.setattr(targeted_loss, "controller", lambda c: "kafka1")
    cluster = FakeCluster(brokers=3)
    plans = []
    for seed in range(20):
        nem = targeted_loss.TargetedIsrShrink(targeted_loss.TargetedLossOptions(seed=seed, in_sync=2))
        nem.setup(cluster)
        plans.append(nem.choose(nem.rng))
    assert {(p["topic"], p["partition"]) for p in plans} == {("t0", 1)}
    assert plans[0]["leader"] == "kafka2" and len(plans[0]["stale"]) == 1
    del states[("t0", 1)]  # none spares a follower: picked blind, and told
    nem = targeted_loss.TargetedIsrShrink(targeted_loss.TargetedLossOptions(in_sync=2))
    nem.setup(cluster)
    with pytest.raises(RuntimeError, match="no follower left to go stale|has no leader"):
        nem.choose(nem.rng)


def test_targeted_sequence_refuses_a_partition_with_no_follower_to_spare(monkeypatch) -> None:
    cluster = FakeCluster()
    state = PartitionState("t", 0, "kafka1", ["kafka1", "kafka2"], ["kafka1", "kafka2"])
    monkeypatch.setattr(targeted_loss, "choose_partition", lambda c, rng, t, p, exclude=(), fit=None: ("t", 0))
    monkeypatch.setattr(targeted_loss, "partition_state", lambda c, t, p, via=None: state)
    monkeypatch.setattr(targeted_loss, "controller", lambda c: "kafka1")
    nem = targeted_loss.TargetedIsrShrink(targeted_loss.TargetedLossOptions())
    nem.setup(cluster)
    with pytest.raises(RuntimeError, match="no follower"):
        nem.choose(nem.rng)


class Recording(Fault):
    def __init__(self, name: str, log: list[str]):
        self.name = name
        super().__init__()
        self.log = log

    def start(self, rng: random.Random):
        self.log.append(f"start {self.name}")
        return op("kill", self.name)

    def stop(self):
        self.log.append(f"stop {self.name}")
        return op("start", self.name)

    def heal_all(self):
        self.log.append(f"heal {self.name}")
        return [op("heal", self.name)]


def test_schedule_alternates_faults_and_heals_every_one_at_the_end() -> None:
    log: list[str] = []
    recorded: list[dict] = []
    faults = [Recording("a", log), Recording("b", log)]
    run_schedule(faults, interval=0.01, duration=0.1, seed=1, record=recorded.append)
    starts = [e for e in log if e.startswith("start")]
    assert starts and all(log[log.index(s) + 1] == s.replace("start", "stop") for s in starts)
    assert log[-2:] == ["heal a", "heal b"]
    assert [r["f"] for r in recorded[-2:]] == ["heal", "heal"]


def test_schedule_heals_when_interrupted_mid_fault() -> None:
    log: list[str] = []

    def interrupt(_: float) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_schedule([Recording("a", log)], interval=0.01, duration=5, seed=1, record=lambda o: None, sleep=interrupt)
    assert log == ["start a", "stop a", "heal a"]


def test_mixed_starts_a_seeded_pick_and_stops_that_one() -> None:
    cluster = FakeCluster()
    mixed = fault_factory("mixed")({"faults": ["kill-broker", "pause-broker"], "seed": 2})
    mixed.setup(cluster)
    first = mixed.invoke({"f": "start", "fault": "mixed"})
    assert first["f"] in ("kill", "pause") and first["value"]["fault"] in ("kill-broker", "pause-broker")
    stopped = mixed.invoke({"f": "stop", "fault": "mixed"})
    assert stopped["f"] == {"kill": "start", "pause": "resume"}[first["f"]]
    assert all(n.state == "running" for n in cluster.nodes)
    with pytest.raises(ValueError, match="itself"):
        fault_factory("mixed")({"faults": ["mixed"]})
