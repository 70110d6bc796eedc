"""`ordeal shrink RUN_DIR`: the least that still reproduces a finding.

The run's fault schedule is a function of its scenario and seed (harness.plan.Plan.fault_plan),
so it can be written out as an explicit timeline: each request a time, a start or stop, a
fault (which names a role: a broker, the leader of a partition, the transaction coordinator)
and the seed of that fault's own choice, never a container's name. Then, as Zeller's delta
debugging does (ddmin), it drops fault steps while what is left still reproduces the finding:
the anomaly kind in at least `need` of `tries` runs. A start is dropped or kept with its stop.
Each candidate's main phase ends TAIL after its last step. Once the steps are 1-minimal:
- each fault that hits a node picked at random is tried as its targeted counterpart, the same
  action on the leader of a partition (SHARPER): a kill of a random broker loses acknowledged
  writes only when it happens to lead a partition being written, a kill of a leader always does;
- each stop is dropped where the finding comes without it (the fault then lasts until the final
  heal): one step fewer;
- each workload is dropped in turn where the finding comes without it.
Every candidate is a real run on the real cluster; the budget bounds them all, and what was
least when it ran out is kept. Last, outside the budget, the least scenario is run `confirm`
times: the rate a maintainer can expect, not the k of n that let it through.

What it writes beside the run: shrunk.toml, the least scenario found (`schedule =
"timeline"`) with its measured rate in its header, and shrink.json, every candidate tried with
its outcome, the steps before and after, and that rate.
"""
from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ground.anomalies import fails
from ground.generator import NS
from ground.run_record import CheckResults
from ground.settings_file import to_toml
from harness.reproduce import ReproduceError, plan_of, recorded, run_tries

SHRUNK_TOML = "shrunk.toml"
SHRINK_JSON = "shrink.json"
TAIL = 15.0  # seconds of main phase kept after the last step: the fault's effect must land
# A fault on a node picked at random among brokers, and the fault doing the same to a partition's
# leader: where the finding needs the leader hit, the targeted one forces what the other hits by luck.
SHARPER = {"kill-broker": "kill-leader", "kill-minority": "kill-leader", "isolate-node": "isolate-leader"}


@dataclass(frozen=True, eq=False)
class Unit:
    """What ddmin drops or keeps: a start with its stop, or a lone request (each unit itself:
    two equal requests are still two units)."""

    steps: tuple[dict[str, Any], ...]


def timeline(plan_requests: list[Any]) -> list[Unit]:
    """The requests as units: each start paired with the next stop of the same fault."""
    steps = [{"at": round(r.at / NS, 3), **r.op} for r in plan_requests]
    units: list[Unit] = []
    used: set[int] = set()
    for i, step in enumerate(steps):
        if i in used:
            continue
        used.add(i)
        if step["f"] == "start":
            stop = next((j for j in range(i + 1, len(steps)) if j not in used and steps[j]["f"] == "stop"
                         and steps[j]["fault"] == step["fault"]), None)
            if stop is not None:
                used.add(stop)
                units.append(Unit((step, steps[stop])))
                continue
        units.append(Unit((step,)))
    return units


def steps_of(units: list[Unit]) -> list[dict[str, Any]]:
    return sorted((s for u in units for s in u.steps), key=lambda s: (s["at"], s["f"] == "start"))


def candidate(base: dict[str, Any], units: list[Unit], duration: float | None = None,
              workloads: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The scenario with exactly `units` as its timeline, its main phase ending TAIL after the
    last step (a schedule halved runs half as long: every later candidate is cheaper), or after
    `duration`; and fewer workloads."""
    steps = steps_of(units)
    if duration is None and steps:
        duration = min(base["duration"], round(steps[-1]["at"] + TAIL, 1))
    nemesis = dict(base["nemesis"])
    faults = sorted({s["fault"] for s in steps}) or nemesis.get("faults", [])
    nemesis.update(schedule="timeline", steps=steps, faults=faults,
                   options={f: o for f, o in (nemesis.get("options") or {}).items() if f in faults})
    # The variant's expectations and promises follow the original's fault kinds, not the subset's.
    nemesis.setdefault("kind", None)
    out = dict(base, nemesis=nemesis)
    if duration is not None:
        out["duration"] = duration
    if workloads is not None:
        out["workloads"] = workloads
    return out


@dataclass
class Shrinker:
    base: dict[str, Any]
    source: str
    anomaly: str
    tries: int
    need: int
    deadline: float
    store: Path
    pool: Any
    say: Callable[[str], None]
    log: list[dict[str, Any]] = field(default_factory=list)
    best: dict[str, Any] | None = None  # the least scenario found so far that reproduces

    def reproduces(self, scenario: dict[str, Any], what: str) -> bool:
        """Whether `scenario` shows the anomaly in `need` of `tries` runs (stopping as soon as
        that is decided either way)."""
        if time.monotonic() > self.deadline:
            raise TimeoutError
        self.say(f"shrink: {what}")
        got = run_tries(lambda: plan_of(scenario, self.source), self.tries, self.store, self.pool, self.say,
                        enough=lambda t: t.found(self.anomaly) >= self.need
                        or t.found(self.anomaly) + (self.tries - len(t.runs)) < self.need)
        ok = got.found(self.anomaly) >= self.need
        if ok:
            self.best = scenario
        self.log.append({"tried": what, "steps": len(scenario["nemesis"]["steps"]), "duration": scenario["duration"],
                         "workloads": [w["name"] for w in scenario["workloads"]],
                         "found": f"{got.found(self.anomaly)}/{len(got.runs)}", "reproduces": ok})
        return ok

    def ddmin(self, units: list[Unit]) -> list[Unit]:
        """Zeller's ddmin over units: a 1-minimal subset that still reproduces."""
        n = 2
        while len(units) >= 2:
            chunks = [units[i * len(units) // n:(i + 1) * len(units) // n] for i in range(n)]
            for i, chunk in enumerate(chunks):
                if chunk and self.reproduces(candidate(self.base, chunk), f"{len(chunk)} of {len(units)} fault units"):
                    units, n = chunk, 2
                    break
                rest = [u for j, c in enumerate(chunks) if j != i for u in c]
                if n > 2 and rest and self.reproduces(candidate(self.base, rest),
                                                      f"{len(rest)} of {len(units)} fault units"):
                    units, n = rest, max(n - 1, 2)
                    break
            else:
                if n >= len(units):
                    break
                n = min(2 * n, len(units))
        return units


    def sharpen(self, units: list[Unit]) -> list[Unit]:
        """Each unit whose fault has a targeted counterpart (SHARPER), tried as that."""
        for i, unit in enumerate(units):
            sharper = SHARPER.get(unit.steps[0]["fault"])
            if sharper is None:
                continue
            tried = Unit(tuple(dict(s, fault=sharper) for s in unit.steps))
            units_then = units[:i] + [tried] + units[i + 1:]
            if self.reproduces(candidate(self.base, units_then), f"{unit.steps[0]['fault']} as {sharper}"):
                units = units_then
        return units

    def lone_starts(self, units: list[Unit]) -> list[Unit]:
        """Each stop dropped where the finding comes without it (the final heal ends the fault)."""
        for i, unit in enumerate(units):
            if len(unit.steps) != 2:
                continue
            start, stop = unit.steps
            units_then = units[:i] + [Unit((start,))] + units[i + 1:]
            if self.reproduces(candidate(self.base, units_then), f"{start['fault']} at {start['at']} s never stopped"):
                units = units_then
        return units

    def measure(self, scenario: dict[str, Any], runs: int) -> dict[str, Any]:
        """The scenario's rate over `runs` runs (all of them: no early stop, no budget)."""
        self.say(f"shrink: the least scenario, {runs} runs to measure its rate")
        got = run_tries(lambda: plan_of(scenario, self.source), runs, self.store, self.pool, self.say)
        return {"found": got.found(self.anomaly), "runs": len(got.runs), "rates": got.rates, "tries": got.runs}


def finding_of(run_dir: Path, asked: str | None) -> str:
    """The anomaly kind to keep: the one asked for, else the run's first that failed its verdict."""
    results = CheckResults.read(run_dir)
    found = [a for a, body in (results.anomalies if results else {}).items()
             if isinstance(body, dict) and body.get("count")]
    if asked:
        if asked not in found:
            raise ReproduceError(f"{run_dir}: the run found no {asked} (it found: {', '.join(found) or 'nothing'})")
        return asked
    idempotent, available = bool(results and results.idempotent), bool(results and results.available)
    failing = [a for a in found if fails(a, idempotent, available)]
    if not failing:
        raise ReproduceError(f"{run_dir}: no anomaly failed this run's verdict; name one with --anomaly")
    return failing[0]


def _search(shrinker: Shrinker, base: dict[str, Any], units: list[Unit], whole: dict[str, Any], before: int,
            run_dir: Path) -> bool:
    """The passes, in order, until done or out of budget; answers whether the budget ran out."""
    kind, need, tries = shrinker.anomaly, shrinker.need, shrinker.tries
    try:
        if not shrinker.reproduces(whole, f"the whole schedule as a timeline ({before} steps)"):
            raise ReproduceError(f"{run_dir}: {kind} did not come back in {need} of {tries} runs of its own schedule; "
                                 "`ordeal reproduce` measures its rate")
        shrinker.lone_starts(shrinker.sharpen(shrinker.ddmin(units)))
        for w in list(shrinker.best["workloads"]):
            least = shrinker.best
            rest = [x for x in least["workloads"] if x is not w]
            if rest:
                shrinker.reproduces(dict(least, workloads=rest), f"without workload {w['name']}")
    except TimeoutError:
        shrinker.say("shrink: the budget ran out; keeping the least found so far")
        return True
    return False


def shrink(run_dir: Path, *, anomaly: str | None = None, tries: int = 3, need: int = 2, budget: float = 3600.0,
           confirm: int = 10, store: Path = Path("store"), say: Callable[[str], None] = print) -> dict[str, Any]:
    """Shrink the run's finding; write shrunk.toml and shrink.json beside it; return shrink.json's content."""
    from harness.cluster_pool import ClusterPool

    run_dir = Path(run_dir)
    if not 1 <= need <= tries:
        raise ReproduceError(f"--need {need} must be between 1 and --tries {tries}")
    if confirm < 0:
        raise ReproduceError(f"--confirm {confirm} must be 0 (do not measure) or more runs")
    kind = finding_of(run_dir, anomaly)
    base, _ = recorded(run_dir)
    source = str(run_dir / "scenario.json")
    plan = plan_of(base, source)
    base["nemesis"]["kind"] = base["nemesis"].get("kind") or (plan.scenario.nemesis.fault_kinds[0]
                                                              if len(plan.scenario.nemesis.fault_kinds) == 1 else None)
    units = timeline(plan.fault_plan())
    before = len(steps_of(units))
    pool = ClusterPool(lease_kept=False)  # clusters of its own, booted again after each invalid run
    shrinker = Shrinker(base, source, kind, tries, need, time.monotonic() + budget,
                        Path(store) / f"shrink-{plan.scenario.name}", pool, say)
    whole = candidate(base, units)
    try:
        out_of_time = _search(shrinker, base, units, whole, before, run_dir)
        best = shrinker.best or whole
        rate = shrinker.measure(best, confirm) if confirm else None
    finally:
        pool.close()
    after = len(best["nemesis"]["steps"])
    best = dict(best, name=f"{base['name']}-shrunk",
                description=f"{kind} of {run_dir.name} ({base['name']} with seed {base['seed']}), shrunk: "
                            f"{after} of its {before} fault steps")
    measured = (f"It showed {kind} in {rate['found']} of {rate['runs']} runs (`ordeal shrink --confirm`)."
                if rate else "Its rate was not measured (--confirm 0).")
    header = (f"Shrunk by `ordeal shrink` from {run_dir} ({kind}): {before} fault steps -> {after}.\n{measured}\n"
              "The timeline names faults by role; each step's seed picks among the nodes of that role.")
    (run_dir / SHRUNK_TOML).write_text(to_toml(best, header))
    said = {"of": str(run_dir), "anomaly": kind, "tries": tries, "need": need, "steps_before": before,
            "steps_after": after, "out_of_time": out_of_time, "scenario": str(run_dir / SHRUNK_TOML),
            "rate": rate, "candidates": shrinker.log}
    (run_dir / SHRINK_JSON).write_text(json.dumps(said, indent=2) + "\n")
    say(f"shrink: {kind}: {before} fault steps -> {after}; {run_dir / SHRUNK_TOML}; "
        + (f"{kind} in {rate['found']} of {rate['runs']} runs of it" if rate else "rate not measured"))
    return said
