"""Large synthetic histories in format versions 1 and 2, streamed to a file from a seed
(holding only per-partition logs in memory): what the checker JVM's class archive is trained
on (checkers/archive_training.py) and what bench/checks.py times. Blocks are hashed as
Fabric v1.x hashes them (common/block.go), so a checker accepts them. Small hand-made
histories for tests are built with tests/histories.py.
"""
from __future__ import annotations

import hashlib
import json
import random
from array import array
from pathlib import Path
from typing import Any

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
