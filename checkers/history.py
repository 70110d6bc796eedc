"""Reading a history: JSON lines -> validated, flat Parquet, converted once and reused.

The text is parsed by Spark with the explicit schema (checkers.schema) and flattened at
once into typed columns: one row per op, per record of an ok poll or final read, and
per block of an ok deliver (checkers.schema.FACT), so that no check parses JSON or
explodes nested arrays again. A second pass pairs each completion with its invoke
(what validation needs, and what the send checkers need) and keeps the paired sends.
The driver never holds the history. Each op row keeps `_row`, Spark's monotonically
increasing id, from which the line number of a bad row is recovered only when there is
one. The Parquet copy is keyed by the source's size and mtime, so a re-check skips
parsing and validation.

Input rules (`ordeal check` exit 2 unless said otherwise):
- a line that is not a JSON object with index, process, type and f is an error
  naming its line number, except the LAST line, which a crashed writer may have torn:
  it is skipped with a warning;
- an unknown `type`, or an `f` outside format version 1 on a client process, is an
  error (the nemesis may record any `f`: checkers ignore nemesis ops);
- a completion whose process's previous op is not its invoke (same `f`), or a second
  invoke before the first one completed, is an error. An invoke left without a
  completion at the end of the history is indeterminate, like `info`.
"""
from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.types import LongType, StringType, StructField, StructType

from checkers.schema import BLOCK_COLUMNS, CLIENT_FS, FACT, NEMESIS, OP, OP_COLUMNS, RECORD_COLUMNS, TYPES

HISTORY_FILE = "history.jsonl"
RUN_FILE = "run.json"
_MARKER = "_ordeal_source.json"
# 2: flat rows by kind (format 1 held the parsed ops with their nested values).
_CACHE_FORMAT = 2
# monotonically_increasing_id puts the partition id above bit 33.
_ROW_BITS = 33
# Blank lines are kept as rows (so line numbers stay exact) but never checked.
_BLANK = "blank line"
# Directories of the Parquet copy, one per kind of row.
_OPS, _RECORDS, _BLOCKS, _SENDS, _UNPAIRED = "kind=op", "kind=record", "kind=block", "kind=send", "kind=unpaired"
SEND_COLUMNS = ("process", "index", "time", "type", "topic", "partition", "offset", "value",
                "invoke_index", "invoke_time")
# Every column any kind of row may have on disk, for a kind of which none was written.
_SCHEMA = StructType(FACT.fields + [StructField("invoke_index", LongType()), StructField("invoke_time", LongType()),
                                    StructField("_row", LongType()), StructField("_defect", StringType())])


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
            return spark.createDataFrame([], _SCHEMA).select(*columns)
        return spark.read.parquet(str(parquet / name)).select(*columns)

    ops = part(_OPS, OP_COLUMNS + ("_defect",)).filter(F.col("_defect").isNull()).drop("_defect")
    tables = Tables(ops=ops, sends=part(_SENDS, SEND_COLUMNS), records=part(_RECORDS, RECORD_COLUMNS),
                    blocks=part(_BLOCKS, BLOCK_COLUMNS))
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


def _defect(op: Column) -> Column:
    """Why a parsed line cannot be used, or null."""
    return (
        F.when(op.isNull() | op["index"].isNull() | op["process"].isNull()
               | op["type"].isNull() | op["f"].isNull(),
               F.lit("not a JSON op with index, process, type and f"))
        .when(~op["type"].isin(*TYPES), F.concat(F.lit("unknown type "), op["type"]))
        .when((op["process"] != NEMESIS) & ~op["f"].isin(*CLIENT_FS),
              F.concat(F.lit("unknown f "), op["f"]))
    )


def flatten_lines(text: DataFrame) -> DataFrame:
    """FACT rows, plus `_row` and `_defect` (null but on op rows of unusable lines), from lines in `value`.

    `text` may carry `_row`; every line gives one op row, even a blank or bad one, so
    that op rows count lines.
    """
    row = F.col("_row") if "_row" in text.columns else F.lit(None).cast("long")
    parsed = text.select(F.from_json("value", OP, {"mode": "PERMISSIVE"}).alias("op"),
                         (F.trim("value") == "").alias("_blank"), row.alias("_row"))
    op, v = F.col("op"), F.col("op.value")
    parsed = parsed.withColumn("_defect", F.when(F.col("_blank"), F.lit(_BLANK)).otherwise(_defect(op)))
    usable_ok = F.col("_defect").isNull() & (op["type"] == "ok")
    has_records = usable_ok & op["f"].isin("poll", "final-read")
    has_blocks = usable_ok & (op["f"] == "deliver")
    # Line i of the op's rows: 0 is the op itself, i > 0 its record or block i - 1. Exploding a
    # range and indexing (rather than transforming the arrays) keeps it all in generated code.
    n = (F.when(has_records, F.coalesce(F.size(v["records"]), F.lit(0)))
         .when(has_blocks, F.coalesce(F.size(v["blocks"]), F.lit(0))).otherwise(0))
    lines = parsed.select("*", F.explode(F.sequence(F.lit(0), F.greatest(n, F.lit(0)))).alias("_i"))
    i = F.col("_i")
    kind = F.when(i == 0, F.lit("op")).when(has_records, F.lit("record")).otherwise(F.lit("block"))
    r = F.get(v["records"], i - 1)
    b = F.get(v["blocks"], i - 1)
    on_op, on_record, on_block = i == 0, (i > 0) & has_records, (i > 0) & has_blocks

    def pick(**by_kind: Column) -> Column:
        c = None
        for k, cond in (("op", on_op), ("record", on_record), ("block", on_block)):
            if k in by_kind:
                c = F.when(cond, by_kind[k]) if c is None else c.when(cond, by_kind[k])
        return c

    fields = {
        "kind": kind,
        "index": op["index"],
        "time": F.when(on_op, op["time"]),
        "process": F.when(on_op, op["process"]),
        "type": F.when(on_op, op["type"]),
        "f": F.when(on_op | on_record, op["f"]),
        "topic": pick(op=v["topic"], record=F.coalesce(r["topic"], v["topic"])),
        "partition": pick(op=v["partition"], record=F.coalesce(r["partition"], v["partition"])),
        "offset": pick(op=v["offset"], record=r["offset"]),
        "value": pick(op=v["value"], record=r["value"]),
        "consumer": F.when(on_op | on_record, v["consumer"]),
        "channel": F.when(on_op | on_block, v["channel"]),
        "osn": F.when(on_op | on_block, v["osn"]),
        "tx": F.when(on_op, v["tx"]),
        "status": F.when(on_op, v["status"]),
        "pos": F.when(~on_op, i - 1),
        "number": F.when(on_block, b["number"]),
        "hash": F.when(on_block, b["hash"]),
        "previous_hash": F.when(on_block, b["previous_hash"]),
        "data_hash": F.when(on_block, b["data_hash"]),
        "txs": F.when(on_block, b["txs"]),
        "data": F.when(on_block, b["data"]),
    }
    return lines.select(*[fields[fd.name].cast(fd.dataType).alias(fd.name) for fd in FACT.fields],
                        F.when(on_op, F.col("_row")).alias("_row"), F.when(on_op, F.col("_defect")).alias("_defect"))


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


def tables_of(facts: DataFrame) -> Tables:
    """The tables of FACT rows held in memory (small histories, tests): nothing is written."""
    kind = F.col("kind")
    ops = facts.filter((kind == "op") & F.col("_defect").isNull()).select(*OP_COLUMNS)
    return Tables(ops=ops, sends=paired_sends(paired(ops)),
                  records=facts.filter(kind == "record").select(*RECORD_COLUMNS),
                  blocks=facts.filter(kind == "block").select(*BLOCK_COLUMNS))


def _convert(spark: SparkSession, source: Path, parquet: Path) -> list[str]:
    if parquet.exists():
        shutil.rmtree(parquet)
    text = spark.read.text(str(source)).withColumn("_row", F.monotonically_increasing_id())
    flatten_lines(text).write.partitionBy("kind").parquet(str(parquet))
    ops = spark.read.parquet(str(parquet / _OPS)).filter(F.col("_defect").isNull())
    pairs = paired(ops.select("_row", *OP_COLUMNS))
    kind = (F.when(F.col("_unpaired").isNotNull(), F.lit("unpaired"))
            .when(_is_send_completion(), F.lit("send")))
    # One pass writes both the rows validation rejects and the paired sends.
    (pairs.withColumn("kind", kind).filter(F.col("kind").isNotNull())
     .select("kind", "_row", "_unpaired", *_send_columns())
     .write.mode("append").partitionBy("kind").parquet(str(parquet)))
    try:
        return _validate(spark, source, parquet)
    except HistoryError:
        shutil.rmtree(parquet, ignore_errors=True)
        raise


def _validate(spark: SparkSession, source: Path, parquet: Path) -> list[str]:
    rows = spark.read.parquet(str(parquet / _OPS))
    bad = rows.filter(F.col("_defect").isNotNull() & (F.col("_defect") != _BLANK)).select("_row", "_defect")
    if (parquet / _UNPAIRED).exists():
        bad = bad.unionByName(spark.read.parquet(str(parquet / _UNPAIRED))
                              .select("_row", F.col("_unpaired").alias("_defect")))
    bad = bad.orderBy("_row").limit(2).collect()
    if not bad:
        return []
    counts = {r["p"]: r["n"] for r in
              rows.groupBy(F.shiftright("_row", _ROW_BITS).alias("p")).agg(F.count("*").alias("n"),
                                                                        ).collect()}
    last_row = (rows.filter(F.col("_defect").isNull() | (F.col("_defect") != _BLANK))
                .agg(F.max("_row")).first()[0])

    def line_of(row_id: int) -> int:
        part = row_id >> _ROW_BITS
        return sum(n for p, n in counts.items() if p < part) + (row_id & ((1 << _ROW_BITS) - 1)) + 1

    first = bad[0]
    torn_last = first["_row"] == last_row and first["_defect"].startswith("not a JSON")
    if torn_last:
        return [f"{source}: line {line_of(first['_row'])}: skipped a torn last line"]
    raise HistoryError(f"{source}: line {line_of(first['_row'])}: {first['_defect']}")
