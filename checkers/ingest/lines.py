"""A history's JSON lines -> the flat tables (checkers.ingest.schema OPS, RECORDS, BLOCKS), in Arrow.

Why Arrow and not Spark's JSON reader: parsing is most of a first check, and Arrow's
C++ reader parses the same lines several times faster. The file is streamed in chunks
of whole lines, so memory holds one chunk, never the history; the checks stay Spark
transforms over the Parquet copy this feeds (checkers.ingest.history). Nor another reader,
though Arrow parses the lines of a 10M-op history (59% of converting it) at some 80 MB/s
a core: DuckDB's took half the CPU, but it casts a field of another JSON type ("7" and
true to integers, 7.5 rounded to 8) where the input rules below refuse it; polars' took
2.6 times Arrow's CPU (20 chunks of that history, read twice each way in one process).

A chunk's lines go to Arrow's reader all at once, but for the few it cannot take as
they are: nemesis ops (free-form values, and a name for a process), assigns (their
partitions are [topic, partition] pairs, lists of mixed types), and the few ops whose fields
Arrow's reader is not asked for (a consumer group's, config updates) are set aside first, and
when the reader still refuses the chunk (a torn or malformed line, a field
of another JSON type) every line of it is read with the json module instead. Both
ways give the same rows. Format 2's txn lines are set aside too and read by
checkers.ingest.txn_lines (Arrow, or the json module when Arrow refuses them); their micro-ops
become the mops table and their polls' records join the records table. A field the
checks read (schema.READ_FIELDS, and the op's time) whose JSON type does not fit the
schema is never read as null: Arrow refuses such a line, and the json-module path marks it (`mistyped`); the history is then refused
(HistoryError naming the first such line and how many there are), for a null in its
place could hide a loss. Other fields of another type (nemesis values are free-form)
are read as null.

Input rules (HistoryError unless said otherwise): a line that is not a JSON object with
index, process, type and f names its line number, except the last line of the file,
which a crashed writer may have torn (when it is not JSON): it is skipped with a
warning (a complete line that fails validation is an error like any other); an unknown `type`,
or an `f` outside format versions 1 and 2 on a client process, is an error (the nemesis may
record any `f`). Blank lines are skipped.
"""
from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj

from checkers.ingest import group_lines, txn_lines
from checkers.ingest.schema import (BLOCKS, CLIENT_FS, CLIENT_OP, CONFIG_UPDATE, GROUP, NEMESIS, OP, OPS,
                                    READ_FIELDS, READ_OP_FIELDS, RECORDS, TYPES, VALUE)
from checkers.ingest.txn_schema import MOP_LIST, MOPS, TXN

ASSIGN = "assign"
# Lines read with the json module besides nemesis ops and assigns: a consumer group's commits
# and the polls that saw a rebalance (few; Arrow's reader is not asked for their fields).
GROUP_WORDS = ("commit", "rebalances")

# Below glibc's largest threshold for serving an allocation by mmap (32 MiB): a chunk's
# bytes then reuse the heap's memory once the first chunk is freed, where each 32 MiB chunk
# had fresh pages mapped, faulted in and zeroed, twice (read, then cut at a line's end):
# reading the 2.6 GB of a 10M-op history took 2.5 CPU-s at 32 MiB, 0.35 at 16, and the
# whole convert 17.0 -> 15.0 s (CPU 31 -> 27 s).
CHUNK_BYTES = 16 * 2**20
# Arrow parses a chunk in blocks on several threads; a block must hold whole lines.
_BLOCK_BYTES = 4 * 2**20
# Lines this long on average (ops are a few hundred bytes) mark a chunk that likely holds
# one longer than a block.
_LONG_LINE = _BLOCK_BYTES // 64
_NOT_AN_OP = "not a JSON op with index, process, type and f"
# The lines read with the json module hold one of these (as JSON strings: the process
# "nemesis", the f "assign", "commit" or "config-update", the key "rebalances"); a line that
# holds one by chance is read the same way. Config updates are a handful a run: reading their
# lines so keeps their three fields out of what Arrow parses every line as (schema.CLIENT_OP).
_ASIDE_WORDS = (NEMESIS, ASSIGN, *GROUP_WORDS, CONFIG_UPDATE)
_ASIDE = re.compile(b"|".join(re.escape(json.dumps(word).encode()) for word in _ASIDE_WORDS))
# Whether a chunk holds any of them or a txn line's mark, asked of Arrow's regular expressions
# (RE2): one pass over the chunk without the GIL, where Python's `re` and a `find` made two
# passes holding it (3.8 of the 33 CPU seconds that converting a 10M-op history took, and
# the parsers' threads waited on them).
_SET_ASIDE = "|".join([*(re.escape(json.dumps(word)) for word in _ASIDE_WORDS),
                       re.escape(txn_lines.MARK.decode())])  # the mark is quoted already
_INT_RANGE = {pa.int32(): (-2**31, 2**31 - 1), pa.int64(): (-2**63, 2**63 - 1)}


class BadLine(ValueError):
    """A line that cannot be checked: `line` is its number (from 1)."""

    def __init__(self, line: int, reason: str) -> None:
        super().__init__(f"line {line}: {reason}")
        self.line = line
        self.reason = reason


@dataclass(frozen=True)
class Chunk:
    """Whole lines of the file: `data`, whose first line is line `first_line`, holding
    `newlines` line ends (counted when None)."""

    first_line: int
    data: bytes
    last: bool
    newlines: int | None = None

    @property
    def lines(self) -> int:
        """How many lines `data` holds (a last one without its end counts)."""
        ends = self.data.count(b"\n") if self.newlines is None else self.newlines
        return ends + (bool(self.data) and not self.data.endswith(b"\n"))


@dataclass
class Flat:
    """One chunk's flat tables, and the lines it skipped (their numbers)."""

    ops: pa.Table
    records: pa.Table
    blocks: pa.Table
    skipped: list[int] = field(default_factory=list)
    mistyped: list[tuple[int, str]] = field(default_factory=list)  # (line, why) of lines with a wrong type
    mops: pa.Table = field(default_factory=MOPS.empty_table)  # format 2: the micro-ops of txn completions
    group: pa.Table = field(default_factory=GROUP.empty_table)  # consumer groups' rebalances and commits


def chunks(path: Path, size: int = CHUNK_BYTES) -> Iterator[Chunk]:
    """The file in chunks of about `size` bytes, each ending at a line's end (a longer line is one chunk).

    A chunk's bytes are copied once: the part of a line read past its end is read
    again with the next chunk rather than carried over.
    """
    line = 1
    with open(path, "rb") as f:
        total = os.fstat(f.fileno()).st_size
        at = 0
        while at < total:
            data = f.read(min(size, total - at))
            if not data:  # the file shrank under us
                return
            if at + len(data) < total:
                cut = data.rfind(b"\n") + 1
                if cut == 0:  # no line ends here yet: the chunk is this line, whole
                    data += f.readline()
                elif cut < len(data):
                    data = data[:cut]
                    f.seek(at + cut)
            at += len(data)
            newlines = _newlines(data)
            yield Chunk(line, data, at >= total, newlines)
            line += newlines


def _newlines(data: bytes) -> int:
    """How many line ends `data` holds: counted by numpy, which lets go of the GIL (bytes.count holds it)."""
    return int(np.count_nonzero(np.frombuffer(data, dtype=np.uint8) == 10))


def parse(chunk: Chunk) -> pa.Table:
    """The chunk's lines as OP rows plus `line`, one per line that is not blank, in line order.

    Most chunks hold client ops only, every line filled: Arrow reads them whole, and
    nothing needs to know where each line starts. The others are cut into lines first,
    and so are chunks of long lines (final reads and delivers of whole logs): Arrow would
    refuse a line longer than its block only after parsing much of the chunk.
    """
    if not _holds_aside(chunk.data) and len(chunk.data) <= chunk.lines * _LONG_LINE:
        table = _arrow_whole(chunk)
        if table is not None:
            return table
    marks = [m.start() for m in _ASIDE.finditer(chunk.data)]
    buf = np.frombuffer(chunk.data, dtype=np.uint8)
    ends = np.flatnonzero(buf == 10)
    if not len(ends) or ends[-1] != len(buf) - 1:
        ends = np.append(ends, len(buf))
    starts = np.concatenate(([0], ends[:-1] + 1))
    filled = ends > starts
    aside = np.zeros(len(starts), dtype=bool)
    aside[np.searchsorted(ends, np.array(marks, dtype=np.int64))] = True
    txns = np.zeros(len(starts), dtype=bool)
    _mark(chunk.data, txn_lines.MARK, ends, txns)
    txns &= ~aside  # read with the json module, which takes txn lines too
    numbers = chunk.first_line + np.arange(len(starts), dtype=np.int64)
    plain = ~aside & ~txns
    table = _arrow_read(chunk.data, starts, ends, plain, filled & plain, numbers)
    if table is None and _has_blank(buf, starts, ends, filled):  # Arrow skips lines of blanks only
        filled = _solid(buf, starts, ends)
        table = _arrow_read(chunk.data, starts, ends, plain, filled & plain, numbers)
    if table is None:
        return _python_read(chunk.data, starts, ends, filled, numbers)
    parts = [table]
    if (txns & filled).any():
        parts.append(_txn_read(chunk.data, starts, ends, txns & filled, numbers))
    if (aside & filled).any():
        parts.append(_python_read(chunk.data, starts, ends, aside & filled, numbers))
    if len(parts) > 1:
        table = pa.concat_tables(parts)
        table = table.take(pc.sort_indices(table["line"]))
    return table


def _holds_aside(data: bytes) -> bool:
    """Whether `data` holds a word of a line that is not read by Arrow as it is (_SET_ASIDE)."""
    text = pa.LargeBinaryArray.from_buffers(pa.large_binary(), 1, [None, _offsets(len(data)), pa.py_buffer(data)])
    return bool(pc.match_substring_regex(text, _SET_ASIDE)[0].as_py())


def _offsets(size: int) -> pa.Buffer:
    return pa.py_buffer(np.array([0, size], dtype=np.int64))


def _mark(data: bytes, mark: bytes, ends: np.ndarray, lines: np.ndarray) -> None:
    """Set `lines` where a line holds `mark`."""
    at = data.find(mark)
    while at >= 0:
        line = int(np.searchsorted(ends, at))
        lines[line] = True
        at = data.find(mark, int(ends[line]) + 1) if line < len(ends) - 1 else -1


def _txn_read(data: bytes, starts: np.ndarray, ends: np.ndarray, rows: np.ndarray, numbers: np.ndarray) -> pa.Table:
    """The txn lines `rows` (none blank): by Arrow after their micro-ops' heads are rewritten
    (checkers.ingest.txn_lines), else one by one."""
    idx = np.flatnonzero(rows)
    text = b"\n".join(data[s:e] for s, e in zip(starts[idx].tolist(), ends[idx].tolist()))
    longest = int((ends[rows] - starts[rows]).max())
    table = txn_lines.arrow_read(text, len(idx), longest)
    if table is None:
        return _python_read(data, starts, ends, rows, numbers)
    n = table.num_rows
    columns = {name: table[name] for name in ("index", "time", "type", "f")}
    return pa.table({"line": pa.array(numbers[rows], pa.int64()), "index": columns["index"],
                     "time": columns["time"], "process": pc.cast(table["process"], pa.string()),
                     "type": columns["type"], "f": columns["f"], "value": pa.nulls(n, VALUE),
                     "mistyped": pa.nulls(n, pa.string()), "mops": table["value"]}, schema=_WITH_LINE)


def _solid(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Per line, whether it holds more than blanks."""
    solid = np.cumsum(_SOLID[buf], dtype=np.int64)  # non-blank bytes up to each position
    before = np.where(starts > 0, solid[np.maximum(starts - 1, 0)], 0)
    return (ends > starts) & (solid[np.maximum(ends - 1, 0)] - before > 0)


def _has_blank(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray, filled: np.ndarray) -> bool:
    """Whether a line of some length holds blanks only (cheap test: its first byte is one)."""
    return bool((~_SOLID[buf[starts[filled]]]).any())


def _arrow_read(data: bytes, starts: np.ndarray, ends: np.ndarray, text_lines: np.ndarray, rows: np.ndarray,
                numbers: np.ndarray) -> pa.Table | None:
    """The lines `rows` (the non-blank ones of `text_lines`) read by Arrow, or None when it refuses any."""
    if not rows.any():
        return _WITH_LINE.empty_table()
    if text_lines.all():
        text = data
    else:  # the runs of consecutive lines, without the lines between them
        idx = np.flatnonzero(text_lines)
        breaks = np.flatnonzero(np.diff(idx) != 1)
        firsts, lasts = idx[np.concatenate(([0], breaks + 1))], idx[np.concatenate((breaks, [len(idx) - 1]))]
        text = b"\n".join(data[s:e] for s, e in zip(starts[firsts].tolist(), ends[lasts].tolist()))
    longest = int((ends[rows] - starts[rows]).max()) + 2
    table = _read_json(text, max(_BLOCK_BYTES, longest))
    if table is None or table.num_rows != int(rows.sum()):  # lines and rows do not match up
        return None
    return _numbered(table, numbers[rows])


def _arrow_whole(chunk: Chunk) -> pa.Table | None:
    """Every line of the chunk read by Arrow at once, or None when it refuses one, or skips one
    (a blank line), or a line is longer than a block."""
    if not chunk.data:
        return None
    table = _read_json(chunk.data, _BLOCK_BYTES)
    lines = chunk.lines
    if table is None or table.num_rows != lines:
        return None
    return _numbered(table, chunk.first_line + np.arange(lines, dtype=np.int64))


def _read_json(text: bytes, block_size: int) -> pa.Table | None:
    options = pj.ReadOptions(use_threads=True, block_size=block_size)
    try:
        return pj.read_json(pa.BufferReader(text), read_options=options,
                            parse_options=pj.ParseOptions(explicit_schema=CLIENT_OP,
                                                          unexpected_field_behavior="ignore"))
    except pa.ArrowInvalid:
        return None


def _numbered(table: pa.Table, numbers: np.ndarray) -> pa.Table:
    """Arrow's rows with the process as text and the value's full shape (VALUE: the fields
    Arrow did not read are null), numbered with their lines."""
    table = table.set_column(table.schema.get_field_index("process"), "process",
                             pc.cast(table["process"], pa.string()))
    value = table["value"].combine_chunks()
    children = [value.field(f.name) if value.type.get_field_index(f.name) >= 0 else pa.nulls(len(value), f.type)
                for f in VALUE]
    full = pa.StructArray.from_arrays(children, fields=list(VALUE), mask=value.is_null())
    table = table.set_column(table.schema.get_field_index("value"), "value", full)
    table = table.append_column("mistyped", pa.nulls(table.num_rows, pa.string()))
    table = table.append_column("mops", pa.nulls(table.num_rows, MOP_LIST))
    return table.add_column(0, "line", pa.array(numbers, pa.int64())).combine_chunks()


def _python_read(data: bytes, starts: np.ndarray, ends: np.ndarray, rows: np.ndarray,
                 numbers: np.ndarray) -> pa.Table:
    """The lines `rows` read one by one; a line that is not a JSON object gives a row of nulls,
    one of blanks none."""
    out = []
    for s, e, n in zip(starts[rows].tolist(), ends[rows].tolist(), numbers[rows].tolist()):
        line = data[s:e]
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except ValueError:
            raw = None
        except RecursionError:
            raise BadLine(n, "nested too deeply to read") from None
        if isinstance(raw, dict):
            process = raw.get("process")
            if isinstance(process, int) and not isinstance(process, bool):
                raw["process"] = str(process)  # Jepsen's processes are integers: text, as Arrow's rows have it
            row = conform(_as_held(raw), OP)
            row["mistyped"] = mistyped(raw)
            if raw.get("f") == TXN:
                row["mops"] = conform(txn_lines.mop_pairs(raw.get("value")), MOP_LIST)
        else:
            row = {}
        row["line"] = n
        out.append(row)
    return pa.Table.from_pylist(out, schema=_WITH_LINE)


def conform(raw: Any, kind: pa.DataType | pa.Schema) -> Any:
    """`raw` (parsed JSON) in the shape of `kind`, with every part whose JSON type does not fit as None."""
    if isinstance(kind, pa.Schema) or pa.types.is_struct(kind):
        if not isinstance(raw, dict):
            return None
        return {f.name: conform(raw.get(f.name), f.type) for f in _fields(kind)}
    if raw is None:
        return None
    if pa.types.is_list(kind):
        return [conform(x, kind.value_type) for x in raw] if isinstance(raw, list) else None
    if pa.types.is_string(kind):
        return raw if isinstance(raw, str) else None
    if pa.types.is_boolean(kind):
        return raw if isinstance(raw, bool) else None
    if isinstance(raw, bool) or not isinstance(raw, int):
        return None
    low, high = _INT_RANGE[kind]
    return raw if low <= raw <= high else None


def _as_held(raw: dict[str, Any]) -> dict[str, Any]:
    """An assign's [topic, partition] pairs as the structs the tables hold (schema.ASSIGNED);
    anything else in their place is left as it is (`mistyped` names it)."""
    value = raw.get("value")
    if raw.get("f") != ASSIGN or not isinstance(value, dict) or not isinstance(value.get("partitions"), list):
        return raw
    held = [{"topic": p[0], "partition": p[1]} if isinstance(p, list) and len(p) == 2 else p
            for p in value["partitions"]]
    return {**raw, "value": {**value, "partitions": held}}


def _pair_misfit(raw: Any, path: str) -> str | None:
    """Why an assign's `partitions` is not a list of [topic, partition] pairs, or None."""
    if raw is None:
        return None
    if not isinstance(raw, list):
        return f"{path} is {_shown(raw)}, not a list"
    for i, pair in enumerate(raw):
        if (not isinstance(pair, list) or len(pair) != 2 or not isinstance(pair[0], str)
                or conform(pair[1], pa.int32()) is None):
            return f"{path}[{i}] is {_shown(pair)}, not a [topic, partition] pair"
    return None


_VALUE_FIELDS = {f.name: f.type for f in VALUE}
_OP_FIELDS = {f.name: f.type for f in OP}


def mistyped(raw: dict[str, Any]) -> str | None:
    """Where a field the checks read has a JSON type that does not fit (e.g. "value.offset is
    the string '0', not an integer"), or None."""
    for name in READ_OP_FIELDS:
        why = _misfit(raw.get(name), _OP_FIELDS[name], name)
        if why:
            return why
    f, process = raw.get("f"), raw.get("process")
    if not isinstance(f, str) or not isinstance(process, str) or (process == NEMESIS and f != "crash"):
        return None
    if f == TXN:
        return txn_lines.mop_misfit(raw.get("value"), _misfit)
    names = READ_FIELDS.get(f, ())
    if not names:
        return None
    value = raw.get("value")
    if value is None:
        return None
    if not isinstance(value, dict):
        return f"value is {_shown(value)}, not an object"
    for name in names:
        if f == ASSIGN and name == "partitions":
            why = _pair_misfit(value.get(name), f"value.{name}")
        else:
            why = _misfit(value.get(name), _VALUE_FIELDS[name], f"value.{name}")
        if why:
            return why
    return None


def _misfit(raw: Any, kind: pa.DataType, path: str) -> str | None:
    """Why `raw` does not fit `kind` (the first part that does not), or None; null fits anything."""
    if raw is None:
        return None
    if pa.types.is_struct(kind):
        if not isinstance(raw, dict):
            return f"{path} is {_shown(raw)}, not an object"
        for f in _fields(kind):
            why = _misfit(raw.get(f.name), f.type, f"{path}.{f.name}")
            if why:
                return why
        return None
    if pa.types.is_list(kind):
        if not isinstance(raw, list):
            return f"{path} is {_shown(raw)}, not a list"
        for i, x in enumerate(raw):
            why = _misfit(x, kind.value_type, f"{path}[{i}]")
            if why:
                return why
        return None
    if conform(raw, kind) is not None:
        return None
    want = "a string" if pa.types.is_string(kind) else "true or false" if pa.types.is_boolean(kind) else (
        "an integer" if pa.types.is_int64(kind) else f"an integer in {kind}")
    return f"{path} is {_shown(raw)}, not {want}"


def _shown(raw: Any) -> str:
    text = json.dumps(raw)
    return text if len(text) <= 40 else text[:37] + "..."


def _fields(kind: pa.DataType | pa.Schema) -> list[pa.Field]:
    return list(kind) if isinstance(kind, pa.Schema) else [kind.field(i) for i in range(kind.num_fields)]


def defect(table: pa.Table) -> pa.ChunkedArray | pa.Array:
    """Per row, why it cannot be used, or null. The reasons are spelt out only when a row has
    one: nearly every chunk has none."""
    missing = pc.or_(pc.or_(pc.is_null(table["index"]), pc.is_null(table["process"])),
                     pc.or_(pc.is_null(table["type"]), pc.is_null(table["f"])))
    unknown_type = pc.fill_null(pc.invert(pc.is_in(table["type"], pa.array(TYPES))), False)
    client = pc.fill_null(pc.not_equal(table["process"], NEMESIS), False)
    unknown_f = pc.and_(client, pc.fill_null(pc.invert(pc.is_in(table["f"], pa.array(CLIENT_FS))), False))
    if not pc.any(pc.or_(pc.or_(missing, unknown_type), unknown_f)).as_py():
        return pa.nulls(table.num_rows, pa.string())
    return pc.case_when(pc.make_struct(missing, unknown_type, unknown_f),
                        pa.scalar(_NOT_AN_OP), pc.binary_join_element_wise("unknown type ", table["type"], ""),
                        pc.binary_join_element_wise("unknown f ", table["f"], ""))


def flatten(table: pa.Table, *, last: bool) -> Flat:
    """The flat tables of a chunk's parsed rows; raises BadLine for the first unusable row,
    but for a torn last line of the file (`last`: this is the file's last chunk)."""
    skipped: list[int] = []
    why = defect(table)
    bad = pc.is_valid(why)
    if pc.any(bad).as_py():
        first = pc.min(pc.filter(table["line"], bad)).as_py()
        reason = pc.filter(why, pc.equal(table["line"], first))[0].as_py()
        if not (last and first == pc.max(table["line"]).as_py() and reason == _NOT_AN_OP):
            raise BadLine(first, reason)
        skipped.append(first)
        table = table.filter(pc.invert(bad))
    wrong: list[tuple[int, str]] = []
    if "mistyped" in table.column_names:
        marked = pc.is_valid(table["mistyped"])
        if pc.any(marked).as_py():
            wrong = list(zip(pc.filter(table["line"], marked).to_pylist(),
                             pc.filter(table["mistyped"], marked).to_pylist()))
    table = table.combine_chunks()
    value = table["value"]
    ops = pa.table({name: table[name] if name in _OWN else pc.struct_field(value, name) for name in OPS.names},
                   schema=OPS)
    ok = pc.equal(table["type"], "ok")
    records = _nested(table, pc.and_(ok, pc.is_in(table["f"], pa.array(["poll", "final-read"]))), "records",
                      RECORDS, inherit=("topic", "partition"))
    blocks = _lower_hashes(_nested(table, pc.and_(ok, pc.equal(table["f"], "deliver")), "blocks", BLOCKS, inherit=()))
    mops = MOPS.empty_table()
    group = group_rows(table)
    if "mops" in table.column_names and pc.any(pc.is_valid(table["mops"])).as_py():
        client = table.filter(pc.fill_null(pc.not_equal(table["process"], NEMESIS), False))
        mops, txn_records, txn_group = txn_lines.flatten_txns(client.select(["index", "process", "type", "f", "mops"]))
        if txn_records.num_rows:
            records = pa.concat_tables([records, txn_records])
        group = pa.concat_tables([group, txn_group])
    return Flat(ops, records, blocks, skipped, wrong, mops, group)


def group_rows(table: pa.Table) -> pa.Table:
    """The GROUP rows of a chunk: every partition a poll's completion saw revoked or assigned
    (whatever the poll's end: the rebalance happened), and every partition of a commit's
    completion (its type says whether it is committed)."""
    done = pc.fill_null(pc.not_equal(table["type"], "invoke"), False)
    parts = []
    for f, name, kind, offset in group_lines.SOURCES:
        ops = table.filter(pc.and_(done, pc.fill_null(pc.equal(table["f"], f), False))).combine_chunks()
        if ops.num_rows:
            value = ops["value"].combine_chunks()
            parts.append(group_lines.rows(ops["index"], ops["type"], pc.struct_field(value, "consumer"),
                                          pc.struct_field(value, name), f, kind, offset))
    return group_lines.joined(parts)


# A block's hashes, hex that the ordering checks compare as lower-case (checkers.ordering).
_HASHES = ("hash", "previous_hash", "data_hash")


def _lower_hashes(blocks: pa.Table) -> pa.Table:
    """`blocks` with the hex of their hashes lower-cased (ASCII letters only: hex has no
    others), here, once per block row: 0.02 s for a 10M-op history's 948K blocks. Spark's
    F.lower on every delivered block, before the deduplication of the deliveries
    (checkers.ordering.delivered_blocks), cost that check's tasks 1.1 CPU-s of 4.6 (Spark's
    event log); its JVM, 5 of 6 A/B pairs quicker, the rest of that gap JIT, GC and noise."""
    for name in _HASHES:
        at = blocks.schema.get_field_index(name)
        blocks = blocks.set_column(at, blocks.schema.field(at), pc.ascii_lower(blocks[name]))
    return blocks


def _nested(table: pa.Table, where: pa.ChunkedArray, name: str, schema: pa.Schema,
            inherit: tuple[str, ...]) -> pa.Table:
    """One row per element of the value's list `name` in the rows `where`, beside their op's fields;
    the fields in `inherit` are taken from the op's value where the element omits them."""
    rows = table.filter(pc.fill_null(where, False)).combine_chunks()
    if rows.num_rows == 0:
        return schema.empty_table()
    value = rows["value"].combine_chunks()
    lists = pc.struct_field(value, name)
    parents = pc.list_parent_indices(lists)
    elements = pc.list_flatten(lists)
    lengths = pc.fill_null(pc.list_value_length(lists), 0).to_numpy()
    firsts = np.cumsum(lengths) - lengths
    parent_at = parents.to_numpy()
    own = {f.name for f in _fields(elements.type)}
    columns: dict[str, Any] = {}
    for f in schema:
        if f.name == "pos":
            columns[f.name] = pa.array(np.arange(len(parent_at)) - firsts[parent_at], pa.int32())
        elif f.name in ("index", "f"):
            columns[f.name] = pc.take(rows[f.name], parents)
        elif f.name not in own:
            columns[f.name] = pc.take(pc.struct_field(value, f.name), parents)
        elif f.name in inherit:
            columns[f.name] = pc.coalesce(pc.struct_field(elements, f.name),
                                          pc.take(pc.struct_field(value, f.name), parents))
        else:
            columns[f.name] = pc.struct_field(elements, f.name)
    return pa.table(columns, schema=schema)


_WITH_LINE = pa.schema([pa.field("line", pa.int64()), *OP, pa.field("mistyped", pa.string()),
                        pa.field("mops", MOP_LIST)])
_OWN = {"line", "index", "time", "process", "type", "f"}
_SOLID = np.ones(256, dtype=bool)
_SOLID[list(b" \t\r\n")] = False
