"""Reading a history: JSON lines -> validated Parquet, converted once and reused.

The text is parsed by Spark with the explicit schema (checkers.schema); the driver
never holds the history. Each row keeps `_row`, Spark's monotonically increasing id,
from which the line number of a bad row is recovered only when there is one.
The Parquet copy is keyed by the source's size and mtime, so a re-check skips parsing
and validation.

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

from checkers.schema import CLIENT_FS, NEMESIS, OP, TYPES

HISTORY_FILE = "history.jsonl"
RUN_FILE = "run.json"
_MARKER = "_ordeal_source.json"
_CACHE_FORMAT = 1
# monotonically_increasing_id puts the partition id above bit 33.
_ROW_BITS = 33
# Blank lines are kept as rows (so line numbers stay exact) but never checked.
_BLANK = "blank line"


class HistoryError(ValueError):
    """The history cannot be checked; the message names the file and line."""


@dataclass(frozen=True)
class History:
    """A validated history: its ops as a DataFrame of format-1 rows, and what was skipped."""

    ops: DataFrame
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
    """The validated ops of `source`, converting it to `parquet` unless a fresh copy exists."""
    stamp = _stamp(source)
    marker = _read_marker(parquet)
    if marker is None or marker.get("stamp") != stamp:
        warnings = _convert(spark, source, parquet)
        (parquet / _MARKER).write_text(json.dumps({"stamp": stamp, "warnings": warnings}))
    else:
        warnings = marker.get("warnings", [])
    ops = spark.read.parquet(str(parquet)).filter(F.col("_defect").isNull()).drop("_defect")
    return History(ops=ops, source=source, parquet=parquet, warnings=tuple(warnings))


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


def parse_lines(text: DataFrame) -> DataFrame:
    """Format-1 rows, plus `_defect` (null for a usable op), from a DataFrame of lines in `value`."""
    others = [c for c in text.columns if c != "value"]
    parsed = text.select(F.from_json("value", OP, {"mode": "PERMISSIVE"}).alias("op"),
                         (F.trim("value") == "").alias("_blank"), *others)
    defect = F.when(F.col("_blank"), F.lit(_BLANK)).otherwise(_defect(F.col("op")))
    return parsed.select("op.*", *others, defect.alias("_defect"))


def _convert(spark: SparkSession, source: Path, parquet: Path) -> list[str]:
    if parquet.exists():
        shutil.rmtree(parquet)
    text = spark.read.text(str(source)).withColumn("_row", F.monotonically_increasing_id())
    parse_lines(text).write.parquet(str(parquet))
    try:
        return _validate(spark, source, parquet)
    except HistoryError:
        shutil.rmtree(parquet, ignore_errors=True)
        raise


def _validate(spark: SparkSession, source: Path, parquet: Path) -> list[str]:
    rows = spark.read.parquet(str(parquet))
    client = rows.filter(F.col("_defect").isNull() & (F.col("process") != NEMESIS))
    by_process = Window.partitionBy("process").orderBy("index")
    unpaired = (
        client.select("process", "index", "type", "f", "_row",
                      F.lag("type").over(by_process).alias("prev_type"),
                      F.lag("f").over(by_process).alias("prev_f"))
        .select("_row", F.when(
            (F.col("type") != "invoke")
            & (F.col("prev_type").isNull() | (F.col("prev_type") != "invoke")),
            F.concat(F.lit("a "), F.col("type"), F.lit(" completion of process "),
                     F.col("process"), F.lit(" without its invoke")))
            .when((F.col("type") != "invoke") & (F.col("prev_f") != F.col("f")),
                  F.concat(F.lit("completion f "), F.col("f"), F.lit(" does not match its invoke f "),
                           F.col("prev_f")))
            .when((F.col("type") == "invoke") & (F.col("prev_type") == "invoke"),
                  F.concat(F.lit("a second invoke of process "), F.col("process"),
                           F.lit(" before the first completed")))
            .alias("_defect"))
        .filter(F.col("_defect").isNotNull())
    )
    bad = (rows.filter(F.col("_defect").isNotNull() & (F.col("_defect") != _BLANK))
           .select("_row", "_defect")
           .unionByName(unpaired).orderBy("_row").limit(2).collect())
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
