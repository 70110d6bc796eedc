"""A finding's schedule as an explicit timeline, and delta debugging over it (harness/shrink.py):
offline, with a stand-in for the runs that decide whether a candidate still reproduces."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from ground.generator import NS
from harness.plan import prepare
from harness.scenario import ScenarioError, load_scenario, parse_scenario
from harness.shrink import TAIL, Shrinker, candidate, steps_of, timeline


def _base(seed: int = 7) -> dict:
    return load_scenario("kill-broker", {"seed": seed}).model_dump(mode="json", exclude_none=True)


def test_a_schedule_becomes_units_each_start_with_its_stop():
    plan = prepare(load_scenario("random", {"seed": 11}), "random")
    units = timeline(plan.fault_plan())
    assert sum(len(u.steps) for u in units) == len(plan.fault_plan())
    for unit in units:
        if len(unit.steps) == 2:
            start, stop = unit.steps
            assert (start["f"], stop["f"], start["fault"]) == ("start", "stop", stop["fault"])
            assert start["at"] <= stop["at"]


def test_a_timeline_scenario_requests_exactly_its_steps_at_their_times():
    base = _base()
    units = timeline(prepare(parse_scenario(base, "k"), "k").fault_plan())
    shrunk = parse_scenario(candidate(base, units[1:2]), "k")
    requests = prepare(shrunk, "k").fault_plan()
    assert [(r.at / NS, r.op["f"]) for r in requests] == [(s["at"], s["f"]) for s in units[1].steps]
    assert shrunk.nemesis.schedule == "timeline" and shrunk.nemesis.faults == ["kill-broker"]


def test_a_timeline_out_of_order_or_naming_another_fault_is_refused():
    base = _base()
    steps = [{"at": 5, "f": "start", "fault": "kill-broker"}, {"at": 1, "f": "stop", "fault": "kill-broker"}]
    with pytest.raises(ScenarioError, match="not in time order"):
        parse_scenario(dict(base, nemesis={"faults": ["kill-broker"], "schedule": "timeline", "steps": steps}), "k")
    with pytest.raises(ScenarioError, match="not in nemesis.faults"):
        parse_scenario(dict(base, nemesis={"faults": ["kill-leader"], "schedule": "timeline", "steps": steps[:1]}), "k")


def test_delta_debugging_keeps_just_the_units_that_bring_the_finding_back():
    base = load_scenario("random", {"seed": 3}).model_dump(mode="json", exclude_none=True)
    units = timeline(prepare(parse_scenario(base, "r"), "r").fault_plan())
    assert len(units) >= 8
    needed = {units[2], units[5]}  # the finding needs these two faults, together
    asked: list[int] = []

    class Stand(Shrinker):
        def reproduces(self, scenario, what):
            steps = scenario["nemesis"]["steps"]
            asked.append(len(steps))
            return all(s in steps for u in needed for s in u.steps)

    shrinker = Stand(base, "r", "lost-write", 3, 2, time.monotonic() + 60, Path("/nonexistent"), None, lambda s: None)
    kept = shrinker.ddmin(units)
    assert set(kept) == needed
    assert len(asked) < 4 * len(units)  # far fewer candidates than subsets
    assert steps_of(kept) == sorted((s for u in needed for s in u.steps), key=lambda s: (s["at"], s["f"] == "start"))


def test_a_candidate_keeps_the_options_of_its_own_faults_only():
    base = load_scenario("random", {"seed": 3}).model_dump(mode="json", exclude_none=True)
    base["nemesis"]["options"] = {f: {"seed": 1} for f in base["nemesis"]["faults"]}
    units = timeline(prepare(parse_scenario(base, "r"), "r").fault_plan())
    shrunk = parse_scenario(candidate(base, units[:1]), "r")  # an option of a dropped fault would be refused
    assert set(shrunk.nemesis.options) == set(shrunk.nemesis.faults)


def _stand(base: dict, holds) -> Shrinker:
    """A Shrinker whose candidates reproduce where `holds(steps)` says (no cluster)."""

    class Stand(Shrinker):
        def reproduces(self, scenario, what):
            parse_scenario(scenario, "s")  # every candidate must be a scenario ordeal can run
            ok = holds(scenario["nemesis"]["steps"])
            if ok:
                self.best = scenario
            return ok

    return Stand(base, "s", "lost-write", 3, 2, time.monotonic() + 60, Path("/nonexistent"), None, lambda s: None)


def test_a_kill_of_a_random_broker_becomes_a_kill_of_a_leader_where_that_still_reproduces():
    base = _base()
    units = timeline(prepare(parse_scenario(base, "k"), "k").fault_plan())[:1]
    sharpened = _stand(base, lambda steps: True).sharpen(units)
    assert {s["fault"] for s in steps_of(sharpened)} == {"kill-leader"}
    assert [(s["at"], s["f"]) for s in steps_of(sharpened)] == [(s["at"], s["f"]) for s in steps_of(units)]
    kept = _stand(base, lambda steps: all(s["fault"] == "kill-broker" for s in steps)).sharpen(units)
    assert kept == units


def test_a_stop_is_dropped_only_where_the_finding_comes_without_it():
    base = _base()
    units = timeline(prepare(parse_scenario(base, "k"), "k").fault_plan())[:2]
    assert all(len(u.steps) == 2 for u in units)
    first_stop = units[0].steps[1]
    # the finding needs the first fault stopped (its restart), not the second
    lone = _stand(base, lambda steps: first_stop in steps).lone_starts(units)
    assert [len(u.steps) for u in lone] == [2, 1]
    assert [s["f"] for s in steps_of(lone)].count("stop") == 1


def test_a_candidate_runs_until_shortly_after_its_last_step_never_longer_than_the_run():
    base = load_scenario("random", {"seed": 3}).model_dump(mode="json", exclude_none=True)
    units = timeline(prepare(parse_scenario(base, "r"), "r").fault_plan())
    first = candidate(base, units[:1])
    assert first["duration"] == round(steps_of(units[:1])[-1]["at"] + TAIL, 1) < base["duration"]
    assert candidate(base, units)["duration"] <= base["duration"]
    assert candidate(base, units[:1], 99.0)["duration"] == 99.0
