"""Synthetic run directories for report tests: a clean run, one with every anomaly type, an empty one."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ALL_ANOMALIES = (
    "lost-write", "inconsistent-offsets", "duplicate", "realtime-order", "nonmonotonic-poll",
    "poll-skip", "nonmonotonic-send", "aborted-read", "unseen",
    "block-fork", "broken-chain", "lost-tx", "duplicate-tx", "lagging-osn",
)

RUN_JSON = {
    "scenario": {"name": "partition-halves", "duration_s": 60, "nemesis": ["partition", "kill"]},
    "variant": {
        "name": "unclean-election",
        "cluster": {"brokers": 4, "zookeepers": 3, "osns": 3},
        "kafka": {"replication.factor": 3, "min.insync.replicas": 2, "unclean.leader.election.enable": True},
        "producer": {"acks": "all", "enable_idempotence": False},
        "expect": {"partition-halves": "invalid-possible", "kill-broker": "invalid-possible"},
    },
    "seed": 42,
    "started": "2026-11-21T19:00:00Z",
    "orderer": {"implementation": "fabric-1.4.12", "version": "1.4.12"},
}


@dataclass
class HistoryBuilder:
    """Appends ops in docs/history-format.md's format 1, advancing time as it goes."""

    ops: list[dict[str, Any]] = field(default_factory=list)
    time_ns: int = 0

    def op(self, process: Any, type_: str, f: str, value: Any, **extra: Any) -> int:
        self.time_ns += 1_000_000
        op = {"index": len(self.ops), "time": self.time_ns, "process": process, "type": type_, "f": f, "value": value}
        op.update(extra)
        self.ops.append(op)
        return op["index"]

    def call(self, process: Any, f: str, value: dict, outcome: str = "ok", result: dict | None = None,
             error: str | None = None, latency_ms: int = 5) -> tuple[int, int]:
        i = self.op(process, "invoke", f, value)
        self.time_ns += latency_ms * 1_000_000
        extra = {"error": error} if error else {}
        c = self.op(process, outcome, f, result if result is not None else value, **extra)
        return i, c

    def nemesis(self, f: str, value: dict) -> int:
        return self.op("nemesis", "info", f, value)

    def sleep(self, seconds: float) -> None:
        self.time_ns += int(seconds * 1e9)


def write_run(path: Path, ops: list[dict] | None, run: dict | None = RUN_JSON, results: dict | None = None) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    if ops is not None:
        with open(path / "history.jsonl", "w") as fh:
            for op in ops:
                fh.write(json.dumps(op) + "\n")
    if run is not None:
        (path / "run.json").write_text(json.dumps(run))
    if results is not None:
        (path / "results.json").write_text(json.dumps(results))
    return path


def _hash(osn: str, number: int, faulty: bool) -> str:
    """Every OSN agrees on every block, except osn2 at blocks 3 and 4 in a faulty run."""
    forked = faulty and osn == "osn2" and number in (3, 4)
    return ("ff" if forked else "aa") + f"{number:062x}"


def _workload(h: HistoryBuilder, sends: int = 40, faulty: bool = False) -> dict[str, list[int]]:
    """Sends, polls, broadcasts and delivers across a partition and a kill; returns indices by role."""
    marks: dict[str, list[int]] = {"send": [], "poll": [], "fail_send": [], "broadcast": [], "deliver": []}
    h.call("c1", "assign", {"consumer": "c1", "partitions": [["t0", 0], ["t0", 1]], "seek": "beginning"})
    offsets = {0: 0, 1: 0}
    acked: dict[int, list[int]] = {0: [], 1: []}
    for n in range(sends):
        if n == sends // 3:
            h.nemesis("partition", {"components": [["kafka1", "zk1"], ["kafka2", "kafka3", "kafka4", "zk2", "zk3"]]})
        if n == sends // 2:
            h.nemesis("kill", {"nodes": ["osn2"]})
        if n == 2 * sends // 3:
            h.nemesis("heal", {})
            h.nemesis("start", {"nodes": ["osn2"]})
        p = n % 2
        proc = n % 4
        if faulty and n == 5:
            i, c = h.call(proc, "send", {"topic": "t0", "key": "k", "value": n}, outcome="fail", error="not-enough-replicas")
            marks["fail_send"] += [i, c]
            continue
        i, c = h.call(proc, "send", {"topic": "t0", "key": "k", "value": n},
                      result={"topic": "t0", "key": "k", "value": n, "partition": p, "offset": offsets[p]},
                      latency_ms=5 + (n % 7) * 3)
        offsets[p] += 1
        acked[p].append(n)
        marks["send"] += [i, c]
        if n % 5 == 4:
            recs = [{"topic": "t0", "partition": p, "offset": offsets[p] - 1, "value": n}]
            if faulty and n == 9:
                recs.append({"topic": "t0", "partition": 1, "offset": 2, "value": 5})  # the failed send, read
            i, c = h.call("c1", "poll", {"consumer": "c1"}, result={"consumer": "c1", "records": recs})
            marks["poll"] += [i, c]
        if n % 8 == 0:
            for k, osn in enumerate(("osn1", "osn2", "osn3")):
                upto = n // 8 + (0 if k == 0 else -(k % 2))
                blocks = [{"number": num, "hash": _hash(osn, num, faulty), "txs": []}
                          for num in range(max(0, upto - 1), upto + 1)]
                h.call(6 + k, "deliver", {"channel": "ch0", "osn": osn, "from": 0},
                       result={"channel": "ch0", "osn": osn, "blocks": blocks})
        if n % 4 == 0:
            osn = f"osn{1 + n % 3}"
            i, c = h.call(4, "broadcast", {"channel": "ch0", "osn": osn, "tx": f"tx-{n}"},
                          result={"channel": "ch0", "osn": osn, "tx": f"tx-{n}", "status": "SUCCESS"})
            marks["broadcast"] += [i, c]
        h.sleep(0.2)
    for p in (0, 1):
        recs = [{"topic": "t0", "partition": p, "offset": o, "value": v} for o, v in enumerate(acked[p])]
        if faulty and p == 0:
            recs = recs[1:]  # offset 0 lost
        h.call(5, "final-read", {"topic": "t0", "partition": p},
               result={"topic": "t0", "partition": p, "records": recs, "high_watermark": offsets[p]})
    for k, osn in enumerate(("osn1", "osn2", "osn3")):
        blocks = []
        for num in range(sends // 8 + 1 if not (faulty and osn == "osn3") else 3):
            blocks.append({"number": num, "hash": _hash(osn, num, faulty),
                           "previous_hash": "00" * 32, "data_hash": "11" * 32, "txs": [f"tx-{num * 4}"],
                           "last_offset": num * 3})
        i, c = h.call(6 + k, "deliver", {"channel": "ch0", "osn": osn, "from": 0},
                      result={"channel": "ch0", "osn": osn, "blocks": blocks})
        marks["deliver"] += [i, c]
    return marks


def clean_run(path: Path) -> Path:
    h = HistoryBuilder()
    _workload(h)
    results = {"valid": True, "variant": "fabric-recommended", "scenario": "partition-halves",
               "checkers": {"kafka": {"valid": True}, "ordering": {"valid": True}}, "anomalies": {}, "stats": {}}
    run = json.loads(json.dumps(RUN_JSON))
    run["variant"]["name"] = "fabric-recommended"
    run["variant"]["expect"] = {"partition-halves": "valid"}
    run["variant"]["kafka"]["unclean.leader.election.enable"] = False
    return write_run(path, h.ops, run, results)


def anomalous_run(path: Path) -> Path:
    """Every anomaly type of docs/anomalies.md, each with examples and evidence that point at real ops."""
    h = HistoryBuilder()
    m = _workload(h, faulty=True)
    s, pl, b, d = m["send"], m["poll"], m["broadcast"], m["deliver"]
    ex_p = {"topic": "t0", "partition": 0}
    anomalies = {
        "lost-write": {"count": 1, "examples": [ex_p | {"offset": 0, "value": 0, "process": 0}], "evidence": s[:2]},
        "inconsistent-offsets": {"count": 2, "examples": [ex_p | {"offset": 1, "values": [2, 3]}], "evidence": [s[3], pl[1]]},
        "duplicate": {"count": 1, "examples": [ex_p | {"value": 4, "offsets": [2, 3]}], "evidence": [s[5]]},
        "realtime-order": {"count": 1, "examples": [ex_p | {"offset_a": 4, "offset_b": 3}], "evidence": [s[7], s[9]]},
        "nonmonotonic-poll": {"count": 1, "examples": [{"consumer": "c1", "topic": "t0", "partition": 1, "offset": 2}], "evidence": pl[:2]},
        "poll-skip": {"count": 1, "examples": [{"consumer": "c1", "topic": "t0", "partition": 1, "from": 1, "to": 4}], "evidence": pl[2:4]},
        "nonmonotonic-send": {"count": 1, "examples": [{"process": 1, "topic": "t0", "partition": 1, "offset": 2}], "evidence": [s[11]]},
        "aborted-read": {"count": 1, "examples": [{"topic": "t0", "partition": 1, "offset": 2, "value": 5}], "evidence": m["fail_send"] + pl[2:4]},
        "unseen": {"count": 3, "examples": [ex_p | {"offset": 5, "value": 10}], "evidence": [s[13]]},
        "block-fork": {"count": 2, "examples": [{"channel": "ch0", "number": 3, "osn": "osn2"}], "evidence": d[2:4]},
        "broken-chain": {"count": 1, "examples": [{"channel": "ch0", "number": 4, "osn": "osn2"}], "evidence": [d[3]]},
        "lost-tx": {"count": 1, "examples": [{"channel": "ch0", "tx": "tx-8"}], "evidence": b[4:6]},
        "duplicate-tx": {"count": 1, "examples": [{"channel": "ch0", "tx": "tx-4", "numbers": [1, 2]}], "evidence": [d[1]]},
        "lagging-osn": {"count": 1, "examples": [{"channel": "ch0", "osn": "osn3", "height": 3, "expected": 5}], "evidence": [d[5]]},
    }
    assert set(anomalies) == set(ALL_ANOMALIES)
    results = {"valid": False, "variant": "unclean-election", "scenario": "partition-halves",
               "checkers": {"kafka": {"valid": False}, "ordering": {"valid": False}}, "anomalies": anomalies,
               "stats": {"ops": len(h.ops)}}
    return write_run(path, h.ops, RUN_JSON, results)


def empty_run(path: Path) -> Path:
    """A history file with no ops and no run.json or results.json: a run that died at once."""
    return write_run(path, [], run=None, results=None)


def large_run(path: Path, sends: int = 3000) -> Path:
    """More ops than the timeline shows, with evidence near the end."""
    h = HistoryBuilder()
    m = _workload(h, sends=sends)
    last = m["send"][-2:]
    results = {"valid": False, "checkers": {"kafka": {"valid": False}},
               "anomalies": {"lost-write": {"count": 1, "examples": [{"topic": "t0", "partition": 1, "offset": 3}],
                                            "evidence": last}}}
    return write_run(path, h.ops, RUN_JSON, results)
