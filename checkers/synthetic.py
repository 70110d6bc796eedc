"""Synthetic histories in format versions 1 and 2, for the checkers' tests and benchmark.

`HistoryBuilder` writes small hand-made histories op by op; `make_chain` builds
correctly hashed blocks; `generate_history` streams a large valid history to a file
with a seed, holding only per-partition logs in memory.
"""
from __future__ import annotations

import hashlib
import json
import random
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Record = tuple[str, int, int, int]  # topic, partition, offset, value


# -- block hashing (Fabric v1.x common/block.go), to build blocks a checker accepts --

def _der(tag: int, content: bytes) -> bytes:
    n = len(content)
    length = bytes([n]) if n < 0x80 else bytes([0x80 | ((n.bit_length() + 7) // 8)]) + n.to_bytes(
        (n.bit_length() + 7) // 8, "big")
    return bytes([tag]) + length + content


def header_hash(number: int, previous_hash: bytes, data_hash: bytes) -> bytes:
    """SHA-256 of DER SEQUENCE{INTEGER number, OCTET STRING previous_hash, OCTET STRING data_hash}."""
    integer = number.to_bytes(number.bit_length() // 8 + 1, "big")
    body = _der(0x02, integer) + _der(0x04, previous_hash) + _der(0x04, data_hash)
    return hashlib.sha256(_der(0x30, body)).digest()


def envelope(tx: str) -> bytes:
    """Stand-in marshalled envelope of a tx: what the data hash is computed over."""
    return b"\x0a\x10envelope:" + tx.encode()


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


# -- large histories for the benchmark --

class _Lines:
    """A large history's lines written straight to its file as they come, indexed in order
    (too many to hold as op dicts); `close` returns how many."""

    def __init__(self, path: Path):
        self.out = path.open("w", buffering=1 << 20)
        self.index = 0

    def emit(self, process: Any, type_: str, f: str, value: str, extra: str = "") -> None:
        p = json.dumps(process) if isinstance(process, str) else process
        self.out.write(f'{{"index": {self.index}, "time": {self.index * 1000}, "process": {p}, "type": "{type_}", '
                       f'"f": "{f}", "value": {value}{extra}}}\n')
        self.index += 1

    def close(self) -> int:
        self.out.close()
        return self.index


def generate_history(path: Path, n_ops: int, *, seed: int = 1, topics: int = 8, partitions: int = 4,
                     channels: int = 4, osns: int = 3, consumers: int = 4, block_size: int = 10) -> int:
    """Write a valid history of about `n_ops` lines (Kafka log plus ordering); returns the count.

    Each client op is an invoke and its completion; the run ends with a heal, a final
    read of every partition and a final deliver of every channel from every OSN.
    """
    rng = random.Random(seed)
    tps = [(f"t{t}", p) for t in range(topics) for p in range(partitions)]
    logs = {tp: array("q") for tp in tps}
    next_value = dict.fromkeys((t for t, _ in tps), 0)
    positions = {c: dict.fromkeys(tps, 0) for c in range(consumers)}
    chains: dict[str, list[str]] = {f"ch{c}": [] for c in range(channels)}  # rendered blocks
    last_hash = {ch: b"" for ch in chains}
    pending: dict[str, list[str]] = {ch: [] for ch in chains}
    tx_count = 0
    lines = _Lines(path)
    emit = lines.emit

    def cut(ch: str) -> None:
        txs = pending[ch]
        number = len(chains[ch])
        d_hash = hashlib.sha256(b"".join(envelope(tx) for tx in txs)).digest()
        h = header_hash(number, last_hash[ch], d_hash)
        chains[ch].append(
            f'{{"number": {number}, "hash": "{h.hex()}", "previous_hash": "{last_hash[ch].hex()}", '
            f'"data_hash": "{d_hash.hex()}", "txs": {json.dumps(txs)}, "last_offset": {number * block_size}}}')
        last_hash[ch] = h
        pending[ch] = []

    for c in range(consumers):
        v = json.dumps({"consumer": f"c{c}", "partitions": [list(tp) for tp in tps], "seek": "beginning"})
        emit(1000 + c, "invoke", "assign", v)
        emit(1000 + c, "ok", "assign", v)
    n_final = len(tps) + len(chains) * osns
    send_processes = 16
    while lines.index < n_ops - 2 * n_final - 1:
        roll = rng.random()
        if roll < 0.45:
            tp = tps[rng.randrange(len(tps))]
            topic, part = tp
            value = next_value[topic]
            next_value[topic] = value + 1
            offset = len(logs[tp])
            logs[tp].append(value)
            process = rng.randrange(send_processes)
            inv = f'{{"topic": "{topic}", "key": "k{value}", "value": {value}'
            emit(process, "invoke", "send", inv + "}")
            emit(process, "ok", "send", inv + f', "partition": {part}, "offset": {offset}}}')
        elif roll < 0.65:
            c = rng.randrange(consumers)
            tp = tps[rng.randrange(len(tps))]
            pos = positions[c][tp]
            end = min(len(logs[tp]), pos + 10)
            positions[c][tp] = end
            recs = ", ".join(f'{{"topic": "{tp[0]}", "partition": {tp[1]}, "offset": {o}, '
                             f'"value": {logs[tp][o]}}}' for o in range(pos, end))
            emit(1000 + c, "invoke", "poll", f'{{"consumer": "c{c}"}}')
            emit(1000 + c, "ok", "poll", f'{{"consumer": "c{c}", "records": [{recs}]}}')
        elif roll < 0.95:
            ch = f"ch{rng.randrange(channels)}"
            osn = f"osn{rng.randrange(osns)}"
            tx = f"tx-{tx_count}"
            tx_count += 1
            pending[ch].append(tx)
            if len(pending[ch]) >= block_size:
                cut(ch)
            process = 2000 + rng.randrange(8)
            inv = f'{{"channel": "{ch}", "osn": "{osn}", "tx": "{tx}"'
            emit(process, "invoke", "broadcast", inv + "}")
            emit(process, "ok", "broadcast", inv + ', "status": "SUCCESS"}')
        else:
            ch = f"ch{rng.randrange(channels)}"
            osn = f"osn{rng.randrange(osns)}"
            start = max(0, len(chains[ch]) - 2)
            inv = f'{{"channel": "{ch}", "osn": "{osn}", "from": {start}'
            emit(3000, "invoke", "deliver", inv + "}")
            emit(3000, "ok", "deliver", inv + f', "blocks": [{", ".join(chains[ch][start:])}]}}')
    for ch in chains:
        if pending[ch]:
            cut(ch)
    emit("nemesis", "info", "heal", '{"healed": "all"}')
    for topic, part in tps:
        log = logs[(topic, part)]
        recs = ", ".join(f'{{"topic": "{topic}", "partition": {part}, "offset": {o}, "value": {v}}}'
                         for o, v in enumerate(log))
        inv = f'{{"topic": "{topic}", "partition": {part}'
        emit(4000, "invoke", "final-read", inv + "}")
        emit(4000, "ok", "final-read", inv + f', "records": [{recs}], "high_watermark": {len(log)}}}')
    for ch, blocks in chains.items():
        for o in range(osns):
            inv = f'{{"channel": "{ch}", "osn": "osn{o}", "from": 0'
            emit(4001, "invoke", "deliver", inv + "}")
            emit(4001, "ok", "deliver", inv + f', "blocks": [{", ".join(blocks)}]}}')
    return lines.close()


def generate_txn_history(path: Path, n_ops: int, *, seed: int = 1, topics: int = 8, partitions: int = 4,
                         consumers: int = 4, max_micro_ops: int = 4, abort_rate: float = 0.1,
                         poll_records: int = 5) -> int:
    """Write a valid format-2 history of about `n_ops` lines of kafka-txn's shape; returns the count.

    Txns of 1..max_micro_ops sends and polls run one after another (their invokes and
    completions adjacent: no txn overlaps another); a txn aborts at `abort_rate`, its sends
    then taking offsets that read_committed polls and final reads skip, as do the commit and
    abort markers after each txn's sends on each partition it wrote. The run ends with a heal
    and a final read of every partition.
    """
    rng = random.Random(seed)
    tps = [(f"t{t}", p) for t in range(topics) for p in range(partitions)]
    logs: dict[tuple[str, int], list[int | None]] = {tp: [] for tp in tps}  # value, or None (marker, aborted)
    next_value = dict.fromkeys((t for t, _ in tps), 0)
    positions = {c: dict.fromkeys(tps, 0) for c in range(consumers)}
    lines = _Lines(path)
    emit = lines.emit

    for c in range(consumers):
        v = json.dumps({"consumer": f"c{c}", "partitions": [list(tp) for tp in tps], "seek": "beginning"})
        emit(1000 + c, "invoke", "assign", v)
        emit(1000 + c, "ok", "assign", v)
    while lines.index < n_ops - 2 * len(tps) - 1:
        process = rng.randrange(16)
        c = process % consumers
        abort = rng.random() < abort_rate
        asked, done, written = [], [], set()
        for _ in range(rng.randint(1, max_micro_ops)):
            if rng.random() < 0.5:
                tp = tps[rng.randrange(len(tps))]
                topic, part = tp
                value = next_value[topic]
                next_value[topic] = value + 1
                offset = len(logs[tp])
                logs[tp].append(None if abort else value)
                written.add(tp)
                send = f'"topic": "{topic}", "key": "k{part}", "value": {value}, "partition": {part}'
                asked.append(f'["send", {{{send}}}]')
                done.append(f'["send", {{{send}, "offset": {offset}}}]')
            else:
                tp = tps[rng.randrange(len(tps))]
                log, pos = logs[tp], positions[c][tp]
                recs = []
                while pos < len(log) and len(recs) < poll_records:
                    if log[pos] is not None and tp not in written:  # not its own sends: still open
                        recs.append(f'{{"topic": "{tp[0]}", "partition": {tp[1]}, "offset": {pos}, '
                                    f'"value": {log[pos]}}}')
                    elif tp in written:
                        break
                    pos += 1
                positions[c][tp] = pos
                asked.append(f'["poll", {{"consumer": "c{c}"}}]')
                done.append(f'["poll", {{"consumer": "c{c}", "records": [{", ".join(recs)}]}}]')
        for tp in written:  # the txn's commit or abort marker
            logs[tp].append(None)
        extra = ', "abort": true, "error": "aborted-on-purpose"' if abort else ""
        emit(process, "invoke", "txn", f'[{", ".join(asked)}]', ', "abort": true' if abort else "")
        emit(process, "fail" if abort else "ok", "txn", f'[{", ".join(done)}]', extra)
    emit("nemesis", "info", "heal", '{"healed": "all"}')
    for topic, part in tps:
        recs = ", ".join(f'{{"topic": "{topic}", "partition": {part}, "offset": {o}, "value": {v}}}'
                         for o, v in enumerate(logs[(topic, part)]) if v is not None)
        inv = f'{{"topic": "{topic}", "partition": {part}'
        emit(4000, "invoke", "final-read", inv + "}")
        emit(4000, "ok", "final-read", inv + f', "records": [{recs}], "high_watermark": {len(logs[(topic, part)])}}}')
    return lines.close()
