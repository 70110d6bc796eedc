"""`ordeal hunt`: runs until the first finding or the time limit, with the replay command.
Noop runs (no cluster); the check is a stand-in that finds a loss in the third run."""
from __future__ import annotations

import shutil
import subprocess
import sys
from itertools import count

import pytest

import checkers.check
from harness.hunt import HuntError, hunt
from harness.scenario import SCENARIOS_DIR


@pytest.fixture
def noop_scenario(tmp_path):
    path = tmp_path / "quick.toml"
    shutil.copy(SCENARIOS_DIR / "noop.toml", path)
    path.write_text(path.read_text().replace("duration = 2 ", "duration = 0.6"))
    return str(path)


@pytest.fixture
def loss_in_third_run(monkeypatch):
    calls = count(1)

    def check_run(path, **kwargs):
        invalid = next(calls) == 3
        return {"valid": not invalid, "anomalies": {"lost-write": {"count": 4}} if invalid else {},
                "faults": {"recorded": True, "took_effect": True, "by_fault": {}, "failures": [], "more_failures": 0}}

    monkeypatch.setattr(checkers.check, "check_run", check_run)


def test_a_hunt_stops_at_the_first_invalid_run_and_says_how_to_replay_it(tmp_path, noop_scenario, loss_in_third_run):
    seeds = iter([11, 22, 33, 44])
    lines: list[str] = []
    result = hunt("fabric-recommended", scenario=noop_scenario, minutes=10, store=tmp_path / "store",
                  say=lines.append, draw_seed=lambda: next(seeds))
    assert [r.seed for r in result.runs] == [11, 22, 33] and [r.verdict for r in result.runs] == ["valid", "valid",
                                                                                                  "invalid"]
    assert result.finding.seed == 33 and result.exit_code == 1 and result.to_finding > 0
    assert result.replay == f"ordeal run {noop_scenario} --variant fabric-recommended --seed 33"
    assert any("run 3 seed 33: invalid (lost-write: 4)" in line for line in lines)
    assert lines[-1] == f"hunt: replay its schedule with: {result.replay}"
    assert result.finding.run_dir.parent.parent == tmp_path / "store" / "hunt-fabric-recommended"


def test_a_hunt_stops_when_the_next_run_would_not_fit_and_found_nothing_exits_0(tmp_path, noop_scenario,
                                                                                loss_in_third_run):
    now = [0.0]

    def clock():
        now[0] += 40.0  # every look at the clock costs 40 s: the limit comes after a run or two
        return now[0]

    lines: list[str] = []
    result = hunt("fabric-recommended", scenario=noop_scenario, minutes=5, store=tmp_path / "store",
                  say=lines.append, clock=clock, draw_seed=lambda: 1)
    assert 1 <= len(result.runs) < 3 and result.finding is None and result.exit_code == 0
    assert "stopping" in lines[-2] and lines[-1].startswith(f"hunt: nothing found in {len(result.runs)} runs")


def test_a_hunt_on_an_unknown_variant_is_refused_before_anything_runs(tmp_path):
    with pytest.raises(HuntError, match="no such file or shipped variant"):
        hunt("nosuch", minutes=1, store=tmp_path, say=lambda _: None)


def test_ordeal_hunt_refuses_a_bad_limit_with_exit_2():
    proc = subprocess.run([sys.executable, "-m", "cli.main", "hunt", "fabric-recommended", "--minutes", "0"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "--minutes must be more than 0" in proc.stderr
