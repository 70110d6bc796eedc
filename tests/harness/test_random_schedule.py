"""Random fault schedules (harness.schedules.random_faults): faults that overlap, a mix drawn anew
each period, quiet between, the whole schedule a function of the seed. No cluster."""
from __future__ import annotations

import random

import pytest

from ground.generator import NS
from ground.history_file import read_history
from harness.plan import prepare
from harness.schedules.random_faults import Request, overlaps, plan_schedule
from harness.runner import Runner
from harness.scenario import ScenarioError, parse_scenario
from nemesis.registry import fault_factory

FAULTS = ["kill-broker", "pause-broker", "partition-halves", "isolate-leader", "link-faults", "pause-majority"]
SHAPE = {"duration": 600, "interval": 5, "period": 30, "quiet": 10, "families": 3, "max_active": 2}


def plan(seed: int, faults: list[str] = FAULTS, **changes: float) -> list[Request]:
    return plan_schedule(faults, random.Random(seed), **{**SHAPE, **changes})


def periods(shape: dict) -> list[tuple[int, int]]:
    """The (start, end) ns of each period of a schedule of this shape."""
    out, t, end = [], 0, int(shape["duration"] * NS)
    while t < end:
        out.append((t, min(t + int(shape["period"] * NS), end)))
        t = out[-1][1] + int(shape["quiet"] * NS)
    return out


def test_the_same_seed_gives_the_same_schedule_and_another_seed_another():
    assert plan(7) == plan(7)
    assert [r.op for r in plan(7)] != [r.op for r in plan(8)]


def test_faults_overlap_but_never_more_than_max_active():
    schedule = plan(3)
    assert overlaps(schedule) > 5
    active: set[str] = set()
    for r in schedule:
        if r.op["f"] == "start":
            assert r.op["fault"] not in active
            active.add(r.op["fault"])
            assert len(active) <= SHAPE["max_active"]
        else:
            active.remove(r.op["fault"])
    assert not active


def test_one_at_a_time_when_max_active_is_one():
    assert overlaps(plan(3, max_active=1)) == 0


def test_each_period_draws_its_own_faults_stops_them_all_at_its_end_and_quiet_follows():
    schedule = plan(11)
    spans = periods(SHAPE)
    drawn: list[frozenset[str]] = []
    for start, end in spans:
        inside = [r for r in schedule if start <= r.at <= end]
        names = {r.op["fault"] for r in inside}
        assert len(names) <= SHAPE["families"]
        starts = sum(r.op["f"] == "start" for r in inside)
        stops = sum(r.op["f"] == "stop" for r in inside)
        assert starts == stops  # nothing outlives its period
        drawn.append(frozenset(names))
    assert len(set(drawn)) > 1  # the mix changes
    quiet = [(end, next_start) for (_, end), (next_start, _) in zip(spans, spans[1:])]
    assert not [r for r in schedule for a, b in quiet if a < r.at < b]


def test_every_request_carries_a_seed_of_its_own_for_the_faults_choices():
    seeds = [r.op["seed"] for r in plan(5)]
    assert len(set(seeds)) > len(seeds) * 0.9


def test_an_empty_fault_list_plans_nothing():
    assert plan(1, faults=[]) == []


# noop-b: noop under a second name, registered by the test that runs RUN's faults.
RUN = {"concurrency": 2, "rate": 200, "duration": 3, "recovery_wait": 0.1, "final_read_time_limit": 5,
       "op_timeout": 2, "workloads": [{"name": "noop"}],
       "nemesis": {"faults": ["noop", "noop-b"], "schedule": "random", "interval": 0.2, "period": 1.2, "quiet": 0.3,
                   "families": 2, "max_active": 2}}


def _requests(tmp_path, seed):
    p = prepare(parse_scenario({**RUN, "seed": seed}, "t"), "t")
    result = Runner(p, tmp_path / "store", check=False, handle_signals=False).run()
    done = [(op["f"], op["fault"]) for op in read_history(result.history)
            if op["process"] == "nemesis" and "outcome" in op]
    return [(r.op["f"], r.op["fault"]) for r in p.fault_plan()], done


def test_a_run_does_the_planned_schedule_in_order_and_its_seed_replays_it(tmp_path, registered):
    registered(faults={"noop-b": fault_factory("noop")})
    planned, done = _requests(tmp_path / "a", 4)
    assert planned and overlaps(prepare(parse_scenario({**RUN, "seed": 4}, "t"), "t").fault_plan()) > 0
    # Each request's answer: a start records the fault's own op ("noop"), a stop its heal.
    assert [(("noop" if f == "start" else "heal"), name) for f, name in planned][:len(done)] == \
        [(f, name) for f, name in done]
    assert len(done) >= len(planned) - 2  # the last ones may fall after the main phase's end
    replanned, _ = _requests(tmp_path / "b", 4)
    assert replanned == planned


def test_a_random_schedule_refuses_a_mix_of_its_own():
    with pytest.raises(ScenarioError, match="mixed is a mix of its own"):
        prepare(parse_scenario({**RUN, "variant": "fabric-recommended", "nemesis": {"faults": ["mixed"],
                                                                                    "schedule": "random"}}, "t"), "t")


def test_an_unknown_schedule_is_refused_naming_the_field():
    with pytest.raises(ScenarioError, match="nemesis.schedule"):
        parse_scenario({**RUN, "nemesis": {"faults": ["noop"], "schedule": "sometimes"}}, "t")


def test_random_disk_draws_randoms_faults_and_a_disk_loss_in_most_runs():
    """random-disk is random with one more fault in its mix; most 5-minute runs draw a disk loss
    (else the scenario would seldom differ from random)."""
    from harness.scenario import load_scenario, scenario_path

    base, disk = (load_scenario(name) for name in ("random", "random-disk"))
    assert set(disk.nemesis.faults) == set(base.nemesis.faults) | {"disk-loss"}
    own = {"name", "description", "nemesis"}  # the rest is random's
    assert disk.model_dump(exclude=own) == base.model_dump(exclude=own)
    assert disk.nemesis.model_dump(exclude={"faults", "kind"}) == base.nemesis.model_dump(exclude={"faults", "kind"})
    drew = 0
    for seed in range(20):
        p = prepare(disk.model_copy(update={"seed": seed}), str(scenario_path("random-disk")))
        drew += any(r.op["f"] == "start" and r.op["fault"] == "disk-loss" for r in p.fault_plan())
    assert drew >= 12, f"{drew} of 20 seeds start a disk loss"
