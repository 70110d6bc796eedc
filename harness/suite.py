"""Suites (scenarios/suites/*.toml): a matrix of variants x scenarios run within a time
budget, each run judged against what its variant expects under that scenario.

A scenario named as a fault kind (scenarios/kill-broker.toml, ...) is judged by the
variant's [expect] entry of that name; any other scenario is expected valid. Runs are
grouped by cluster (a variant, on each Kafka release of a kafka_versions axis) so that each
boots once, and again after a run that came out invalid (what lost data is not a clean start
for the next run). A run that would not fit in what is left of the budget is skipped, and
said so: a suite never overruns its budget silently.
"""
from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ground import kafka_versions
from ground.run_files import COMPARE_HTML, HISTORY, SUITE_JSON
from ground.settings_file import SAFE_NAME, read_settings, settings_path
from ground.validation_message import one_line
from ground.variant import ClientSettings
from harness.scenario import SCENARIOS_DIR, ScenarioError

SUITES_DIR = SCENARIOS_DIR / "suites"
BOOT_ESTIMATE = 40.0  # seconds to boot a variant's cluster, before one has been measured
RUN_OVERHEAD = 60.0  # seconds a run takes beyond main phase + recovery wait, before one has been measured


class SuiteError(ValueError):
    """A suite that cannot run; str() is the one-line message for the user."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class MatrixSpec(_Strict):
    variants: list[str] = Field(min_length=1, description="variant names or TOML paths")
    scenarios: list[str] = Field(min_length=1, description="scenario names or TOML paths")
    repeat: int = Field(1, ge=1, le=1000, description="runs of each cell, each with its own seed")
    duration: float | None = Field(None, gt=0, le=7 * 86_400, description="main-phase seconds of these runs (default: each scenario's)")
    clients: list[str] | None = Field(
        None, min_length=1, description="Kafka clients to run each cell on: librdkafka, java, or a release of one "
                                        "(librdkafka@2.3.0: confluent-kafka 2.3.0; java@3.9.2); default: each "
                                        "scenario's or variant's")
    kafka_versions: list[str] | None = Field(
        None, min_length=1, description="Kafka releases to run each cell's variant on, in place of its kafka.version "
                                        "(each its own cluster); default: the variant's own")
    expect: Literal["valid", "invalid", "invalid-possible"] | None = Field(
        None, description="the verdict these cells must reach, instead of what their variants expect: a finding "
                          "must come back where it lives (invalid) and not where it was fixed (valid)")

    @field_validator("clients")
    @classmethod
    def _client_labels(cls, labels: list[str] | None) -> list[str] | None:
        for label in labels or []:
            ClientSettings.from_label(label)  # ValueError: one line naming the label
        return labels

    @field_validator("kafka_versions")
    @classmethod
    def _kafka_releases(cls, versions: list[str] | None) -> list[str] | None:
        for version in versions or []:
            kafka_versions.parse(version)  # ValueError: not X.Y.Z (the variant judges the rest, per cell)
        return versions


class SuiteSpec(_Strict):
    name: str = Field(min_length=1, max_length=100, pattern=SAFE_NAME,
                      description="a safe word: it names the suite's directory in the store")
    description: str = ""
    budget: float = Field(gt=0, le=365 * 86_400, description="seconds for the whole suite, boots included")
    matrix: list[MatrixSpec] = Field(min_length=1)


@dataclass(frozen=True)
class Cell:
    """One run to do: a scenario on a variant; `round` counts repeats of the same pair."""

    variant: str
    scenario: str
    round: int
    duration: float | None = None  # overrides the scenario's main phase
    client: str | None = None  # overrides the scenario's (and variant's) Kafka client: "java", "librdkafka@2.3.0"
    expect: str | None = None  # overrides what the variant expects of the cell's run
    kafka_version: str | None = None  # overrides the variant's kafka.version (harness.plan.prepare)

    @property
    def axes(self) -> list[str]:
        """The values of the matrix's axes beyond variant and scenario, as labels say them."""
        return [a for a in (f"kafka {self.kafka_version}" if self.kafka_version else None, self.client) if a]

    @property
    def label(self) -> str:
        return (f"{self.variant} x {self.scenario}" + (f" ({', '.join(self.axes)})" if self.axes else "")
                + (f" #{self.round + 1}" if self.round else ""))


@dataclass
class Outcome:
    """What became of one cell."""

    cell: Cell
    expected: str
    verdict: str | None = None  # None: skipped, or the run failed to happen
    anomalies: str = ""
    run_dir: Path | None = None
    seconds: float = 0.0
    skipped: str = ""  # why the cell was not run
    error: str = ""  # why the run did not produce a verdict
    faults_missed: str = ""  # why the run cannot count as under its scenario's faults (ground.fault_outcome)
    undecided: str = ""  # why an unknown verdict is unknown: which checker, on what

    @property
    def met(self) -> bool | None:
        """True / False for a decided run; None when skipped, failed or undecided. A verdict
        the variant allows is undecided when no fault of the scenario took effect: the run
        says nothing about the faults it was for (a verdict it forbids stays UNEXPECTED)."""
        from ground.run_record import met

        if self.verdict is None:
            return None
        return met(self.expected, self.verdict, self.faults_missed or None)

    @property
    def fault_note(self) -> str:
        """Whether the faults took effect, as the suite's lines and table say it."""
        if self.verdict is None:
            return ""
        return f"faults: {self.faults_missed}" if self.faults_missed else "faults took effect"

    @property
    def status(self) -> str:
        if self.skipped:
            return "skipped"
        if self.error:
            return "error"
        return {True: "as expected", False: "UNEXPECTED", None: "undecided"}[self.met]


def suite_path(name_or_path: str) -> Path:
    return settings_path(name_or_path, SUITES_DIR)


def load_suite(name_or_path: str, budget: float | None = None, duration: float | None = None,
               variants: list[str] | None = None) -> SuiteSpec:
    """The suite, with the CLI's overrides; every variant and scenario it names is loaded
    and validated here, before anything boots. `variants` keeps only the cells of those
    variants, so that a suite longer than one sitting (detection-random's 7 hours) can be run
    a variant at a time; `ordeal compare` of the parts gives one table."""
    path, data = read_settings(name_or_path, SUITES_DIR, "suite", SuiteError)
    data.setdefault("name", path.stem)
    if budget is not None:
        data["budget"] = budget
    if duration is not None and isinstance(data.get("matrix"), list):
        data["matrix"] = [{**m, "duration": duration} if isinstance(m, dict) else m for m in data["matrix"]]
    try:
        spec = SuiteSpec.model_validate(data)
    except ValidationError as exc:
        raise SuiteError(f"suite {path}: {one_line(exc)}") from None
    if variants:
        named = {v for m in spec.matrix for v in m.variants}
        if unknown := [v for v in variants if v not in named]:
            raise SuiteError(f"suite {path}: no cell runs on {', '.join(unknown)} (its variants: {', '.join(sorted(named))})")
        kept = [m.model_copy(update={"variants": [v for v in m.variants if v in variants]}) for m in spec.matrix]
        spec = spec.model_copy(update={"matrix": [m for m in kept if m.variants]})
    for cell in cells(spec):
        plan_cell(cell, str(path))
    return spec


def cells(spec: SuiteSpec) -> list[Cell]:
    """Every run of the suite, grouped by cluster (a variant on one Kafka release) in order of
    first mention."""
    found: list[Cell] = []
    for m in spec.matrix:
        for _, v, k, s, c in itertools.product(range(m.repeat), m.variants, m.kafka_versions or [None], m.scenarios,
                                               m.clients or [None]):
            taken = sum(1 for cell in found if (cell.variant, cell.kafka_version, cell.scenario, cell.client) ==
                        (v, k, s, c))
            found.append(Cell(v, s, taken, m.duration, c, m.expect, k))
    order = list(dict.fromkeys((c.variant, c.kafka_version) for c in found))
    return sorted(found, key=lambda c: order.index((c.variant, c.kafka_version)))  # stable within a cluster


def plan_cell(cell: Cell, source: str) -> Any:
    """The cell's harness.plan.Plan; a mistake is one line naming the suite and the cell."""
    from harness.plan import prepare
    from harness.scenario import load_scenario, scenario_path

    try:
        client = ClientSettings.from_label(cell.client).model_dump(exclude_none=True) if cell.client else None
        scenario = load_scenario(cell.scenario, {"variant": cell.variant, "duration": cell.duration, "client": client})
        return prepare(scenario, str(scenario_path(cell.scenario)), kafka_version=cell.kafka_version)
    except ScenarioError as exc:
        raise SuiteError(f"suite {source}: {cell.label}: {exc}") from None


def prepare_clients(todo: list[Cell], source: str) -> None:
    """Install and start every librdkafka release the cells run on (workloads/librdkafka/),
    before anything boots: one that cannot be installed is a SuiteError naming its cell."""
    from workloads.kafka_clients import ClientUnavailable, KafkaClient

    ready: set[str] = set()
    for cell in todo:
        plan = plan_cell(cell, source)
        if plan.client is None:
            continue
        client = KafkaClient(plan.client.implementation, plan.client.version)
        if not client.isolated or client.version in ready:
            continue
        try:
            client.prepare()
        except ClientUnavailable as exc:
            raise SuiteError(f"suite {source}: {cell.label}: client: {exc}") from None
        ready.add(str(client.version))


def expected_verdict(plan: Any) -> str:
    """What the variant expects of the plan's run: the strictest of its scenario's fault kinds'
    [expect] entries (harness.plan.Plan.judgement), valid where none is stated."""
    return plan.judgement().expectation if plan.variant is not None else "valid"


class Budget:
    """Seconds left, and what the next run and boot are likely to take (the mean of those
    measured so far, the estimates before)."""

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic):
        self.seconds, self.clock, self.start = seconds, clock, clock()
        self.overheads: list[float] = []
        self.boots: list[float] = []

    def left(self) -> float:
        return self.seconds - (self.clock() - self.start)

    def estimate(self, main_and_recovery: float, boot: bool) -> float:
        overhead = sum(self.overheads) / len(self.overheads) if self.overheads else RUN_OVERHEAD
        boot_s = (sum(self.boots) / len(self.boots) if self.boots else BOOT_ESTIMATE) if boot else 0.0
        return main_and_recovery + overhead + boot_s


@dataclass
class SuiteResult:
    suite_dir: Path
    outcomes: list[Outcome]
    signal: int | None = None
    compare: Path | None = None
    junit: Path | None = None
    matrix: Any = None  # reports.compare.Matrix of the runs that were checked

    @property
    def exit_code(self) -> int:
        """0 every run met its expectation; 1 any did not, was undecided, failed or was
        skipped; 128+n stopped by signal n."""
        if self.signal:
            return 128 + self.signal
        return 0 if self.outcomes and all(o.met for o in self.outcomes) else 1


def run_suite(spec: SuiteSpec, store: Path, source: str, *, say: Callable[[str], None] = print,
              budget_clock: Callable[[], float] = time.monotonic) -> SuiteResult:
    """Run every cell that fits in the budget; write suite.json, junit.xml and compare.html
    into store/suite-<name>/<UTC time>/ (the runs go below it); say one line per run."""
    from datetime import datetime, timezone

    from clusters.errors import ClusterError
    from harness.cluster_pool import ClusterPool
    from harness.evidence import keep_partition_files
    from harness.runner import RunError, Runner
    from harness.store import create_run_dir, point_latest

    todo = cells(spec)
    prepare_clients(todo, source)
    suite_store = Path(store) / f"suite-{spec.name}"
    suite_dir = create_run_dir(Path(store), f"suite-{spec.name}", datetime.now(timezone.utc))
    point_latest(suite_store, suite_dir)
    budget = Budget(spec.budget, budget_clock)
    pool, booted = ClusterPool(), set()
    result = SuiteResult(suite_dir, [])
    try:
        for n, cell in enumerate(todo, 1):
            plan = plan_cell(cell, source)
            outcome = Outcome(cell, cell.expect or expected_verdict(plan))
            result.outcomes.append(outcome)
            if result.signal:
                outcome.skipped = f"suite stopped by signal {result.signal}"
                continue
            cluster = plan.variant.name if plan.variant is not None else cell.variant  # the axis renames it
            needs_boot = plan.needs_cluster and cluster not in booted
            want = budget.estimate(plan.scenario.duration + plan.scenario.recovery_wait, needs_boot)
            if want > budget.left():
                outcome.skipped = f"needs about {want:.0f} s, {max(0.0, budget.left()):.0f} s of the budget left"
                say(f"[{n}/{len(todo)}] {cell.label}: skipped ({outcome.skipped})")
                continue
            t0 = budget_clock()
            try:
                live = None
                if plan.needs_cluster:
                    live = pool.get(plan.variant)
                    if needs_boot:
                        budget.boots.append(budget_clock() - t0)
                        booted.add(cluster)
                t1 = budget_clock()
                run = Runner(plan, suite_dir, cluster=live, check=True).run()
            except (ClusterError, RunError) as exc:
                outcome.error = str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__
                outcome.seconds = budget_clock() - t0
                say(f"[{n}/{len(todo)}] {cell.label}: error: {outcome.error}")
                pool.release(cluster)
                booted.discard(cluster)
                continue
            outcome.seconds = budget_clock() - t0
            budget.overheads.append(max(0.0, budget_clock() - t1 - plan.scenario.duration - plan.scenario.recovery_wait))
            outcome.run_dir = run.run_dir
            if run.signal:
                result.signal = run.signal
                outcome.error = f"stopped by signal {run.signal}"
            elif run.valid is None:
                outcome.error = "not checked: " + ("; ".join(run.notes) or "the checkers did not run")
            elif run.check_error is not None:
                outcome.error = f"check failed: {run.check_error}"
            else:
                outcome.verdict, outcome.anomalies = run.verdict, run.anomaly_summary()
                outcome.faults_missed = run.faults_missed or ""
                outcome.undecided = run.unknown_reason
            kept = None
            if outcome.verdict == "invalid" and plan.needs_cluster:
                # What the brokers wrote there, before the reboot below removes it.
                kept = keep_partition_files(live, run.results, run.run_dir)
            if plan.needs_cluster and (outcome.verdict == "invalid" or plan.changes_cluster):
                # A cluster that lost data (a truncated partition, a Fabric chain whose
                # offset is gone), or that a fault changed for good (migrated to Raft), is no
                # clean start: the variant's next run boots a fresh one.
                pool.release(cluster)
                booted.discard(cluster)
            say(f"[{n}/{len(todo)}] {cell.label}: {outcome.verdict or outcome.error} "
                f"({outcome.anomalies or 'no anomalies'}); expected {outcome.expected}: {outcome.status}"
                + (f"; {outcome.fault_note}" if outcome.fault_note else "")
                + (f"; undecided: {outcome.undecided}" if outcome.undecided else "")
                + f"; {outcome.seconds:.0f} s; {run.run_dir}")
            if kept:
                say(f"    {kept}")
            if outcome.met is not True:
                for line in fault_lines(run.run_dir / HISTORY):
                    say(line)
    finally:
        pool.close()
        _write_outputs(spec, result)
    return result


def fault_lines(history: Path, limit: int = 24, width: int = 300) -> list[str]:
    """What the run's faults did, one short line per nemesis op (a fault's steps each on
    their own line), said under an UNEXPECTED cell: CI's log outlives the fresh clone whose
    store held the run, and why a fault found nothing is most often in these ops (no
    election, nothing committed to lose)."""
    import json

    try:
        from reports.history_digest import read_history
    except ModuleNotFoundError:  # reports not installed (see _write_outputs)
        return ["    faults: not told (reports not installed)"]
    lines = ["    faults, as the nemesis recorded them:"]
    try:
        for op in read_history(history):
            if op.get("process") != "nemesis":
                continue
            value = op.get("value") if isinstance(op.get("value"), dict) else {"value": op.get("value")}
            at = op["time"] / 1e9 if isinstance(op.get("time"), (int, float)) else float("nan")
            rest = {k: v for k, v in value.items() if k != "steps"}
            lines.append(f"      {at:6.1f} s {op.get('f')}: {json.dumps(rest, default=str)}"[:width])
            for step in value.get("steps") or []:
                if isinstance(step, dict):
                    lines.append(f"               - {step.get('f')}: {json.dumps(step.get('value'), default=str)}"[:width])
    except OSError as exc:
        return [f"    faults: history not readable ({exc.__class__.__name__})"]
    if len(lines) == 1:
        return ["    faults: none recorded"]
    return lines[:limit] + ([f"      ... {len(lines) - limit} more"] if len(lines) > limit else [])


def _write_outputs(spec: SuiteSpec, result: SuiteResult) -> None:
    from harness.store import write_json

    write_json(result.suite_dir / SUITE_JSON, {
        "suite": spec.model_dump(mode="json"),
        "exit_code": result.exit_code,
        "outcomes": [{"variant": o.cell.variant, "scenario": o.cell.scenario, "round": o.cell.round,
                      "kafka_version": o.cell.kafka_version, "client": o.cell.client, "label": o.cell.label,
                      "expected": o.expected, "verdict": o.verdict, "status": o.status, "anomalies": o.anomalies,
                      "faults_missed": o.faults_missed or None,
                      "seconds": round(o.seconds, 1), "skipped": o.skipped, "error": o.error,
                      "run_dir": str(o.run_dir) if o.run_dir else None} for o in result.outcomes],
    })
    try:
        from reports.compare import write_compare
        from reports.junit import write_suite_junit
        from reports.run_files import RunDirError
    except ModuleNotFoundError:  # reports not installed: suite.json is the record
        return
    result.junit = write_suite_junit(result.suite_dir, spec.name, result.outcomes)
    try:
        result.compare, result.matrix = write_compare([result.suite_dir], result.suite_dir / COMPARE_HTML)
    except RunDirError:  # no run got as far as results.json
        result.compare = None
