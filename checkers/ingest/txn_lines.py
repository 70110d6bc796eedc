"""Reading format 2's txn lines (checkers.ingest.txn_schema) into flat tables, beside checkers.ingest.lines.

checkers.ingest.lines sets a chunk's txn lines aside (like nemesis lines) and reads them here:
their micro-ops' heads rewritten (`["send",` -> `[{"mf": "send"},`), all at once by Arrow;
when Arrow refuses them (a torn line, a field of another type, an unknown micro-op), one by
one by the json module (ingest's path, with `mop_pairs` and `mop_misfit`). The rewrite only
touches a `[` that opens a list whose first element is the string "send" or "poll": inside a
JSON string the quotes would be escaped, so text is never changed.
"""
from __future__ import annotations

import io
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj

from checkers.ingest import group_lines
from checkers.ingest.schema import GROUP, RECORDS
from checkers.ingest.txn_schema import MICRO_OPS, MOP, MOPS, POLL, READ_MOP_FIELDS, TXN, TXN_OP

MARK = b'"' + TXN.encode() + b'"'
_HEAD = re.compile(rb'\[\s*"(' + b"|".join(m.encode() for m in MICRO_OPS) + rb')"\s*,')
_BLOCK_BYTES = 4 * 2**20


def rewrite(text: bytes) -> bytes:
    """Each micro-op's head as a map Arrow can read beside the micro-op's own."""
    return _HEAD.sub(rb'[{"mf": "\1"},', text)


def arrow_read(text: bytes, lines: int, longest: int) -> pa.Table | None:
    """`lines` txn lines (joined by newlines) as TXN_OP rows, or None when Arrow refuses them."""
    options = pj.ReadOptions(use_threads=True, block_size=max(_BLOCK_BYTES, longest + 2))
    try:
        table = pj.read_json(io.BytesIO(rewrite(text)), read_options=options,
                             parse_options=pj.ParseOptions(explicit_schema=TXN_OP,
                                                           unexpected_field_behavior="ignore"))
    except pa.ArrowInvalid:
        return None
    return table if table.num_rows == lines else None


def mop_pairs(value: Any) -> list[list[dict[str, Any]]] | None:
    """A txn's value as parsed JSON -> the rewritten shape (a list of [{"mf": name}, map]), for
    the json-module path; anything not shaped as micro-ops is None (mop_misfit says why)."""
    if not isinstance(value, list):
        return None
    out: list[list[dict[str, Any]]] = []
    for mop in value:
        if not isinstance(mop, list) or not mop or not isinstance(mop[0], str):
            out.append(None)  # type: ignore[arg-type]
            continue
        body = mop[1] if len(mop) > 1 and isinstance(mop[1], dict) else {}
        out.append([{"mf": mop[0]}, body])
    return out


def mop_misfit(value: Any, misfit: Callable[[Any, pa.DataType, str], str | None]) -> str | None:
    """Why a txn's value cannot be read (not a list of micro-ops, an unknown micro-op, a field
    the checks read of another JSON type), or None. `misfit` is ingest's check of one field."""
    if value is None:
        return None
    if not isinstance(value, list):
        return "value is not a list of micro-ops"
    for i, mop in enumerate(value):
        if not isinstance(mop, list) or not mop or mop[0] not in MICRO_OPS:
            return f"value[{i}] is not a micro-op ([\"send\", {{...}}], [\"poll\", {{...}}] or [\"commit\", {{...}}])"
        if len(mop) > 1 and mop[1] is not None and not isinstance(mop[1], dict):
            return f"value[{i}][1] is not an object"
        body = mop[1] if len(mop) > 1 and isinstance(mop[1], dict) else {}
        for name in READ_MOP_FIELDS[mop[0]]:
            why = misfit(body.get(name), MOP.field(name).type, f"value[{i}].{name}")
            if why:
                return why
    return None


def _nth(pairs: pa.Array, n: int) -> pa.Array:
    """The n-th element of each pair (list<MOP>), null where the pair is shorter."""
    offsets = pairs.offsets.to_numpy()
    lengths = offsets[1:] - offsets[:-1]
    valid = pairs.is_valid().to_numpy(zero_copy_only=False) & (lengths > n)
    take = pa.array(offsets[:-1] + n, pa.int64(), mask=~valid)
    return pc.take(pairs.values, take)


def flatten_txns(rows: pa.Table) -> tuple[pa.Table, pa.Table, pa.Table]:
    """(MOPS, RECORDS, GROUP) of the txn completions among `rows` (index, process, type, f and
    `mops`, the rewritten micro-op lists): one row per micro-op, one per record of a poll
    micro-op, and one per partition a poll saw rebalanced or a commit micro-op committed."""
    rows = rows.filter(pc.and_(pc.equal(rows["f"], TXN), pc.not_equal(rows["type"], "invoke")))
    rows = rows.filter(pc.is_valid(rows["mops"])).combine_chunks() if rows.num_rows else rows
    if rows.num_rows == 0:
        return MOPS.empty_table(), RECORDS.empty_table(), GROUP.empty_table()
    outer = rows["mops"].combine_chunks()
    txn_of = pc.list_parent_indices(outer).to_numpy()
    pairs = pc.list_flatten(outer)
    lengths = pc.fill_null(pc.list_value_length(outer), 0).to_numpy()
    firsts = np.cumsum(lengths) - lengths
    pos = np.arange(len(txn_of)) - firsts[txn_of]
    head, body = _nth(pairs, 0), _nth(pairs, 1)
    at = pa.array(txn_of)
    columns: dict[str, Any] = {name: pc.take(rows[name], at) for name in ("index", "process", "type")}
    columns["pos"] = pa.array(pos, pa.int32())
    columns["mf"] = pc.struct_field(head, "mf")
    for f in MOPS:
        if f.name not in columns:
            columns[f.name] = pc.struct_field(body, f.name)
    mops = pa.table(columns, schema=MOPS)
    group = _group_rows(columns, body)

    is_poll = pc.fill_null(pc.equal(columns["mf"], POLL), False)
    lists = pc.if_else(is_poll, pc.struct_field(body, "records"), pa.nulls(len(body), MOP.field("records").type))
    mop_of = pc.list_parent_indices(lists).to_numpy()
    elements = pc.list_flatten(lists)
    if len(elements) == 0:
        return mops, RECORDS.empty_table(), group
    txn_of_record = txn_of[mop_of]
    # Records of one txn are contiguous: count them from the txn's first.
    starts = np.flatnonzero(np.diff(txn_of_record, prepend=-1) != 0)
    first = np.repeat(starts, np.diff(np.append(starts, len(txn_of_record))))
    by_mop = pa.array(mop_of)
    records = {
        "index": pc.take(columns["index"], by_mop), "f": pa.repeat(pa.scalar(POLL), len(elements)),
        "consumer": pc.take(columns["consumer"], by_mop),
        "pos": pa.array(np.arange(len(elements)) - first, pa.int32()),
        "topic": pc.struct_field(elements, "topic"), "partition": pc.struct_field(elements, "partition"),
        "offset": pc.struct_field(elements, "offset"), "value": pc.struct_field(elements, "value"),
        "isolation": pc.take(columns["isolation"], by_mop),
    }
    return mops, pa.table(records, schema=RECORDS), group


def _group_rows(columns: dict[str, Any], body: pa.Array) -> pa.Table:
    """GROUP rows of the micro-ops (`columns` as MOPS has them, `body` their maps): the
    rebalances of poll micro-ops and the offsets of commit micro-ops, under the txn's index
    and type (a commit micro-op's offsets are committed as its txn is)."""
    parts = []
    for mf, name, kind, offset in group_lines.SOURCES:
        mine = pc.fill_null(pc.equal(columns["mf"], mf), False)
        if pc.any(mine).as_py():
            lists = pc.if_else(mine, pc.struct_field(body, name), pa.nulls(len(body), MOP.field(name).type))
            parts.append(group_lines.rows(columns["index"], columns["type"], columns["consumer"], lists, mf, kind,
                                          offset))
    return group_lines.joined(parts)
