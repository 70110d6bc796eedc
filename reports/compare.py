"""compare.html: variants x scenarios, one cell per combination, so configurations can be judged side by side.
A variant row is one configuration: the variant on its Kafka release, with the client the
scenario chose (a suite's kafka_versions and clients axes; reports.run_files.RunFiles.configuration).

Each cell holds, for every run of that combination, its verdict, anomaly counts,
availability (ok writes / attempted writes) and write latency p50 / p99, and links to
that run's report.html (written first when missing).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ground.run_files import COMPARE_HTML as COMPARE
from ground.run_files import HISTORY
from ground.run_files import REPORT_HTML as REPORT
from ground.run_files import RESULTS_JSON as RESULTS
from reports.history_digest import digest_history
from reports.page import render
from reports.report import build_context, write_context
from reports.run_files import RunDirError, RunFiles, load_run

RUNS_PER_CELL = 5  # newest runs shown in a cell; the older ones are counted
VERDICT_RANK = {"invalid": 0, "unknown": 1, "valid": 2}


@dataclass
class RunSummary:
    """One run as a compare cell shows it."""

    files: RunFiles
    report_href: str
    anomalies: list[tuple[str, int, str]]  # name, count, effect on the verdict
    availability: float | None
    writes_ok: int
    writes_attempted: int
    p50_ms: float | None
    p99_ms: float | None

    @property
    def verdict(self) -> str:
        return self.files.verdict


def find_runs(paths: list[Path]) -> list[Path]:
    """Run directories among paths: each one named, or found below a store directory by its results.json."""
    found: dict[Path, None] = {}
    for path in paths:
        path = Path(path)
        if not path.is_dir():
            raise RunDirError(f"{path} is not a directory")
        if (path / RESULTS).is_file() or (path / HISTORY).is_file():
            found[path.resolve()] = None  # a run named directly counts even when unchecked
            continue
        for root, dirs, files in os.walk(path):  # does not follow symlinks such as `latest`
            dirs.sort()
            if RESULTS in files:
                found[Path(root).resolve()] = None
                dirs.clear()
    if not found:
        raise RunDirError("no run directory with results.json under " + ", ".join(str(p) for p in paths))
    return list(found)


def summarize(run_dir: Path, out_dir: Path) -> RunSummary:
    files = load_run(run_dir, need_history=False)
    report = run_dir / REPORT
    if files.has_history:
        if report.is_file():
            digest = digest_history(files.history)
        else:  # one pass serves both the missing report and this summary
            ctx = build_context(run_dir)
            write_context(ctx)
            digest = ctx.digest
        ok, attempted = digest.writes_ok, digest.writes_attempted
        p50, p99, avail = digest.write_latency_ms(0.5), digest.write_latency_ms(0.99), digest.availability
    else:
        ok = attempted = 0
        p50 = p99 = avail = None
    href = os.path.relpath(report, out_dir) if report.is_file() else ""
    return RunSummary(
        files=files,
        report_href=Path(href).as_posix() if href else "",
        anomalies=[(a.name, a.count, files.effect(a)) for a in files.anomalies],
        availability=avail,
        writes_ok=ok,
        writes_attempted=attempted,
        p50_ms=p50,
        p99_ms=p99,
    )


@dataclass
class Matrix:
    variants: list[str]
    scenarios: list[str]
    cells: dict[tuple[str, str], list[RunSummary]]

    def shown(self, variant: str, scenario: str) -> list[RunSummary]:
        return self.cells.get((variant, scenario), [])[-RUNS_PER_CELL:]

    def hidden(self, variant: str, scenario: str) -> list[RunSummary]:
        return self.cells.get((variant, scenario), [])[:-RUNS_PER_CELL]

    def worst(self, variant: str, scenario: str) -> str:
        runs = self.cells.get((variant, scenario), [])
        return min((r.verdict for r in runs), key=VERDICT_RANK.__getitem__, default="empty")


def build_matrix(runs: list[RunSummary]) -> Matrix:
    cells: dict[tuple[str, str], list[RunSummary]] = {}
    for r in runs:
        cells.setdefault((r.files.configuration, r.files.scenario_name), []).append(r)
    for group in cells.values():
        group.sort(key=lambda r: (str(r.files.run.get("started", "")), str(r.files.path)))
    return Matrix(
        variants=sorted({v for v, _ in cells}),
        scenarios=sorted({s for _, s in cells}),
        cells=cells,
    )


def write_compare(paths: list[Path], out: Path) -> tuple[Path, Matrix]:
    """Write one comparison page for the runs found under paths; return its path and the matrix."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out_dir = out.parent.resolve()
    runs = [summarize(p, out_dir) for p in find_runs(paths)]
    matrix = build_matrix(runs)
    totals = {v: sum(1 for r in runs if r.verdict == v) for v in ("invalid", "unknown", "valid")}
    out.write_text(render("compare.html.j2", matrix=matrix, runs=runs, totals=totals, per_cell=RUNS_PER_CELL), encoding="utf-8")
    return out, matrix


def cell_text(runs: list[RunSummary]) -> str:
    """One cell as a line: verdicts (with tallies when several runs), anomaly counts summed
    over the runs with how many runs had each, UNEXPECTED where a verdict breaks the
    variant's promise, and NO-FAULT where no fault of the scenario took effect (undecided)."""
    if not runs:
        return "-"
    tally = {v: sum(1 for r in runs if r.verdict == v) for v in VERDICT_RANK}
    verdicts = ", ".join(f"{v} {n}/{len(runs)}" if len(runs) > 1 else v for v, n in tally.items() if n)
    counts: dict[str, list[int]] = {}
    for r in runs:
        for name, count, _ in r.anomalies:
            counts.setdefault(name, []).append(count)
    found = ", ".join(f"{name} {sum(c)}" + (f" in {len(c)}/{len(runs)}" if len(runs) > 1 else "")
                      for name, c in counts.items())
    unexpected = sum(1 for r in runs if r.files.as_expected is False)
    missed = sum(1 for r in runs if r.files.faults_missed)
    return (verdicts + (f" ({found})" if found else "") + (f" UNEXPECTED x{unexpected}" if unexpected else "")
            + (f" NO-FAULT x{missed}" if missed else ""))


def matrix_text(matrix: Matrix) -> str:
    """The matrix as a Markdown table, scenarios down and variants across, every run counted."""
    rows = [["scenario", *matrix.variants], ["---"] * (len(matrix.variants) + 1)]
    for s in matrix.scenarios:
        rows.append([s, *(cell_text(matrix.cells.get((v, s), [])) for v in matrix.variants)])
    return "\n".join("| " + " | ".join(row) + " |" for row in rows)
