"""`check_history`: a run's history in, results.json out (the public entry point).

results.json is read by reports: {"valid", "anomalies": {name: {"count", "examples",
"evidence"}}, "checkers": {"kafka"|"ordering"|"nodes": {"valid", "unknown"}}, "variant",
"scenario", "idempotent", "stats", "warnings", "history"}. A checker's "not_judged" says,
per anomaly, why it could not be judged where the evidence is missing (no final read of a
partition, no final deliver of a channel or from an OSN: an interrupted run); "unknown"
lists the same reasons, and either makes the checker unknown unless it found a failure. Examples are at most 10
per anomaly, evidence the sorted history indices, at most 1000 per anomaly.

The nodes checker (node-crash) judges only histories that record crashes: one from a
harness that watched for none says nothing about its nodes.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from checkers.history import RUN_FILE, History, HistoryError, history_file, load_history
from checkers.kafka import kafka_anomalies
from checkers.nodes import CRASH, node_anomalies
from checkers.ordering import ordering_anomalies
from checkers.schema import KAFKA_FS, ORDERING_FS
from checkers.txn import txn_anomalies
from checkers.session import spark_session
from checkers.verdict import CHECKERS, checker_valid, overall_valid

RESULTS_FILE = "results.json"
MAX_EXAMPLES = 10
MAX_EVIDENCE = 1000
_MAX_UNKNOWN = 20


@dataclass(frozen=True)
class RunInfo:
    """What the checkers need from run.json; all absent for a bare history file."""

    variant: str | None = None
    scenario: str | None = None
    idempotent: bool = False


def read_run_info(run_dir: Path) -> RunInfo:
    """Variant, scenario and producer idempotence from run.json in `run_dir`, if there is one."""
    try:
        raw = json.loads((run_dir / RUN_FILE).read_text())
    except FileNotFoundError:
        return RunInfo()
    except (OSError, ValueError) as exc:
        raise HistoryError(f"{run_dir / RUN_FILE}: unreadable run file ({exc})") from None
    if not isinstance(raw, dict):
        raise HistoryError(f"{run_dir / RUN_FILE}: not a JSON object")

    def name(key: str) -> str | None:
        part = raw.get(key)
        return part.get("name") if isinstance(part, dict) else None

    variant = raw.get("variant") if isinstance(raw.get("variant"), dict) else {}
    producer = variant.get("producer") if isinstance(variant.get("producer"), dict) else {}
    return RunInfo(variant=name("variant"), scenario=name("scenario"),
                   idempotent=bool(producer.get("enable_idempotence", False)))


def check_history(path: Path, *, out_dir: Path | None = None, spark_master: str | None = None,
                  idempotent: bool | None = None, spark: SparkSession | None = None,
                  progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Check the history of a run directory or history file; write and return results.json.

    Raises HistoryError for input that cannot be checked. `idempotent` overrides what
    run.json says about the producer; `spark` reuses a running session; `progress` hears
    a line as each long step begins.
    """
    path = Path(path)
    source = history_file(path)
    run = read_run_info(source.parent)
    if idempotent is None:
        idempotent = run.idempotent
    out = Path(out_dir) if out_dir is not None else source.parent
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise HistoryError(f"{out}: cannot write results there ({exc.strerror or exc})") from None
    say = progress or (lambda _: None)
    if _empty(source):  # nothing to judge: no Spark (nor its start-up noise) for that
        results = _nothing_to_check(source)
        results.update(variant=run.variant, scenario=run.scenario, idempotent=idempotent)
        (out / RESULTS_FILE).write_text(json.dumps(results, indent=2) + "\n")
        return results
    def start() -> SparkSession:
        say("starting Spark")
        return spark_session(spark_master)

    history = load_history(spark if spark is not None else start, source, out / (source.stem + ".parquet"),
                           progress)
    say(f"checking {history.op_count} ops")
    results = judge(history, idempotent=idempotent)
    results.update(variant=run.variant, scenario=run.scenario)
    (out / RESULTS_FILE).write_text(json.dumps(results, indent=2) + "\n")
    return results


def _empty(source: Path) -> bool:
    """Whether the history holds no line but blanks (read only when it is small)."""
    try:
        if source.stat().st_size > 4096:
            return False
        return not source.read_bytes().strip()
    except OSError as exc:
        raise HistoryError(f"{source}: unreadable ({exc.strerror or exc})") from None


def _nothing_to_check(source: Path) -> dict[str, Any]:
    return {"valid": overall_valid([]), "anomalies": {}, "checkers": {},
            "stats": {"ops": 0, "by_f": {}}, "warnings": [f"{source}: no op to check"], "history": str(source)}


def judge(history: History, *, idempotent: bool) -> dict[str, Any]:
    """The results dict of a validated history."""
    tables = history.tables
    by_f = {f: dict(sorted(types.items())) for f, types in sorted(history.by_f.items())}
    stats = {"ops": history.op_count, "by_f": by_f}
    kafka_rows, undrained, info_seen = kafka_anomalies(tables)
    if "txn" in by_f:  # format 2: transactions are Kafka's too (lost-write and aborted-read alike)
        # The txn checks read the kafka checker's rows too: computed once (they are few).
        kafka_rows = kafka_rows.persist(StorageLevel.MEMORY_AND_DISK)
        kafka_rows.count()
        txn_rows, txn_undrained = txn_anomalies(tables, kafka_rows)
        kafka_rows, undrained = kafka_rows.unionByName(txn_rows), undrained.unionByName(txn_undrained).distinct()
    ordering_rows, undelivered, unfinished = ordering_anomalies(tables)
    rows = (kafka_rows.unionByName(ordering_rows).unionByName(node_anomalies(tables))
            .persist(StorageLevel.MEMORY_AND_DISK))
    try:
        return _results(history, rows, undrained, undelivered, unfinished, info_seen, stats, idempotent)
    finally:
        # The transforms persist the frames they share; nothing else is cached here.
        tables.ops.sparkSession.catalog.clearCache()


def _results(history: History, rows: DataFrame, undrained: DataFrame, undelivered: DataFrame,
             unfinished: DataFrame, info_seen: DataFrame, stats: dict[str, Any],
             idempotent: bool) -> dict[str, Any]:
    anomalies = _summarise(rows)
    not_judged: dict[str, dict[str, list[str]]] = {
        "kafka": {"lost-write": [
            f"no final read of {r['topic']}/{r['partition']} which had acknowledged sends"
            for r in undrained.orderBy("topic", "partition").limit(_MAX_UNKNOWN).collect()]},
        "ordering": {
            "lost-tx": [f"no final deliver of channel {r['channel']} which had SUCCESS broadcasts"
                        for r in undelivered.orderBy("channel").limit(_MAX_UNKNOWN).collect()],
            "lagging-osn": [f"no final deliver of channel {r['channel']} from {r['osn']}"
                            for r in unfinished.orderBy("channel", "osn").limit(_MAX_UNKNOWN).collect()]},
        "nodes": {},
    }
    not_judged = {c: {a: why for a, why in checks.items() if why} for c, checks in not_judged.items()}
    unknown = {c: [w for why in checks.values() for w in why] for c, checks in not_judged.items()}
    ran = {"kafka": any(f in stats["by_f"] for f in KAFKA_FS),
           "ordering": any(f in stats["by_f"] for f in ORDERING_FS),
           "nodes": CRASH in stats["by_f"]}
    checkers: dict[str, Any] = {}
    for checker, names in CHECKERS.items():
        if not ran[checker]:
            continue
        found = {a for a in anomalies if a in names}
        checkers[checker] = {"valid": checker_valid(found, unknown[checker], idempotent),
                             "anomalies": sorted(found), "unknown": unknown[checker],
                             "not_judged": not_judged[checker]}
    if ran["kafka"]:
        stats["info_sends_seen"] = info_seen.count()
    return {
        "valid": overall_valid([c["valid"] for c in checkers.values()]),
        "anomalies": anomalies,
        "checkers": checkers,
        "idempotent": idempotent,
        "stats": stats,
        "warnings": list(history.warnings),
        "history": str(history.source),
    }


def _summarise(rows: DataFrame) -> dict[str, Any]:
    """Per anomaly: count, the first examples, and the first evidence indices (all bounded)."""
    counts = {r["anomaly"]: r["count"] for r in rows.groupBy("anomaly").count().collect()}
    if not counts:
        return {}
    first = Window.partitionBy("anomaly").orderBy("order", "example")
    examples: dict[str, list[Any]] = {}
    for r in (rows.withColumn("n", F.row_number().over(first)).filter(F.col("n") <= MAX_EXAMPLES)
              .orderBy("anomaly", "n").collect()):
        examples.setdefault(r["anomaly"], []).append(json.loads(r["example"]))
    by_index = Window.partitionBy("anomaly").orderBy("i")
    evidence: dict[str, list[int]] = {}
    for r in (rows.select("anomaly", F.explode("evidence").alias("i")).distinct()
              .withColumn("n", F.row_number().over(by_index)).filter(F.col("n") <= MAX_EVIDENCE)
              .orderBy("anomaly", "i").collect()):
        evidence.setdefault(r["anomaly"], []).append(r["i"])
    return {name: {"count": counts[name], "examples": examples.get(name, []),
                   "evidence": evidence.get(name, [])} for name in sorted(counts)}
