"""Small hand-made histories for the checkers' tests: `HistoryBuilder` writes ops one by one,
`make_chain` builds correctly hashed blocks (checkers/sample_histories.py hashes them)."""
from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checkers.sample_histories import envelope, header_hash

Record = tuple[str, int, int, int]  # topic, partition, offset, value


def make_chain(batches: Sequence[Sequence[str]], *, with_data: bool = False, first_number: int = 0,
               previous_hash: bytes = b"") -> list[dict[str, Any]]:
    """Blocks holding `batches` of tx ids, hashed and chained as an OSN would cut them."""
    blocks = []
    for i, txs in enumerate(batches):
        data = [envelope(tx) for tx in txs]
        d_hash = hashlib.sha256(b"".join(data)).digest()
        number = first_number + i
        h = header_hash(number, previous_hash, d_hash)
        block: dict[str, Any] = {"number": number, "hash": h.hex(), "previous_hash": previous_hash.hex(),
                                 "data_hash": d_hash.hex(), "txs": list(txs), "last_offset": number}
        if with_data:
            block["data"] = [e.hex() for e in data]
        blocks.append(block)
        previous_hash = h
    return blocks


# -- hand-made histories --

# What a micro-op's invoke holds (format 2); its completion adds the results.
_ASKED = {"send": ("topic", "key", "value", "partition"), "poll": ("consumer", "isolation"), "commit": ("consumer",)}


def send_mop(topic: str, value: int, partition: int = 0, offset: int | None = None) -> tuple[str, dict[str, Any]]:
    """A send micro-op and its result (offset None: not acknowledged)."""
    m: dict[str, Any] = {"topic": topic, "key": f"k{partition}", "value": value, "partition": partition}
    if offset is not None:
        m["offset"] = offset
    return "send", m


def poll_mop(consumer: str, records: Iterable[Record], isolation: str | None = None) -> tuple[str, dict[str, Any]]:
    """A poll micro-op and the records it returned."""
    m: dict[str, Any] = {"consumer": consumer,
                         "records": [{"topic": t, "partition": p, "offset": o, "value": v} for t, p, o, v in records]}
    if isolation is not None:
        m["isolation"] = isolation
    return "poll", m


@dataclass
class HistoryBuilder:
    """Appends ops with increasing index and time; each helper records invoke + completion."""

    ops: list[dict[str, Any]] = field(default_factory=list)
    step_ns: int = 1_000

    def op(self, process: int | str, type: str, f: str, value: Any, **extra: Any) -> int:
        index = len(self.ops)
        self.ops.append({"index": index, "time": (index + 1) * self.step_ns, "process": process,
                         "type": type, "f": f, "value": value, **extra})
        return index

    def call(self, process: int, f: str, invoke: Any, result: Any, type: str = "ok",
             error: str | None = None) -> tuple[int, int]:
        """An invoke and its completion; returns both indices."""
        i = self.op(process, "invoke", f, invoke)
        extra = {"error": error} if error else {}
        return i, self.op(process, type, f, result, **extra)

    def send(self, process: int, topic: str, value: int, *, partition: int = 0, offset: int | None = None,
             type: str = "ok", error: str | None = None) -> tuple[int, int]:
        invoke = {"topic": topic, "key": f"k{value}", "value": value}
        result = dict(invoke, partition=partition, offset=offset) if type == "ok" else invoke
        if type != "ok" and error is None:
            error = "not-enough-replicas" if type == "fail" else "timeout"
        return self.call(process, "send", invoke, result, type, error)

    def assign(self, process: int, consumer: str, partitions: Iterable[tuple[str, int]],
               seek: str | None = "beginning") -> tuple[int, int]:
        v = {"consumer": consumer, "partitions": [list(p) for p in partitions], "seek": seek}
        return self.call(process, "assign", v, v)

    def poll(self, process: int, consumer: str, records: Iterable[Record]) -> tuple[int, int]:
        recs = [{"topic": t, "partition": p, "offset": o, "value": v} for t, p, o, v in records]
        return self.call(process, "poll", {"consumer": consumer}, {"consumer": consumer, "records": recs})

    def subscribe(self, process: int, consumer: str, topics: Iterable[str]) -> tuple[int, int]:
        v = {"consumer": consumer, "topics": list(topics)}
        return self.call(process, "subscribe", v, v)

    def group_poll(self, process: int, consumer: str, records: Iterable[Record], *,
                   revoked: Iterable[tuple[str, int]] = (),
                   assigned: Iterable[tuple[str, int, int | None]] = ()) -> tuple[int, int]:
        """A poll in a consumer group that saw `revoked` partitions, then `assigned` ones
        (topic, partition, position), before its records."""
        events = ([{"event": "revoked", "topic": t, "partition": p} for t, p in revoked]
                  + [{"event": "assigned", "topic": t, "partition": p, "position": o} for t, p, o in assigned])
        recs = [{"topic": t, "partition": p, "offset": o, "value": v} for t, p, o, v in records]
        result = {"consumer": consumer, "records": recs, **({"rebalances": events} if events else {})}
        return self.call(process, "poll", {"consumer": consumer}, result)

    def commit(self, process: int, consumer: str, offsets: Iterable[tuple[str, int, int]], *,
               type: str = "ok") -> tuple[int, int]:
        """A commit of (topic, partition, next offset)s."""
        v = {"consumer": consumer, "offsets": [{"topic": t, "partition": p, "offset": o} for t, p, o in offsets]}
        return self.call(process, "commit", {"consumer": consumer}, v, type,
                         None if type == "ok" else "timeout" if type == "info" else "illegal-generation")

    def final_read(self, process: int, topic: str, partition: int,
                   records: Iterable[tuple[int, int]]) -> tuple[int, int]:
        recs = [{"topic": topic, "partition": partition, "offset": o, "value": v} for o, v in records]
        hw = max((r["offset"] for r in recs), default=-1) + 1
        return self.call(process, "final-read", {"topic": topic, "partition": partition},
                         {"topic": topic, "partition": partition, "records": recs, "high_watermark": hw})

    def broadcast(self, process: int, channel: str, osn: str, tx: str, *, type: str = "ok",
                  status: str = "SUCCESS", error: str | None = None) -> tuple[int, int]:
        v = {"channel": channel, "osn": osn, "tx": tx}
        result = dict(v, status=status) if type == "ok" else v
        return self.call(process, "broadcast", v, result, type, error)

    def config_update(self, process: int, channel: str, osn: str, tx: str, *, version: int,
                      max_message_count: int | None = None, batch_timeout_ms: int | None = None, type: str = "ok",
                      status: str = "SUCCESS", error: str | None = None) -> tuple[int, int]:
        """A channel config update setting one batch value (exactly one of max_message_count and
        batch_timeout_ms), writing `version`; its completion as a broadcast's."""
        if (max_message_count is None) == (batch_timeout_ms is None):
            raise ValueError("a config update sets exactly one of max_message_count and batch_timeout_ms")
        setting = ({"max_message_count": max_message_count} if max_message_count is not None
                   else {"batch_timeout_ms": batch_timeout_ms})
        v = {"channel": channel, "osn": osn, "tx": tx, **setting, "version": version}
        result = dict(v, status=status) if type == "ok" else v
        return self.call(process, "config-update", v, result, type, error)

    def deliver(self, process: int, channel: str, osn: str, blocks: list[dict[str, Any]],
                start: int = 0, final: bool = False) -> tuple[int, int]:
        """A deliver; `final` marks its invoke as the harness marks its final delivers."""
        v = {"channel": channel, "osn": osn, "from": start}
        invoke = dict(v, final=True) if final else v
        return self.call(process, "deliver", invoke, dict(v, blocks=blocks))

    def txn(self, process: int, mops: Sequence[tuple[str, dict[str, Any]]], *, type: str = "ok",
            error: str | None = None) -> tuple[int, int]:
        """A txn (format 2) of micro-ops given with their results (`send_mop`, `poll_mop`); its invoke
        holds what was asked of each (a send's topic, key, value and partition, a poll's consumer)."""
        asked = [[f, {k: v for k, v in m.items() if k in _ASKED[f]}] for f, m in mops]
        done = [[f, dict(m)] for f, m in mops]
        if type != "ok" and error is None:
            error = "aborted" if type == "fail" else "timeout"
        return self.call(process, "txn", asked, done, type, error)

    def nemesis(self, f: str, value: Any) -> int:
        return self.op("nemesis", "info", f, value)

    def lines(self) -> list[str]:
        return [json.dumps(op) for op in self.ops]

    def write(self, path: Path) -> Path:
        path.write_text("".join(line + "\n" for line in self.lines()))
        return path
