"""A consumer group's rows (checkers.ingest.schema.GROUP), from format-1 ops (checkers.ingest.lines)
and from txn micro-ops (checkers.ingest.txn_lines) alike: the rebalances a poll saw and the
offsets a commit named, one row per partition, under the op's (or txn's) index and type."""
from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from checkers.ingest.schema import GROUP
from checkers.ingest.txn_schema import COMMIT, POLL

# (the f or micro-op, its list field, the element field naming the row's f (None: the f
# itself), the element field that is the row's offset). A format-1 op and a micro-op of the
# same kind share their name (docs/history-format.md), so one name serves both.
SOURCES = ((POLL, "rebalances", "event", "position"), (COMMIT, "offsets", None, "offset"))


def rows(index: Any, type_: Any, consumer: Any, lists: pa.Array, f: str, kind: str | None,
         offset: str) -> pa.Table | None:
    """GROUP rows of the elements of `lists` (one list per op, null where it has none), each
    under its op's index, type and consumer; None when there is no element."""
    at = pc.list_parent_indices(lists)
    if len(at) == 0:
        return None
    elements = pc.list_flatten(lists)
    return pa.table({
        "index": pc.take(index, at), "type": pc.take(type_, at),
        "f": pc.struct_field(elements, kind) if kind else pa.repeat(pa.scalar(f), len(elements)),
        "consumer": pc.take(consumer, at),
        "topic": pc.struct_field(elements, "topic"), "partition": pc.struct_field(elements, "partition"),
        "offset": pc.struct_field(elements, offset)}, schema=GROUP)


def joined(parts: list[pa.Table | None]) -> pa.Table:
    found = [p for p in parts if p is not None]
    return pa.concat_tables(found) if found else GROUP.empty_table()
