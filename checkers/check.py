"""`check_history`: a run's history in, results.json out (the public entry point);
`check_histories`: the same for a batch of histories, judged by one set of Spark jobs.

results.json is read by reports: {"valid", "anomalies": {name: {"count", "examples",
"evidence"}}, "checkers": {"kafka"|"ordering"|"nodes": {"valid", "anomalies", "unknown",
"not_judged"}}, "unknown", "variant", "scenario", "idempotent", "stats", "warnings",
"history", "faults"}; "faults" says whether the run's faults took effect (checkers.faults). A checker's "not_judged" says, per anomaly, where it could not be judged
because the evidence is missing (no final read of a partition, no final deliver of a
channel or from an OSN: an interrupted run), at most 20 places and how many more;
"unknown" lists the same reasons, and either makes the checker unknown unless it found a
failure. The top-level "unknown" says why the whole history is unknown whatever its
checkers found short of a failure: it proves nothing (no client op completed ok that
sent or read anything). Examples are at most 10 per anomaly, evidence the sorted
history indices, at most 1000 per anomaly; "history" is the checked file's absolute
path, which `ordeal report` reads when the results are written elsewhere (--out).

Which checkers run is known before Spark starts (checkers.checker): a history none of
them can judge is answered without Spark. The checkers that run give their findings as
frames, and everything results.json needs from them is collected in one Spark action,
so that a check of a small history costs a few jobs, not dozens.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from checkers.checker import Checker, Findings, gathered, shared
from checkers.faults import history_fault_outcomes
from checkers.ingest.history import HISTORY, History, HistoryError, Tables, history_file, load_history
from checkers.registry import CHECKS
from checkers.runtime.session import SessionOnDemand, SparkUnavailable, fit_to_input, small_file
from checkers.verdict import checker_valid, overall_valid
from ground.run_record import RunFileError, RunRecord
from ground.run_files import RESULTS_JSON

MAX_EXAMPLES = 10
MAX_EVIDENCE = 1000
MAX_NOT_JUDGED = 20
# Every checker, in the order results.json lists them (see checkers.checker).
NOTHING_PROVEN = ("the history proves nothing: no client op completed ok that sent or read anything "
                  "(an ok send, a committed txn's send, a poll with records, a final read, a broadcast or a deliver)")


@dataclass(frozen=True)
class RunInfo:
    """What the checkers need from run.json; all absent for a bare history file."""

    variant: str | None = None
    scenario: str | None = None
    idempotent: bool = False
    available: bool = False  # the variant promises to serve again after the scenario's faults


def read_run_info(run_dir: Path) -> RunInfo:
    """Variant, scenario, producer idempotence and the availability promise, from run.json in
    `run_dir` (ground/run_record.py), if there is one."""
    try:
        record = RunRecord.read(run_dir)
    except RunFileError as exc:
        raise HistoryError(f"unreadable run file: {exc}") from None
    if record is None:
        return RunInfo()
    return RunInfo(variant=record.variant_name, scenario=record.scenario_name, idempotent=record.idempotent,
                   available=record.available)


def results_dir(path: Path, out_dir: Path | None = None) -> Path:
    """Where the results of the history at `path` (a run directory or a history file) go."""
    return Path(out_dir) if out_dir is not None else history_file(Path(path)).parent


Progress = Callable[[int | None, str], None]
# What the checkers found in one history: anomalies (count, examples, evidence by name), the
# reasons each anomaly was not judged somewhere, and statistics (checkers.check._collect).
Found = tuple[dict[str, Any], dict[str, list[str]], dict[str, int]]


@dataclass(frozen=True)
class _Loaded:
    """A history of a batch, read and ready to check: where its results go, and its run.json."""

    history: History
    out: Path
    run: RunInfo


def check_history(path: Path, *, out_dir: Path | None = None, spark_master: str | None = None,
                  idempotent: bool | None = None, spark: SparkSession | SessionOnDemand | None = None,
                  progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Check the history of a run directory or history file; write and return results.json.

    Raises HistoryError for input that cannot be checked. The rest is check_histories'
    for a batch of one; `progress` hears its lines."""
    say = progress or (lambda _: None)
    [results] = check_histories([path], out_dir=out_dir, spark_master=spark_master, idempotent=idempotent,
                                spark=spark, progress=lambda _, line: say(line))
    if isinstance(results, HistoryError):
        raise results
    return results


def check_histories(paths: list[Path], *, out_dir: Path | None = None, out_dirs: list[Path] | None = None,
                    spark_master: str | None = None, idempotent: bool | None = None,
                    spark: SparkSession | SessionOnDemand | None = None,
                    progress: Progress | None = None) -> list[dict[str, Any] | HistoryError]:
    """Check several histories (run directories or history files) as one batch: one set of
    Spark jobs judges them all, each as if alone (every table marks its rows with their
    history, checkers.ingest.history.HISTORY, and every check keys by it), so that a batch of
    small histories costs about what one costs. Writes each one's results.json; returns, in
    the order of `paths`, its results, or the HistoryError that kept it from being checked
    (the others are checked all the same).

    `out_dir` takes one history only; `out_dirs` names one folder per history, in the order
    of `paths` (else each goes beside its history). `idempotent` overrides what run.json says about the
    producer; `spark` is a running session, or one started on demand (only if a checker
    runs: several batches share one that way; without one, a Connect server of this call's
    own, stopped at its end, checkers.runtime.session.SessionOnDemand), except that for a large history, whose
    check all but surely needs it, it is started at once, beside the convert: the user
    then waits for the longer of the two, not for both. `progress` hears a line as each
    long step begins, with the number of the history it is of (None: of the batch).
    """
    if out_dir is not None and len(paths) > 1:
        raise ValueError("out_dir takes one history")
    if out_dirs is not None and len(out_dirs) != len(paths):
        raise ValueError("out_dirs names one folder per history")
    say = progress or (lambda _n, _line: None)
    if spark is None:
        own = SessionOnDemand(spark_master, lambda line: say(None, line))
        try:
            return check_histories(paths, out_dir=out_dir, out_dirs=out_dirs, idempotent=idempotent, spark=own,
                                   progress=progress)
        finally:
            own.close()
    answers: list[dict[str, Any] | HistoryError | None] = [None] * len(paths)
    batch: list[tuple[int, _Loaded]] = []
    for n, path in enumerate(paths):
        try:
            batch.append((n, _load(Path(path), out_dirs[n] if out_dirs is not None else out_dir, spark,
                                  lambda line, n=n: say(n, line))))
        except HistoryError as exc:
            answers[n] = exc
    counts = [loaded.history.counts for _, loaded in batch]
    running = [c for c in CHECKS.values() if any(c.reads(each) for each in counts)]
    judged: list[Found] = [({}, {}, {})] * len(batch)
    stat_names: dict[str, list[str]] = {}
    if running:
        ops = sum(each.ops for each in counts)
        session = spark.get(ops) if isinstance(spark, SessionOnDemand) else spark
        histories = [loaded.history for _, loaded in batch]
        say(None, f"checking {ops} ops" + (f" of {len(histories)} histories" if len(histories) > 1 else ""))
        fit_to_input(session, ops)
        tables = batch_tables(session, histories)
        found = {c.name: c.find(tables) for c in running}
        stat_names = {name: list(f.stats) for name, f in found.items()}
        judged = _collect(found, len(batch))
    for (n, loaded), (anomalies, not_judged, stats) in zip(batch, judged):
        history = loaded.history
        mine = [c for c in running if c.reads(history.counts)]
        # A checker that ran for another history of the batch found nothing here (this one
        # holds nothing it reads): its statistics are not this history's.
        stats = {name: count for name, count in stats.items() if any(name in stat_names[c.name] for c in mine)}
        results = judge(history, [c.name for c in mine], (anomalies, not_judged, stats),
                        idempotent=loaded.run.idempotent if idempotent is None else idempotent,
                        proven=any(c.proves(history.counts) for c in mine), available=loaded.run.available)
        results.update(variant=loaded.run.variant, scenario=loaded.run.scenario,
                       faults=history_fault_outcomes(history.source))
        (loaded.out / RESULTS_JSON).write_text(json.dumps(results, indent=2) + "\n")
        answers[n] = results
    return answers  # type: ignore[return-value]  # every one is set above


def _load(path: Path, out_dir: Path | None, spark: SparkSession | SessionOnDemand,
          say: Callable[[str], None]) -> _Loaded:
    """The history of `path` read into its Parquet copy (HistoryError for bad input), the
    large one's JVM started beside the convert."""
    source = history_file(path)
    run = read_run_info(source.parent)
    out = results_dir(source, out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise HistoryError(f"{out}: cannot write results there ({exc.strerror or exc})") from None
    if isinstance(spark, SessionOnDemand) and not small_file(source):
        spark.start_early()
    return _Loaded(history=load_history(source, out / (source.stem + ".parquet"), say), out=out, run=run)


def batch_tables(spark: SparkSession, histories: list[History]) -> Tables:
    """The tables of several histories as one batch, history i's rows marked i (HISTORY).

    Each table is the union of the histories' own. A union of many Parquet reads would be
    planned again at every place a check reads it, so a batch of several has each table
    computed once into a leaf of its own (checkers.checker.shared: a small job per table).
    A table of txns is there when any history of the batch has txns; a history without
    them has no rows in it.
    """
    each = [h.tables(spark, n) for n, h in enumerate(histories)]
    if len(each) == 1:
        # Gathered, a small history's tables are one partition that Spark knows to be one, so
        # that group-bys, windows and joins over them need no shuffle (a warm 3,000-op check
        # ran 46 stages instead of 105); unions are gathered the same way (checkers.checker).
        def table(name: str) -> DataFrame | None:
            df = getattr(each[0], name)
            return None if df is None else gathered(df)
    else:
        def table(name: str) -> DataFrame | None:
            frames = [getattr(t, name) for t in each if getattr(t, name) is not None]
            return shared(_union(frames)) if frames else None

    return Tables(**{f.name: table(f.name) for f in fields(Tables)})


def check_run(path: Path, *, out_dir: Path | None = None, idempotent: bool | None = None,
              remote: str | None = None, server_idle: float = 0.0,
              note: Callable[[str], None] | None = None) -> dict[str, Any]:
    """check_history for `ordeal run`'s check at its end: in the Spark Connect server at
    `remote` (sc://HOST:PORT; ORDEAL_SPARK_REMOTE, read at the edge) when given, else in the shared
    local one when `server_idle` > 0 (checkers.connect; a suite's runs then share one warm
    JVM, and only the first pays for its start), else in a server of its own. When the
    shared server cannot be had, `note` hears why in one line (the run's notes keep it) and
    the check runs in a server of its own. Raises HistoryError with the check's own line
    for input it could not check."""
    if remote is None and server_idle > 0:
        spark = SessionOnDemand(idle=server_idle)
        try:
            return check_history(path, out_dir=out_dir, idempotent=idempotent, spark=spark)
        except SparkUnavailable as exc:
            if note is not None:
                note(f"no shared Spark Connect server ({exc}): checked in a server of the run's own")
        finally:
            spark.close()
    spark = SessionOnDemand(remote=remote, small=small_file(history_file(Path(path))))
    try:
        return check_history(path, out_dir=out_dir, idempotent=idempotent, spark=spark)
    finally:
        spark.close()


def judge(history: History, checkers_run: list[str], found: Found, *, idempotent: bool,
          proven: bool, available: bool = False) -> dict[str, Any]:
    """The results dict of a validated history from what its checkers (by name) found in it:
    (anomalies, not-judged reasons by anomaly, statistics), as `_collect` gives them."""
    by_f = {f: dict(sorted(types.items())) for f, types in sorted(history.counts.by_f.items())}
    stats: dict[str, Any] = {"ops": history.op_count, "by_f": by_f}
    anomalies, not_judged, more = found
    stats.update(more)
    checkers: dict[str, Any] = {}
    for name in checkers_run:
        names = CHECKS[name].anomalies
        judged = {a: why for a, why in not_judged.items() if a in names}
        unknown = [w for why in judged.values() for w in why]
        present = {a for a in anomalies if a in names}
        checkers[name] = {"valid": checker_valid(present, unknown, idempotent, available), "anomalies": sorted(present),
                          "unknown": unknown, "not_judged": judged}
    reasons = [] if proven else [NOTHING_PROVEN if history.op_count else "the history holds no op"]
    return {
        "valid": overall_valid([c["valid"] for c in checkers.values()], proven=proven),
        "anomalies": {name: a for name, a in anomalies.items() if any(name in CHECKS[c].anomalies for c in checkers_run)},
        "checkers": checkers,
        "unknown": reasons,
        "idempotent": idempotent,
        "available": available,
        "stats": stats,
        "warnings": list(history.warnings),
        "history": str(history.source.resolve()),
    }


def _collect(found: dict[str, Findings], histories: int) -> list[Found]:
    """Per history of a batch of `histories`, in order, the (anomalies, not_judged reasons by
    anomaly, statistics) of every checker's findings, in one action.

    Per history and anomaly: its count, the first examples and the first evidence indices
    (all bounded); per anomaly not judged somewhere: the first places and how many more; a
    statistic a history has no row of counts 0 there. Everything is one union of small
    rows (history, part, name, n, text) collected once; the anomaly rows, read by three
    parts of it, are computed once (checkers.checker.shared).
    """
    rows = shared(_union([f.rows for f in found.values()]))
    first = Window.partitionBy(HISTORY, "anomaly").orderBy("order", "example")
    by_index = Window.partitionBy(HISTORY, "anomaly").orderBy("i")
    parts = [
        rows.groupBy(HISTORY, "anomaly").count().select(HISTORY, F.lit("count").alias("part"),
                                                        F.col("anomaly").alias("name"), F.col("count").alias("n"),
                                                        F.lit(None).cast("string").alias("text")),
        rows.withColumn("n", F.row_number().over(first)).filter(F.col("n") <= MAX_EXAMPLES)
        .select(HISTORY, F.lit("example").alias("part"), F.col("anomaly").alias("name"),
                F.col("n").cast("long").alias("n"), F.col("example").alias("text")),
        rows.select(HISTORY, "anomaly", F.explode("evidence").alias("i")).distinct()
        .withColumn("rank", F.row_number().over(by_index)).filter(F.col("rank") <= MAX_EVIDENCE)
        .select(HISTORY, F.lit("evidence").alias("part"), F.col("anomaly").alias("name"),
                F.col("i").cast("long").alias("n"), F.lit(None).cast("string").alias("text")),
    ]
    unjudged = [nj for f in found.values() for nj in f.not_judged]
    if unjudged:
        places = _union(unjudged)
        where = Window.partitionBy(HISTORY, "anomaly").orderBy("order", "reason")
        parts += [
            places.withColumn("n", F.row_number().over(where)).filter(F.col("n") <= MAX_NOT_JUDGED)
            .select(HISTORY, F.lit("not-judged").alias("part"), F.col("anomaly").alias("name"),
                    F.col("n").cast("long").alias("n"), F.col("reason").alias("text")),
            places.groupBy(HISTORY, "anomaly").count().select(HISTORY, F.lit("not-judged-count").alias("part"),
                                                              F.col("anomaly").alias("name"),
                                                              F.col("count").alias("n"),
                                                              F.lit(None).cast("string").alias("text")),
        ]
    stat_names = sorted({name for f in found.values() for name in f.stats})
    parts += [df.select(HISTORY, F.lit("stat").alias("part"), F.lit(name).alias("name"), F.col("value").alias("n"),
                        F.lit(None).cast("string").alias("text"))
              for f in found.values() for name, df in f.stats.items()]
    by_history: list[list[tuple[str, str, int, str | None]]] = [[] for _ in range(histories)]
    for history, part, name, n, text in _union(parts).collect():
        by_history[history].append((part, name, n, text))
    return [_gathered_rows(got, stat_names) for got in by_history]


def _gathered_rows(got: list[tuple[str, str, int, str | None]], stat_names: list[str]) -> Found:
    """One history's (anomalies, not_judged, statistics) from its collected rows (`_collect`)."""
    counts: dict[str, int] = {}
    examples: dict[str, list[tuple[int, Any]]] = {}
    evidence: dict[str, list[int]] = {}
    reasons: dict[str, list[tuple[int, str]]] = {}
    places_count: dict[str, int] = {}
    stats: dict[str, int] = {name: 0 for name in stat_names}
    for part, name, n, text in got:
        if part == "count":
            counts[name] = n
        elif part == "example":
            examples.setdefault(name, []).append((n, json.loads(text)))
        elif part == "evidence":
            evidence.setdefault(name, []).append(n)
        elif part == "not-judged":
            reasons.setdefault(name, []).append((n, text))
        elif part == "not-judged-count":
            places_count[name] = n
        else:
            stats[name] = n
    anomalies = {name: {"count": counts[name], "examples": [e for _, e in sorted(examples.get(name, []),
                                                                                  key=lambda x: x[0])],
                        "evidence": sorted(evidence.get(name, []))} for name in sorted(counts)}
    not_judged: dict[str, list[str]] = {}
    for name in sorted(reasons):
        listed = [why for _, why in sorted(reasons[name])]
        beyond = places_count.get(name, len(listed)) - len(listed)
        not_judged[name] = listed + ([f"... and {beyond} more"] if beyond > 0 else [])
    return anomalies, not_judged, stats


def _union(frames: list[DataFrame]) -> DataFrame:
    out = frames[0]
    for more in frames[1:]:
        out = out.unionByName(more)
    return gathered(out)
