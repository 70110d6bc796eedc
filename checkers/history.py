"""Reading a history: JSON lines -> validated, flat Parquet, converted once and reused.

checkers.ingest streams the lines into the flat tables (one row per op, per record of an
ok poll or final read, and per block of an ok deliver, checkers.schema), so that no
check parses JSON or explodes nested arrays again; it rejects the lines that cannot be
ops. A Spark pass then pairs each completion with its invoke (what validation needs,
and what the send checkers need) and keeps the paired sends. The driver never holds
the history: one chunk of lines at a time. The Parquet copy is keyed by the source's
size and mtime, so a re-check skips parsing and validation.

Pairing rules (`ordeal check` exit 2): a completion whose process's previous op is not
its invoke (same `f`), or a second invoke before the first one completed, is an error
naming its line. An invoke left without a completion at the end of the history is
indeterminate, like `info`. The line rules are checkers.ingest's.
"""
from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from checkers.ingest import BadLine, Flat, chunks, flatten, parse
from checkers.schema import BLOCK_COLUMNS, BLOCKS, NEMESIS, OP_COLUMNS, OPS, RECORD_COLUMNS, RECORDS, spark_schema

HISTORY_FILE = "history.jsonl"
RUN_FILE = "run.json"
_MARKER = "_ordeal_source.json"
# 3: read by checkers.ingest, ops keep their line (2 held Spark's row ids).
_CACHE_FORMAT = 3
# Directories of the Parquet copy, one per kind of row.
_OPS, _RECORDS, _BLOCKS, _SENDS, _UNPAIRED = "kind=op", "kind=record", "kind=block", "kind=send", "kind=unpaired"
_FLAT = {_OPS: OPS, _RECORDS: RECORDS, _BLOCKS: BLOCKS}
SEND_COLUMNS = ("process", "index", "time", "type", "topic", "partition", "offset", "value",
                "invoke_index", "invoke_time")


class HistoryError(ValueError):
    """The history cannot be checked; the message names the file and line."""


@dataclass(frozen=True)
class Tables:
    """A history as flat frames, what every checker takes.

    ops: one row per usable op (checkers.schema.OP_COLUMNS: the value's scalar fields);
    sends: one row per send completion, with invoke_index and invoke_time of its invoke
    (topic and value taken from the invoke when the completion omits them);
    records: one row per record of an ok poll or final read (RECORD_COLUMNS);
    blocks: one row per block of an ok deliver (BLOCK_COLUMNS).
    """

    ops: DataFrame
    sends: DataFrame
    records: DataFrame
    blocks: DataFrame


@dataclass(frozen=True)
class History:
    """A validated history: its tables, where they come from, and what was skipped."""

    tables: Tables
    source: Path
    parquet: Path
    warnings: tuple[str, ...]


def history_file(path: Path) -> Path:
    """The history file for a run directory or a history file path."""
    if path.is_dir():
        path = path / HISTORY_FILE
    if not path.is_file():
        raise HistoryError(f"{path}: no such history file")
    return path


def load_history(spark: SparkSession, source: Path, parquet: Path) -> History:
    """The validated history of `source`, converting it to `parquet` unless a fresh copy exists."""
    stamp = _stamp(source)
    marker = _read_marker(parquet)
    if marker is None or marker.get("stamp") != stamp:
        warnings = _convert(spark, source, parquet)
        (parquet / _MARKER).write_text(json.dumps({"stamp": stamp, "warnings": warnings}))
    else:
        warnings = marker.get("warnings", [])

    def part(name: str, columns: tuple[str, ...]) -> DataFrame:
        if not (parquet / name).is_dir():  # no row of that kind was written
            return spark.createDataFrame([], spark_schema(_schema_of(name))).select(*columns)
        return spark.read.parquet(str(parquet / name)).select(*columns)

    tables = Tables(ops=part(_OPS, OP_COLUMNS), sends=part(_SENDS, SEND_COLUMNS),
                    records=part(_RECORDS, RECORD_COLUMNS), blocks=part(_BLOCKS, BLOCK_COLUMNS))
    return History(tables=tables, source=source, parquet=parquet, warnings=tuple(warnings))


def _stamp(source: Path) -> dict[str, int | str]:
    st = source.stat()
    return {"format": _CACHE_FORMAT, "path": str(source.resolve()), "size": st.st_size,
            "mtime_ns": st.st_mtime_ns}


def _read_marker(parquet: Path) -> dict | None:
    try:
        return json.loads((parquet / _MARKER).read_text())
    except (OSError, ValueError):
        return None


def paired(ops: DataFrame) -> DataFrame:
    """Every client op beside its process's previous op (`prev_*`), and why the two do not pair, if so."""
    by_process = Window.partitionBy("process").orderBy("index")
    prev = {c: F.lag(c).over(by_process).alias("prev_" + c) for c in ("type", "f", "index", "time", "topic",
                                                                        "value")}
    rows = ops.filter(F.col("process") != NEMESIS).select("*", *prev.values())
    unpaired = (
        F.when((F.col("type") != "invoke")
               & (F.col("prev_type").isNull() | (F.col("prev_type") != "invoke")),
               F.concat(F.lit("a "), F.col("type"), F.lit(" completion of process "),
                        F.col("process"), F.lit(" without its invoke")))
        .when((F.col("type") != "invoke") & (F.col("prev_f") != F.col("f")),
              F.concat(F.lit("completion f "), F.col("f"), F.lit(" does not match its invoke f "),
                       F.col("prev_f")))
        .when((F.col("type") == "invoke") & (F.col("prev_type") == "invoke"),
              F.concat(F.lit("a second invoke of process "), F.col("process"),
                       F.lit(" before the first completed")))
    )
    return rows.withColumn("_unpaired", unpaired)


def _send_columns() -> list[Column]:
    # A fail or info completion may omit the value: its invoke names it.
    return [F.col("process"), F.col("index"), F.col("time"), F.col("type"),
            F.coalesce("topic", "prev_topic").alias("topic"), F.col("partition"), F.col("offset"),
            F.coalesce("value", "prev_value").alias("value"),
            F.col("prev_index").alias("invoke_index"), F.col("prev_time").alias("invoke_time")]


def _is_send_completion() -> Column:
    return (F.col("f") == "send") & (F.col("type") != "invoke") & F.col("_unpaired").isNull()


def paired_sends(pairs: DataFrame) -> DataFrame:
    """Send completions (SEND_COLUMNS) of `paired` rows."""
    return pairs.filter(_is_send_completion()).select(*_send_columns())


def tables_of(spark: SparkSession, flat: Flat) -> Tables:
    """The tables of flat rows held in memory (small histories, tests): nothing is written."""
    frames = {name: spark.createDataFrame(table) if table.num_rows else
              spark.createDataFrame([], spark_schema(table.schema))
              for name, table in (("ops", flat.ops), ("records", flat.records), ("blocks", flat.blocks))}
    ops = frames["ops"].select(*OP_COLUMNS)
    return Tables(ops=ops, sends=paired_sends(paired(ops)), records=frames["records"].select(*RECORD_COLUMNS),
                  blocks=frames["blocks"].select(*BLOCK_COLUMNS))


def read_lines(source: Path, write: Callable[[Flat], None]) -> list[str]:
    """Stream `source` through checkers.ingest into `write`, chunk by chunk; the warnings."""
    warnings = []
    try:
        for chunk in chunks(source):
            flat = flatten(parse(chunk), last=chunk.last)
            warnings += [f"{source}: line {n}: skipped a torn last line" for n in flat.skipped]
            write(flat)
    except BadLine as exc:
        raise HistoryError(f"{source}: {exc}") from None
    return warnings


def _schema_of(name: str) -> pa.Schema:
    if name in _FLAT:
        return _FLAT[name]
    fields = {f.name: f for f in OPS}
    return pa.schema([fields[c] if c in fields else pa.field(c, pa.int64()) for c in SEND_COLUMNS])


def _convert(spark: SparkSession, source: Path, parquet: Path) -> list[str]:
    if parquet.exists():
        shutil.rmtree(parquet)
    parquet.mkdir(parents=True)
    writers: dict[str, pq.ParquetWriter] = {}

    def write(flat: Flat) -> None:
        for name, table in ((_OPS, flat.ops), (_RECORDS, flat.records), (_BLOCKS, flat.blocks)):
            if table.num_rows:
                if name not in writers:
                    (parquet / name).mkdir()
                    writers[name] = pq.ParquetWriter(parquet / name / "part-0.parquet", _FLAT[name])
                writers[name].write_table(table)

    try:
        warnings = read_lines(source, write)
    except HistoryError:
        shutil.rmtree(parquet, ignore_errors=True)
        raise
    finally:
        for writer in writers.values():
            writer.close()
    if _OPS not in writers:
        return warnings
    ops = spark.read.parquet(str(parquet / _OPS))
    pairs = paired(ops.select("line", *OP_COLUMNS))
    kind = (F.when(F.col("_unpaired").isNotNull(), F.lit("unpaired"))
            .when(_is_send_completion(), F.lit("send")))
    # One pass writes both the rows validation rejects and the paired sends.
    (pairs.withColumn("kind", kind).filter(F.col("kind").isNotNull())
     .select("kind", "line", "_unpaired", *_send_columns())
     .write.mode("append").partitionBy("kind").parquet(str(parquet)))
    if (parquet / _UNPAIRED).exists():
        first = spark.read.parquet(str(parquet / _UNPAIRED)).orderBy("line").first()
        shutil.rmtree(parquet, ignore_errors=True)
        raise HistoryError(f"{source}: line {first['line']}: {first['_unpaired']}")
    return warnings
