"""Reading a history: JSON lines -> validated, flat Parquet, converted once and reused.

The lines stream through checkers.ingest.lines (the flat tables: one row per op, per record
of an ok poll or final read, and per block of an ok deliver, checkers.schema; lines
that cannot be ops are rejected) and checkers.ingest.pairing (each completion beside its
invoke; the paired sends), chunk by chunk, into Parquet (sends and polls only as the
sends and records they give), so that no check parses JSON,
explodes nested arrays or pairs ops again. The driver never holds the history: one
chunk of lines at a time. The Parquet copy is keyed by the source's size and mtime,
so a re-check skips parsing and validation. Every rejection names the line.
"""
from __future__ import annotations

import json
import shutil
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from checkers.ingest.lines import BadLine, Chunk, Flat, chunks, flatten, parse
from checkers.ingest.pairing import SEND_COLUMNS, SENDS, Pairing
from checkers.ingest.schema import (BLOCK_COLUMNS, BLOCKS, GROUP, GROUP_COLUMNS, OP_COLUMNS, OPS, RECORD_COLUMNS,
                                     RECORDS, spark_schema)
from checkers.ingest.txn_schema import MOP_COLUMNS, MOPS, TXN, TXN_COLUMNS, TXNS
from ground.history_file import HistoryError
from ground.run_files import HISTORY as HISTORY_JSONL
from ground.run_files import RUN_JSON

# The column every table gets as it is read (not stored in the Parquet copy): which history
# of a batch checked together a row is of, 0, 1, ... (0 for a history checked alone). The
# checkers key every grouping, window and join by it, so that one set of Spark jobs judges
# a batch of histories, each as if alone (checkers.check.check_histories).
HISTORY = "history"
_MARKER = "_ordeal_source.json"
# 6: read by checkers.ingest, paired by checkers.pairing, row groups of one f each, no line column,
# no send or poll ops; 7: the crash op's value fields (node, role, exit_code, oom_killed, log_tail);
# 9: an assign's partitions and seek, and the records counted by f;
# 10: format 2 (txn ops: the mops and txns tables, records of poll micro-ops, isolation, micro-ops counted);
# 11: a final deliver's `errored`; 12: a block's hashes lower-cased; 13: consumer groups (the group table).
_CACHE_FORMAT = 13
# Chunks parsed at once: two keep both cores busy; each holds a chunk's bytes and tables.
_PARSERS = 2
_OWN_TABLES = pa.array(["send", "poll"])
# Directories of the Parquet copy, one per kind of row.
_OPS, _RECORDS, _BLOCKS, _SENDS = "kind=op", "kind=record", "kind=block", "kind=send"
_MOPS, _TXNS, _GROUP = "kind=mop", "kind=txn", "kind=group"
_SCHEMAS = {_OPS: OPS.remove(OPS.get_field_index("line")), _RECORDS: RECORDS, _BLOCKS: BLOCKS, _SENDS: SENDS,
            _MOPS: MOPS, _TXNS: TXNS, _GROUP: GROUP}
# Dictionary encoding pays for the few-valued text columns only (names, not ids or hashes);
# statistics only for the columns Spark's filters skip row groups by.
_WRITE_OPTIONS = dict(use_dictionary=["process", "type", "f", "topic", "consumer", "channel", "osn", "status", "seek",
                                     "mf", "isolation"],
                      write_statistics=["f", "type", "index"])


@dataclass(frozen=True)
class Tables:
    """A history, or a batch of histories, as flat frames: what every checker takes. Every
    table's first column is HISTORY, which history of the batch a row is of.

    ops: one row per usable op but sends and polls, which are checked from their own
    tables (checkers.ingest.schema.OP_COLUMNS: the value's scalar fields);
    sends: one row per send completion, with invoke_index and invoke_time of its invoke
    (topic and value taken from the invoke when the completion omits them);
    records: one row per record of an ok poll or final read, or of a txn's poll (RECORD_COLUMNS);
    blocks: one row per block of an ok deliver (BLOCK_COLUMNS);
    mops: one row per micro-op of a txn completion (format 2, MOP_COLUMNS);
    txns: one row per txn completion, with its invoke's index and time (TXN_COLUMNS).
    mops and txns are None for a history without txn ops (format 1), so that its check
    plans nothing for them (checkers.kafka runs the txn checks only where they are);
    group: one row per partition of a consumer group's rebalance or commit (GROUP_COLUMNS),
    None for a history without subscribe or commit ops, likewise.
    """

    ops: DataFrame
    sends: DataFrame
    records: DataFrame
    blocks: DataFrame
    mops: DataFrame | None = None
    txns: DataFrame | None = None
    group: DataFrame | None = None


# The ops of a consumer group: a history with any has a group table.
GROUP_FS = ("subscribe", "commit")


@dataclass(frozen=True)
class Counts:
    """What a history holds, counted while it was read: known without Spark."""

    by_f: dict[str, dict[str, int]]  # ops by f and type
    records: dict[str, int] = field(default_factory=dict)  # records of ok polls and final reads, by f
    # format 2: micro-ops of txn completions by name and their txn's type (the records of
    # poll micro-ops, whatever their txn's end, are counted in `records` as polls' are)
    mops: dict[str, dict[str, int]] = field(default_factory=dict)

    def has(self, *fs: str) -> bool:
        """Whether any op of these fs is in the history."""
        return any(f in self.by_f for f in fs)

    def ok(self, f: str) -> int:
        """How many ops of `f` completed ok."""
        return self.by_f.get(f, {}).get("ok", 0)

    def ok_mops(self, mf: str) -> int:
        """How many micro-ops named `mf` belong to txns that completed ok (committed)."""
        return self.mops.get(mf, {}).get("ok", 0)

    @property
    def ops(self) -> int:
        return sum(n for types in self.by_f.values() for n in types.values())


@dataclass(frozen=True)
class History:
    """A validated history: where it comes from, its Parquet copy, what it holds and what
    was skipped. Its tables are read from the copy by `tables`, once Spark is wanted."""

    source: Path
    parquet: Path
    warnings: tuple[str, ...]
    counts: Counts

    @property
    def op_count(self) -> int:
        return self.counts.ops

    def tables(self, spark: SparkSession, number: int = 0) -> Tables:
        """The tables of the Parquet copy, read with their known schemas (inferring them would
        cost a Spark job per table), as history `number` of a batch."""

        def part(name: str, columns: tuple[str, ...]) -> DataFrame:
            schema = spark_schema(_SCHEMAS[name])
            path = self.parquet.resolve() / name  # Spark's JVM may not share this process's working directory
            if not path.is_dir():  # no row of that kind was written
                df = spark.createDataFrame([], schema)
            else:
                df = spark.read.schema(schema).parquet(str(path))
            return df.select(F.lit(number).alias(HISTORY), *columns)

        txns = self.counts.has(TXN)
        return Tables(ops=part(_OPS, OP_COLUMNS), sends=part(_SENDS, SEND_COLUMNS),
                      records=part(_RECORDS, RECORD_COLUMNS), blocks=part(_BLOCKS, BLOCK_COLUMNS),
                      mops=part(_MOPS, MOP_COLUMNS) if txns else None,
                      txns=part(_TXNS, TXN_COLUMNS) if txns else None,
                      group=part(_GROUP, GROUP_COLUMNS) if self.counts.has(*GROUP_FS) else None)


def history_file(path: Path) -> Path:
    """The history file for a run directory or a history file path."""
    if path.is_dir():
        path = path / HISTORY_JSONL
    if not path.is_file():
        raise HistoryError(f"{path}: no such history file")
    return path


def load_history(source: Path, parquet: Path, progress: Callable[[str], None] | None = None) -> History:
    """The validated history of `source`, converting it to `parquet` unless a fresh copy exists.

    Spark is not needed for this: bad input is told, and a history that needs no check
    is answered, without it (check_history starts it beside this for a large history only).

    `progress` hears which of the two happens: converting a large history is most of a
    first check, and a user waiting on it should know that a re-check will not pay it.
    """
    stamp = _stamp(source)
    marker = _read_marker(parquet)
    say = progress or (lambda _: None)
    if marker is None or marker.get("stamp") != stamp:
        say(f"reading {source} ({stamp['size'] / 2**20:.1f} MiB) into {parquet}; re-checks reuse that copy")
        read = _convert(source, parquet)
        marker = {"stamp": stamp, "warnings": read.warnings, "by_f": read.by_f, "records_by_f": read.records_by_f,
                  "mops_by_f": read.mops_by_f}
        (parquet / _MARKER).write_text(json.dumps(marker))
    else:
        say(f"reusing {parquet}, converted from {source} before")
    return History(source=source, parquet=parquet, warnings=tuple(marker.get("warnings", [])),
                   counts=Counts(by_f=marker.get("by_f", {}), records=marker.get("records_by_f", {}),
                                 mops=marker.get("mops_by_f", {})))


def _stamp(source: Path) -> dict[str, int | str]:
    st = source.stat()
    return {"format": _CACHE_FORMAT, "path": str(source.resolve()), "size": st.st_size,
            "mtime_ns": st.st_mtime_ns}


def _read_marker(parquet: Path) -> dict | None:
    try:
        return json.loads((parquet / _MARKER).read_text())
    except (OSError, ValueError):
        return None


def tables_of(spark: SparkSession, flat: Flat, number: int = 0) -> Tables:
    """The tables of flat rows held in memory (small histories, tests), as history `number`
    of a batch: nothing is written."""

    def frame(table: pa.Table, columns: tuple[str, ...]) -> DataFrame:
        df = spark.createDataFrame(table) if table.num_rows else spark.createDataFrame([], spark_schema(table.schema))
        return df.select(F.lit(number).alias(HISTORY), *columns)

    sends, txns = Pairing().pair(flat.ops)
    has_txns = bool(pc.any(pc.equal(flat.ops["f"], TXN)).as_py())
    has_group = bool(pc.any(pc.is_in(flat.ops["f"], pa.array(GROUP_FS))).as_py())
    return Tables(ops=frame(_kept(flat.ops), OP_COLUMNS), sends=frame(sends, SEND_COLUMNS),
                  records=frame(flat.records, RECORD_COLUMNS), blocks=frame(flat.blocks, BLOCK_COLUMNS),
                  mops=frame(flat.mops, MOP_COLUMNS) if has_txns else None,
                  txns=frame(txns, TXN_COLUMNS) if has_txns else None,
                  group=frame(flat.group, GROUP_COLUMNS) if has_group else None)


def _kept(ops: pa.Table) -> pa.Table:
    """The ops the checkers read as ops: all but sends and polls (most of a history, and
    checked from the sends and records tables)."""
    return ops.filter(pc.invert(pc.is_in(ops["f"], _OWN_TABLES)))


@dataclass
class Read:
    """What streaming a history gave besides its tables."""

    warnings: list[str] = field(default_factory=list)
    by_f: dict[str, dict[str, int]] = field(default_factory=dict)  # op counts by f and type
    records_by_f: dict[str, int] = field(default_factory=dict)  # records of ok polls and final reads, by f
    mops_by_f: dict[str, dict[str, int]] = field(default_factory=dict)  # txns' micro-ops by name and txn type


def _flat(chunk: Chunk) -> Flat:
    return flatten(parse(chunk), last=chunk.last and _torn_tail(chunk.data))


def _torn_tail(data: bytes) -> bool:
    """Whether the data's last line may be one a crashed writer tore: it is not JSON. A
    complete line (JSON) that fails validation is an error, not a torn one."""
    body = data.rstrip(b"\r\n")
    try:
        json.loads(body[body.rfind(b"\n") + 1:])
    except (ValueError, RecursionError):
        return True
    return False


def _in_order(pool: ThreadPoolExecutor, work: Callable[[Chunk], Flat], items: Iterator[Chunk],
              ahead: int) -> Iterator[Flat]:
    """work(item) for each item, in order, with up to `ahead` items worked on at once."""
    pending: deque[Future] = deque()
    for item in items:
        pending.append(pool.submit(work, item))
        if len(pending) >= ahead:
            yield pending.popleft().result()
    while pending:
        yield pending.popleft().result()


def read_lines(source: Path, write: Callable[[dict[str, pa.Table]], None]) -> Read:
    """Stream `source` through checkers.ingest.lines and checkers.ingest.pairing into `write` (tables by
    Parquet directory), chunk by chunk.

    Chunks are parsed two at a time (Arrow lets go of the GIL), so that a chunk's
    single-threaded steps overlap the next one's parse; pairing takes them in order.
    """
    read = Read()
    pairing = Pairing()
    first_mistyped: tuple[int, str] | None = None
    n_mistyped = 0
    try:
        with ThreadPoolExecutor(max_workers=_PARSERS, thread_name_prefix="ordeal-parse") as pool:
            for flat in _in_order(pool, _flat, chunks(source), _PARSERS):
                if flat.mistyped:
                    first_mistyped = first_mistyped or flat.mistyped[0]
                    n_mistyped += len(flat.mistyped)
                read.warnings += [f"{source}: line {n}: skipped a torn last line" for n in flat.skipped]
                for row in flat.ops.group_by(["f", "type"]).aggregate([([], "count_all")]).to_pylist():
                    by_type = read.by_f.setdefault(row["f"], {})
                    by_type[row["type"]] = by_type.get(row["type"], 0) + row["count_all"]
                for row in flat.records.group_by(["f"]).aggregate([([], "count_all")]).to_pylist():
                    read.records_by_f[row["f"]] = read.records_by_f.get(row["f"], 0) + row["count_all"]
                for row in flat.mops.group_by(["mf", "type"]).aggregate([([], "count_all")]).to_pylist():
                    by_type = read.mops_by_f.setdefault(row["mf"], {})
                    by_type[row["type"]] = by_type.get(row["type"], 0) + row["count_all"]
                sends, txns = pairing.pair(flat.ops)
                write({_OPS: _kept(flat.ops), _RECORDS: flat.records, _BLOCKS: flat.blocks, _SENDS: sends,
                       _MOPS: flat.mops, _TXNS: txns, _GROUP: flat.group})
    except BadLine as exc:
        raise HistoryError(f"{source}: {exc}") from None
    if first_mistyped is not None:
        line, why = first_mistyped
        more = f" ({n_mistyped} lines have a field of the wrong type)" if n_mistyped > 1 else ""
        raise HistoryError(f"{source}: line {line}: {why}: a field the checks read cannot be read{more}")
    return read


def _by_f(table: pa.Table) -> list[pa.Table]:
    """`table` cut into one table per `f` (when it has one): written as row groups of one `f`
    each, a filter on `f` skips the others by their statistics."""
    if "f" not in table.column_names or table.num_rows == 0:
        return [table]
    return [table.filter(pc.equal(table["f"], f)) for f in pc.unique(table["f"]).to_pylist() if f is not None]


def _convert(source: Path, parquet: Path) -> Read:
    if parquet.exists():
        shutil.rmtree(parquet)
    parquet.mkdir(parents=True)
    writers: dict[str, pq.ParquetWriter] = {}

    def write(tables: dict[str, pa.Table]) -> None:
        for name, table in tables.items():
            if not table.num_rows:
                continue
            if name not in writers:
                (parquet / name).mkdir()
                writers[name] = pq.ParquetWriter(parquet / name / "part-0.parquet", _SCHEMAS[name],
                                                 **_WRITE_OPTIONS)
            for group in _by_f(table.select(_SCHEMAS[name].names)):
                writers[name].write_table(group)

    # A chunk is written while later ones are parsed and paired (Arrow lets go of the GIL);
    # one write at a time, so that memory holds that chunk and read_lines' _PARSERS more.
    pending: list[Future] = []

    def write_behind(tables: dict[str, pa.Table]) -> None:
        if pending:
            pending.pop().result()
        pending.append(pool.submit(write, tables))

    try:
        try:
            with ThreadPoolExecutor(max_workers=1, thread_name_prefix="ordeal-parquet") as pool:
                read = read_lines(source, write_behind)
                if pending:
                    pending.pop().result()
        finally:
            for writer in writers.values():
                writer.close()
    except BaseException:  # HistoryError, or any other failure: no half-written copy is left
        shutil.rmtree(parquet, ignore_errors=True)
        raise
    return read
