"""`ordeal reproduce RUN_DIR --runs N`: how often a finding comes back.

A finding is a 1-in-N event: the seed repeats a run's schedule (which fault, when, on which
node its role picks), not its timing. So the run's own scenario is run again N times, with its
seed, on its variant (the variant as the run recorded it, written beside the run as
variant.toml), on one cluster booted for them (booted again after each invalid run, as a
suite does: a cluster that lost data is no clean start). Each anomaly kind's rate (in how many
of the N runs the checkers found it, failing the verdict or not) is printed and kept as
reproduce.json beside the run.
"""
from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ground.run_files import SCENARIO_JSON
from ground.run_record import RunFileError, RunRecord
from ground.settings_file import to_toml
from harness.plan import Plan, prepare
from harness.scenario import ScenarioError, parse_scenario

REPRODUCE_JSON = "reproduce.json"
VARIANT_TOML = "variant.toml"


class ReproduceError(ValueError):
    """A run directory that cannot be run again (one line)."""


@dataclass
class Tries:
    """What N runs of one scenario gave: per run its verdict and anomaly kinds."""

    runs: list[dict[str, Any]] = field(default_factory=list)

    def add(self, verdict: str, anomalies: list[str], run_dir: Path | None, error: str | None = None) -> None:
        self.runs.append({"verdict": verdict, "anomalies": sorted(anomalies), "run": str(run_dir) if run_dir else None,
                          **({"error": error} if error else {})})

    def found(self, anomaly: str) -> int:
        return sum(anomaly in r["anomalies"] for r in self.runs)

    @property
    def rates(self) -> dict[str, str]:
        counts = Counter(a for r in self.runs for a in r["anomalies"])
        return {a: f"{n}/{len(self.runs)}" for a, n in sorted(counts.items())}


def recorded(run_dir: Path) -> tuple[dict[str, Any], RunRecord]:
    """The run's resolved scenario (scenario.json) and run.json, with its variant written
    beside it as variant.toml (the scenario then names that file): what it ran, exactly."""
    run_dir = Path(run_dir)
    try:
        scenario = json.loads((run_dir / SCENARIO_JSON).read_text())
        record = RunRecord.read(run_dir)
    except (OSError, ValueError, RunFileError) as exc:
        raise ReproduceError(f"{run_dir}: not a run directory ordeal can run again ({exc})") from None
    if record is None or not isinstance(scenario, dict):
        raise ReproduceError(f"{run_dir}: no run.json or scenario.json")
    if record.seed is None:
        raise ReproduceError(f"{run_dir}: run.json records no seed")
    if record.variant_name and _shipped_as_recorded(record):
        scenario["variant"] = record.variant_name
    elif record.variant_name:
        path = run_dir / VARIANT_TOML
        if not path.exists():
            path.write_text(to_toml(record.variant, f"The variant run {run_dir.name} ran on, as its run.json records it."))
        scenario["variant"] = str(path.resolve())
    scenario["seed"] = record.seed
    return scenario, record


def _shipped_as_recorded(record: RunRecord) -> bool:
    """Whether the run's variant is a shipped one, unchanged since: the scenario may name it."""
    from ground.variant import VariantError, load_variant, shipped_variants

    if record.variant_name not in shipped_variants():
        return False
    try:
        return load_variant(record.variant_name).model_dump(mode="json") == record.variant
    except VariantError:
        return False


def plan_of(scenario: dict[str, Any], source: str) -> Plan:
    try:
        return prepare(parse_scenario(scenario, source), source)
    except ScenarioError as exc:
        raise ReproduceError(str(exc)) from None


def run_tries(make_plan: Callable[[], Plan], tries: int, store: Path, pool: Any, say: Callable[[str], None],
              enough: Callable[[Tries], bool] = lambda t: False) -> Tries:
    """Run a fresh plan of the scenario (`make_plan`: workloads keep state, such as their
    topics, that a second run must not share) up to `tries` times on `pool`'s cluster of its
    variant, or until `enough`."""
    from harness.runner import RunError, Runner

    got = Tries()
    for n in range(1, tries + 1):
        plan = make_plan()
        try:
            live = pool.get(plan.variant) if plan.needs_cluster else None
            result = Runner(plan, store, cluster=live).run()
        except RunError as exc:
            got.add("unknown", [], None, str(exc))
            say(f"  try {n}/{tries}: no run ({exc})")
            continue
        anomalies = [a for a, body in ((result.results or {}).get("anomalies") or {}).items()
                     if isinstance(body, dict) and body.get("count")]
        got.add(result.verdict, anomalies, result.run_dir)
        say(f"  try {n}/{tries}: {result.verdict} ({', '.join(anomalies) or 'no anomalies'}); {result.run_dir}")
        if result.signal:
            raise KeyboardInterrupt
        if plan.needs_cluster and (result.verdict == "invalid" or plan.changes_cluster):
            pool.release(plan.variant.name)  # a cluster that lost data is no clean start
        if enough(got):
            break
    return got


def reproduce(run_dir: Path, runs: int, store: Path, say: Callable[[str], None] = print) -> dict[str, Any]:
    """Run the run's scenario again `runs` times with its seed on its variant; write and return
    reproduce.json's content."""
    from harness.cluster_pool import ClusterPool

    run_dir = Path(run_dir)
    scenario, record = recorded(run_dir)
    plan = plan_of(scenario, str(run_dir / SCENARIO_JSON))
    say(f"reproduce: {plan.scenario.name} with seed {plan.seed} on {plan.variant.name if plan.variant else '-'}, "
        f"{runs} runs")
    pool = ClusterPool(lease_kept=False)  # clusters of its own, booted again after each invalid run
    try:
        got = run_tries(lambda: plan_of(scenario, str(run_dir / SCENARIO_JSON)), runs,
                        Path(store) / f"reproduce-{plan.scenario.name}", pool, say)
    finally:
        pool.close()
    said = {"of": str(run_dir), "scenario": plan.scenario.name, "variant": plan.variant.name if plan.variant else None,
            "seed": plan.seed, "runs": len(got.runs), "rates": got.rates, "tries": got.runs}
    (run_dir / REPRODUCE_JSON).write_text(json.dumps(said, indent=2) + "\n")
    for anomaly, rate in got.rates.items():
        say(f"reproduce: {anomaly} in {rate} runs")
    if not got.rates:
        say(f"reproduce: no anomaly in {len(got.runs)} runs")
    return said
