"""Each completion beside its invoke, as the chunks of a history stream by.

A history lists its ops in index order (Jepsen's model: the index is the op's place),
so a process's previous op is its previous line: pairing needs only, per process, the
last op seen, carried from chunk to chunk, never a sort of the whole history.

Rules (BadLine naming the line): an index not above the previous line's; a completion
whose process's previous op is not its invoke, or whose `f` differs from it; a second
invoke before the first one completed. An invoke left without a completion at the end
is indeterminate, like `info`.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from checkers.ingest.lines import BadLine
from checkers.ingest.schema import NEMESIS, OPS
from checkers.ingest.txn_schema import TXN, TXNS

# What a completion takes from its process's previous op.
_CARRIED = ("type", "f", "index", "time", "topic", "value")
SENDS = pa.schema([OPS.field(c) for c in ("process", "index", "time", "type", "topic", "partition", "offset",
                                           "value")]
                  + [pa.field("invoke_index", pa.int64()), pa.field("invoke_time", pa.int64())])
SEND_COLUMNS = tuple(SENDS.names)
# The op columns pairing reads: ordering, matching, and what SENDS keeps.
_USED = ["line", "f", *(c for c in SEND_COLUMNS if c not in ("invoke_index", "invoke_time"))]


class Pairing:
    """Feed it the ops tables of a history's chunks in order; it returns each chunk's paired sends
    (and, with `pair`, its paired txn completions: format 2)."""

    def __init__(self) -> None:
        self._last: dict[str, tuple] = {}  # process -> its last op's _CARRIED fields
        self._last_index: int | None = None
        self._last_line = 0

    def sends(self, ops: pa.Table) -> pa.Table:
        """The send completions of `ops` (SENDS): topic and value taken from the invoke when the
        completion omits them, invoke_index and invoke_time from the invoke."""
        return self.pair(ops)[0]

    def pair(self, ops: pa.Table) -> tuple[pa.Table, pa.Table]:
        """(SENDS, TXNS) of `ops`: the send completions as `sends` gives them, and the txn
        completions with their invoke's index and time."""
        self._check_order(ops)
        rows = ops.select(_USED)
        nemesis = pc.equal(ops["process"], NEMESIS)
        if pc.any(nemesis).as_py():  # most chunks have no nemesis op: their rows are not copied
            rows = rows.filter(pc.invert(nemesis))
        rows = rows.combine_chunks()
        n = rows.num_rows
        if n == 0:
            return SENDS.empty_table(), TXNS.empty_table()
        # Each row's process's previous row in this chunk (none for its first), found by a
        # stable sort of the processes' codes: the rows stay in line order, and no text is
        # compared (sorting the rows by process and line cost a 10M-op convert some 2 CPU s).
        process = rows["process"].combine_chunks()
        codes = pc.dictionary_encode(process).indices.to_numpy()
        order = np.argsort(codes, kind="stable")
        ends = np.flatnonzero(np.diff(codes[order]) != 0)
        first = np.zeros(n, dtype=bool)  # the first row of a process in this chunk
        first[order[np.concatenate(([0], ends + 1))]] = True
        previous = np.empty(n, dtype=np.int64)
        previous[order[1:]] = order[:-1]
        starts = np.flatnonzero(first)
        carried = [self._last.get(p) for p in process.take(pa.array(starts)).to_pylist()]
        before = pa.array(previous, mask=first)
        prev = {name: self._previous(rows[name].combine_chunks(), before, first, [c[i] if c else None for c in carried])
                for i, name in enumerate(_CARRIED)}
        self._reject_unpaired(rows, prev)
        last = pa.array(order[np.append(ends, n - 1)])
        tail = rows.take(last).select(list(_CARRIED))
        for p, *fields in zip(process.take(last).to_pylist(), *(tail[c].to_pylist() for c in _CARRIED)):
            self._last[p] = tuple(fields)
        is_send = pc.and_(pc.equal(rows["f"], "send"), pc.not_equal(rows["type"], "invoke"))
        sends = {
            "process": rows["process"], "index": rows["index"], "time": rows["time"], "type": rows["type"],
            "topic": pc.coalesce(rows["topic"], prev["topic"]), "partition": rows["partition"],
            "offset": rows["offset"], "value": pc.coalesce(rows["value"], prev["value"]),
            "invoke_index": prev["index"], "invoke_time": prev["time"],
        }
        is_txn = pc.and_(pc.equal(rows["f"], TXN), pc.not_equal(rows["type"], "invoke"))
        txns = {"process": rows["process"], "index": rows["index"], "time": rows["time"], "type": rows["type"],
                "invoke_index": prev["index"], "invoke_time": prev["time"]}
        return pa.table(sends, schema=SENDS).filter(is_send), pa.table(txns, schema=TXNS).filter(is_txn)

    def _check_order(self, ops: pa.Table) -> None:
        if ops.num_rows == 0:
            return
        index = ops["index"].to_numpy()
        previous = np.concatenate(([self._last_index if self._last_index is not None else index[0] - 1],
                                   index[:-1]))
        behind = np.flatnonzero(index <= previous)
        if len(behind):
            at = int(behind[0])
            raise BadLine(int(ops["line"][at].as_py()),
                          f"index {index[at]} is not above the previous op's {previous[at]}: "
                          "a history lists its ops in index order")
        self._last_index = int(index[-1])

    @staticmethod
    def _previous(column: pa.Array, before: pa.Array, first: np.ndarray, carried: list) -> pa.Array:
        """`column` at each row's process's previous row (`before`); a process's first row in the
        chunk (`first`, null in `before`) takes its carried value."""
        return pc.replace_with_mask(column.take(before), pa.array(first), pa.array(carried, column.type))

    @staticmethod
    def _reject_unpaired(rows: pa.Table, prev: dict[str, pa.Array]) -> None:
        completion = pc.not_equal(rows["type"], "invoke")
        after_invoke = pc.fill_null(pc.equal(prev["type"], "invoke"), False)
        orphan = pc.and_(completion, pc.invert(after_invoke))
        mismatch = pc.and_(pc.and_(completion, after_invoke), pc.fill_null(pc.not_equal(rows["f"], prev["f"]), True))
        doubled = pc.and_(pc.invert(completion), after_invoke)
        bad = pc.or_(pc.or_(orphan, mismatch), doubled)
        if not pc.any(bad).as_py():
            return
        lines = pc.filter(rows["line"], bad)
        at = pc.index(rows["line"], pc.min(lines)).as_py()
        row = {k: v[0] for k, v in rows.slice(at, 1).select(["line", "process", "type", "f"]).to_pydict().items()}
        if orphan[at].as_py():
            reason = f"a {row['type']} completion of process {row['process']} without its invoke"
        elif mismatch[at].as_py():
            reason = f"completion f {row['f']} does not match its invoke f {prev['f'][at].as_py()}"
        else:
            reason = f"a second invoke of process {row['process']} before the first completed"
        raise BadLine(row["line"], reason)
