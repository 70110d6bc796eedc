"""`ordeal hunt`: randomized runs back to back on one variant until the first finding.

A user pointing ordeal at a new Kafka asks two things: is there a bug here, and how long
does ordeal take to find one. A hunt answers both: it runs a scenario (by default the
random schedule, scenarios/random.toml) with a fresh seed each time on one cluster,
booted once (again only if a run's cluster is lost), says each run's seed, verdict and
anomalies as it goes, and stops at the first invalid verdict or when the next run would
not fit in the time limit. It ends with the time to the finding
and the command that replays it: the schedule is a function of the seed.
"""
from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.scenario import ScenarioError, load_scenario, scenario_path

RUN_OVERHEAD = 90.0  # seconds a run takes beyond main phase and recovery, before one is measured


class HuntError(ValueError):
    """A hunt that cannot start; str() is the one-line message for the user."""


@dataclass
class HuntRun:
    seed: int
    verdict: str
    anomalies: str
    run_dir: Path | None
    seconds: float
    note: str = ""


@dataclass
class HuntResult:
    runs: list[HuntRun] = field(default_factory=list)
    finding: HuntRun | None = None
    to_finding: float | None = None  # seconds from the hunt's start to the end of the finding run
    signal: int | None = None
    replay: str = ""

    @property
    def exit_code(self) -> int:
        """1 a finding (as `ordeal run` exits for an invalid run), 0 none within the limit,
        3 no run gave a verdict, 128+n stopped by signal n."""
        if self.signal:
            return 128 + self.signal
        if self.finding is not None:
            return 1
        return 0 if any(r.verdict in ("valid", "invalid") for r in self.runs) else 3


def hunt(variant: str, *, scenario: str = "random", minutes: float, store: Path, duration: float | None = None,
         max_runs: int | None = None, say: Callable[[str], None] = print,
         clock: Callable[[], float] = time.monotonic, draw_seed: Callable[[], int] = lambda: secrets.randbits(31)
         ) -> HuntResult:
    """Hunt on `variant` for `minutes` (or `max_runs` runs); runs go under STORE/hunt-<variant>/."""
    from harness.cluster_pool import ClusterPool
    from harness.evidence import keep_partition_files
    from harness.plan import prepare
    from harness.runner import RunError, Runner

    def plan_for(seed: int) -> Any:
        try:
            spec = load_scenario(scenario, {"variant": variant, "seed": seed, "duration": duration})
            return prepare(spec, str(scenario_path(scenario)))
        except ScenarioError as exc:
            raise HuntError(str(exc)) from None

    first = plan_for(0)  # every mistake in the scenario or variant is said before anything boots
    limit, start = minutes * 60.0, clock()
    store = Path(store) / f"hunt-{first.variant.name if first.variant else 'none'}"
    overheads: list[float] = []
    pool, result = ClusterPool(), HuntResult()
    say(f"hunt: {scenario} on {variant}, {minutes:g} min; each run {first.scenario.duration:.0f} s "
        f"+ recovery {first.scenario.recovery_wait:.0f} s; runs in {store}")
    try:
        while max_runs is None or len(result.runs) < max_runs:
            plan = plan_for(draw_seed())
            overhead = sum(overheads) / len(overheads) if overheads else RUN_OVERHEAD
            want = plan.scenario.duration + plan.scenario.recovery_wait + overhead
            left = limit - (clock() - start)
            if want > left:
                say(f"hunt: the next run needs about {want:.0f} s, {max(0.0, left):.0f} s left: stopping")
                break
            t0 = clock()
            try:
                live = pool.get(plan.variant) if plan.needs_cluster else None
                t1 = clock()
                run = Runner(plan, store, cluster=live, check=True).run()
            except RunError as exc:
                say(f"hunt: run {len(result.runs) + 1} seed {plan.seed}: error: {exc}")
                pool.release(plan.variant.name)
                result.runs.append(HuntRun(plan.seed, "error", "", None, clock() - t0, str(exc)))
                continue
            except Exception as exc:  # noqa: BLE001 - a cluster that cannot come up ends the hunt
                from clusters.errors import ClusterError

                if not isinstance(exc, ClusterError):
                    raise
                raise HuntError(f"cluster {plan.variant.name} did not come up: {exc}") from None
            overheads.append(max(0.0, clock() - t1 - plan.scenario.duration - plan.scenario.recovery_wait))
            note = run.check_error and f"check failed: {run.check_error}" or run.faults_missed or ""
            done = HuntRun(plan.seed, run.verdict, run.anomaly_summary(), run.run_dir, clock() - t0, note)
            result.runs.append(done)
            say(f"hunt: run {len(result.runs)} seed {plan.seed}: {done.verdict} ({done.anomalies})"
                + (f"; {note}" if note else "") + f"; {done.seconds:.0f} s; {run.run_dir}")
            if run.signal:
                result.signal = run.signal
                break
            if run.verdict == "invalid":
                kept = keep_partition_files(live, run.results, run.run_dir)
                if kept:
                    say(f"hunt: {kept}")
                result.finding, result.to_finding = done, clock() - start
                extra = f" --duration {duration:g}" if duration is not None else ""
                result.replay = f"ordeal run {scenario} --variant {variant} --seed {plan.seed}{extra}"
                break
    finally:
        pool.close()
    if result.finding is not None:
        f = result.finding
        say(f"hunt: found in {result.to_finding / 60:.1f} min, run {len(result.runs)}: {f.anomalies}; "
            f"report {f.run_dir}/report.html")
        say(f"hunt: replay its schedule with: {result.replay}")
    elif not result.signal:
        decided = sum(r.verdict in ("valid", "invalid") for r in result.runs)
        say(f"hunt: nothing found in {len(result.runs)} runs ({decided} with a verdict) "
            f"in {(clock() - start) / 60:.1f} min")
    return result
