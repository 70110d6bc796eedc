"""One streaming pass over history.jsonl into everything a report draws, in bounded memory.

Histories can hold millions of ops, so nothing here keeps the whole history: plots get
stride samples, the timeline stops at a cap, and only ops named as evidence are kept whole.
The caps are constants so the page can state them.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from ground.history_file import read_history as _read
from reports.downsample import LogHistogram, StrideSample
from reports.fault_intervals import FaultTracker

LATENCY_POINTS_CAP = 20_000  # per outcome (ok / fail / info)
HEIGHT_POINTS_CAP = 2_000  # per OSN and channel
TIMELINE_CAP = 1_500  # ops shown from the start of the run in the per-process timeline
CONTEXT_CAP = 600  # further ops shown around evidence past that cap
CONTEXT_WINDOW = 12  # history lines either side of an evidence op shown in its context
TIMELINE_LANES = 16  # processes given their own column; the rest share one
EVIDENCE_SHOWN = 40  # evidence ops linked per anomaly type
BLOCKS_CAP = 200_000  # (channel, number, osn) hashes kept for the fork view
OFFSET_PARTITIONS = 6  # partitions given an offset / value view
OFFSET_ROWS = 40  # offsets shown per partition
OFFSET_WINDOW = 2  # neighbouring offsets shown around each offset of interest

WRITES = ("send", "broadcast", "txn")  # a txn (format 2) counts as one write: committed or not
NEMESIS = "nemesis"


@dataclass
class LatencyPoint:
    """One completed client op: when it was invoked (s), how long it took (ms), how it ended."""

    t: float
    ms: float
    f: str
    outcome: str


@dataclass
class TimelineOp:
    """An op as the timeline shows it: its invoke and completion, one row."""

    invoke: int
    completion: int | None
    process: str
    f: str
    outcome: str
    start: float
    end: float | None
    value: str
    error: str
    skipped_before: int = 0  # ops left out between the previous row and this one


@dataclass
class HistoryDigest:
    """What one pass over a history yields; every list is capped (see the module constants)."""

    ops: int = 0
    bad_lines: int = 0
    end_time: float = 0.0
    processes: set[str] = field(default_factory=set)
    nodes_seen: set[str] = field(default_factory=set)
    counts: dict[tuple[str, str], int] = field(default_factory=dict)
    writes_attempted: int = 0
    writes_ok: int = 0
    write_latency: LogHistogram = field(default_factory=LogHistogram)
    latency: dict[str, StrideSample[LatencyPoint]] = field(default_factory=dict)
    throughput: dict[int, dict[str, int]] = field(default_factory=dict)
    faults: FaultTracker = field(default_factory=FaultTracker)
    timeline: list[TimelineOp] = field(default_factory=list)
    timeline_truncated: bool = False
    context_rows: int = 0
    skipped: int = 0
    evidence_ops: dict[int, dict[str, Any]] = field(default_factory=dict)
    evidence_pairs: dict[int, int] = field(default_factory=dict)
    heights: dict[tuple[str, str], StrideSample[tuple[float, int]]] = field(default_factory=dict)
    blocks: dict[tuple[str, int], dict[str, str]] = field(default_factory=dict)
    blocks_truncated: bool = False
    offset_views: dict[tuple[str, int], "OffsetView"] = field(default_factory=dict)

    @property
    def availability(self) -> float | None:
        return self.writes_ok / self.writes_attempted if self.writes_attempted else None

    def write_latency_ms(self, q: float) -> float | None:
        v = self.write_latency.quantile(q)
        return None if v is None else v / 1e6

    @property
    def forks(self) -> list[tuple[str, int, dict[str, str]]]:
        """(channel, number, osn -> hash) where OSNs disagree."""
        return [
            (ch, n, hashes)
            for (ch, n), hashes in sorted(self.blocks.items())
            if len(set(hashes.values())) > 1
        ]


@dataclass
class OffsetView:
    """What each reader saw at each offset of one partition, around the offsets of interest."""

    topic: str
    partition: int
    focus: set[int] = field(default_factory=set)
    rows: dict[int, dict[str, dict[Any, int]]] = field(default_factory=dict)
    readers: list[str] = field(default_factory=list)

    def offsets(self) -> list[int]:
        wanted: set[int] = set()
        for o in sorted(self.focus):
            wanted.update(range(max(0, o - OFFSET_WINDOW), o + OFFSET_WINDOW + 1))
            if len(wanted) >= OFFSET_ROWS:
                break
        return sorted(wanted)[:OFFSET_ROWS]

    def see(self, reader: str, offset: int, value: Any, index: int) -> None:
        cell = self.rows.setdefault(offset, {}).setdefault(reader, {})
        cell.setdefault(_hashable(value), index)
        if reader not in self.readers:
            self.readers.append(reader)


def _hashable(v: Any) -> Any:
    return v if isinstance(v, (int, str, float, bool, type(None))) else json.dumps(v, sort_keys=True)


def read_history(path: Path, digest: HistoryDigest | None = None) -> Iterator[dict[str, Any]]:
    """History lines as dicts by the torn-line rule (ground/history_file.py), leniently: a
    report is written for a broken history too, with its unreadable lines counted."""
    def count(number: int, why: str) -> None:
        if digest is not None:
            digest.bad_lines += 1

    return _read(path, lenient=True, skipped=count)


def short(value: Any, limit: int = 90) -> str:
    """A value in one line, cut to a length the timeline can hold."""
    if isinstance(value, dict) and isinstance(value.get("records"), list):
        recs = value["records"]
        value = {k: v for k, v in value.items() if k != "records"} | {"records": f"{len(recs)} records"}
    if isinstance(value, dict) and isinstance(value.get("blocks"), list):
        blocks = value["blocks"]
        value = {k: v for k, v in value.items() if k != "blocks"} | {"blocks": f"{len(blocks)} blocks"}
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _int(x: Any) -> int | None:
    if isinstance(x, bool):
        return None
    if isinstance(x, int):
        return x
    if isinstance(x, float) and x.is_integer():
        return int(x)
    return None


def _time(x: Any) -> int:
    """An op's time in ns; a missing or malformed time counts as the run's start."""
    if isinstance(x, (int, float)) and not isinstance(x, bool) and x == x and abs(x) < 1e19:
        return max(0, int(x))
    return 0


def _records(op: dict[str, Any]) -> list[dict[str, Any]]:
    value = op.get("value")
    recs = value.get("records") if isinstance(value, dict) else None
    return [r for r in recs if isinstance(r, dict)] if isinstance(recs, list) else []


def focus_of(examples: list[dict[str, Any]]) -> dict[tuple[str, int], tuple[set[int], set[Any]]]:
    """Partitions named by anomaly examples, with the offsets and values those examples point at."""
    found: dict[tuple[str, int], tuple[set[int], set[Any]]] = {}
    for ex in examples:
        topic, partition = ex.get("topic"), _int(ex.get("partition"))
        if not isinstance(topic, str) or partition is None:
            continue
        offsets, values = found.setdefault((topic, partition), (set(), set()))
        for key, v in ex.items():
            if "offset" in key:
                for o in v if isinstance(v, list) else [v]:
                    if _int(o) is not None:
                        offsets.add(_int(o))
            elif key in ("value", "values"):
                for x in v if isinstance(v, list) else [v]:
                    values.add(_hashable(x))
    return found


def digest_history(
    path: Path,
    evidence: set[int] | None = None,
    focus: dict[tuple[str, int], tuple[set[int], set[Any]]] | None = None,
    context: set[int] | None = None,
) -> HistoryDigest:
    """Stream the history (twice when partitions need an offset view) into a HistoryDigest.

    The timeline holds the first TIMELINE_CAP ops, then ops whose index is in `context`
    (windows around evidence), up to CONTEXT_CAP more.
    """
    d = HistoryDigest()
    evidence = evidence or set()
    context = context or set()
    focus = dict(list((focus or {}).items())[:OFFSET_PARTITIONS])
    for key, (offsets, _) in focus.items():
        d.offset_views[key] = OffsetView(topic=key[0], partition=key[1], focus=set(offsets))
    value_focus = {key: values for key, (_, values) in focus.items() if values}
    pending: dict[str, dict[str, Any]] = {}
    timeline_open: dict[str, TimelineOp] = {}

    for op in read_history(path, d):
        d.ops += 1
        index = _int(op.get("index"))
        index = d.ops - 1 if index is None else index
        t_ns = _time(op.get("time"))
        t = t_ns / 1e9
        d.end_time = max(d.end_time, t)
        process = str(op.get("process"))
        kind = str(op.get("type"))
        f = str(op.get("f"))
        d.counts[(f, kind)] = d.counts.get((f, kind), 0) + 1
        if isinstance(op.get("node"), str):
            d.nodes_seen.add(op["node"])
        value = op.get("value")
        if isinstance(value, dict) and isinstance(value.get("osn"), str):
            d.nodes_seen.add(value["osn"])
        if index in evidence:
            d.evidence_ops[index] = op

        if process == NEMESIS:
            d.faults.feed(op)
            if kind != "invoke" and _timeline_admits(d, index, context):
                _timeline_append(d, TimelineOp(index, None, NEMESIS, f, "nemesis", t, None, short(value), ""))
            continue
        d.processes.add(process)

        if kind == "invoke":
            pending[process] = {"index": index, "time": t_ns, "f": f, "value": value}
            if f in WRITES:
                d.writes_attempted += 1
            timeline_open.pop(process, None)  # an invoke with no completion leaves its row open
            if _timeline_admits(d, index, context):
                row = TimelineOp(index, None, process, f, "open", t, None, short(value), "")
                _timeline_append(d, row)
                timeline_open[process] = row
            continue

        inv = pending.pop(process, None)
        outcome = kind if kind in ("ok", "fail", "info") else "info"
        bucket = d.throughput.setdefault(int(t), {})
        bucket[outcome] = bucket.get(outcome, 0) + 1
        if inv is not None:
            if inv["index"] in evidence:
                d.evidence_pairs[inv["index"]] = index
            if index in evidence:
                d.evidence_pairs[index] = inv["index"]
            lat_ns = max(0, t_ns - inv["time"])
            d.latency.setdefault(outcome, StrideSample(LATENCY_POINTS_CAP)).add(
                LatencyPoint(inv["time"] / 1e9, lat_ns / 1e6, f, outcome)
            )
            if f in WRITES and kind == "ok":
                d.write_latency.add(lat_ns)
        if f in WRITES and kind == "ok":
            d.writes_ok += 1
        row = timeline_open.pop(process, None)
        if row is not None:
            row.completion, row.outcome, row.end = index, outcome, t
            if kind == "ok":
                row.value = short(value)
            row.error = short(op.get("error") or "", 40) if op.get("error") else ""
        if kind == "ok":
            if f == "deliver":
                _deliver(d, op, process, t)
            if value_focus:
                _find_focus_values(d, op, value_focus)

    d.nodes_seen |= d.faults.nodes_seen
    if any(v.focus for v in d.offset_views.values()):
        _offset_pass(d, path)
    return d


def _timeline_admits(d: HistoryDigest, index: int, context: set[int]) -> bool:
    """Whether the timeline takes this op: the run's start up to its cap, then evidence context."""
    if len(d.timeline) < TIMELINE_CAP:
        return True
    d.timeline_truncated = True
    if index in context and d.context_rows < CONTEXT_CAP:
        d.context_rows += 1
        return True
    d.skipped += 1
    return False


def _timeline_append(d: HistoryDigest, row: TimelineOp) -> None:
    row.skipped_before, d.skipped = d.skipped, 0
    d.timeline.append(row)


def context_of(evidence: list[list[int]], per_anomaly: int = 3) -> set[int]:
    """History indices around the first few evidence ops of each anomaly, for the timeline."""
    out: set[int] = set()
    for indices in evidence:
        for i in indices[:per_anomaly]:
            out.update(range(max(0, i - CONTEXT_WINDOW), i + CONTEXT_WINDOW + 1))
    return out


def _deliver(d: HistoryDigest, op: dict[str, Any], process: str, t: float) -> None:
    value = op.get("value") if isinstance(op.get("value"), dict) else {}
    osn = str(value.get("osn") or op.get("node") or process)
    channel = str(value.get("channel") or "?")
    top = None
    for b in value.get("blocks") or []:
        if not isinstance(b, dict) or _int(b.get("number")) is None:
            continue
        n = _int(b["number"])
        top = n if top is None else max(top, n)
        key = (channel, n)
        if key in d.blocks or len(d.blocks) < BLOCKS_CAP:
            d.blocks.setdefault(key, {})[osn] = str(b.get("hash") or "")[:16]
        else:
            d.blocks_truncated = True
    if top is not None:
        sample = d.heights.setdefault((osn, channel), StrideSample(HEIGHT_POINTS_CAP))
        last = sample.items[-1][1] if sample.items else -1
        if top + 1 > last:
            sample.add((t, top + 1))


def _partition_records(op: dict[str, Any]) -> Iterator[tuple[str, int, int, Any]]:
    """(topic, partition, offset, value) of every record an op saw or a send was acked at."""
    value = op.get("value")
    if op.get("f") == "send" and isinstance(value, dict):
        p, o = _int(value.get("partition")), _int(value.get("offset"))
        if isinstance(value.get("topic"), str) and p is not None and o is not None:
            yield value["topic"], p, o, value.get("value")
        return
    if op.get("f") == "txn":  # format 2: its micro-ops, as sends and polls
        for mop in value if isinstance(value, list) else []:
            if isinstance(mop, list) and len(mop) > 1 and mop[0] in ("send", "poll") and isinstance(mop[1], dict):
                yield from _partition_records({"f": mop[0], "value": mop[1]})
        return
    default_topic = value.get("topic") if isinstance(value, dict) else None
    default_part = _int(value.get("partition")) if isinstance(value, dict) else None
    for r in _records(op):
        topic = r.get("topic", default_topic)
        p = _int(r.get("partition", default_part))
        o = _int(r.get("offset"))
        if isinstance(topic, str) and p is not None and o is not None:
            yield topic, p, o, r.get("value")


def _find_focus_values(d: HistoryDigest, op: dict[str, Any], value_focus: dict) -> None:
    for topic, p, o, v in _partition_records(op):
        values = value_focus.get((topic, p))
        if values and _hashable(v) in values:
            view = d.offset_views[(topic, p)]
            if len(view.focus) < OFFSET_ROWS:
                view.focus.add(o)


def _reader(op: dict[str, Any]) -> str:
    f = str(op.get("f"))
    value = op.get("value") if isinstance(op.get("value"), dict) else {}
    if f == "send":
        return "acked send"
    if f == "poll":
        return f"poll {value.get('consumer') or op.get('process')}"
    if f == "final-read":
        return "final read"
    if f == "txn":
        return "txn"
    return f


def _offset_pass(d: HistoryDigest, path: Path) -> None:
    """Second pass: what each reader saw at the offsets of interest."""
    wanted = {key: set(view.offsets()) for key, view in d.offset_views.items()}
    for op in read_history(path):
        if op.get("type") != "ok" or op.get("f") not in ("send", "poll", "final-read", "txn"):
            continue
        for topic, p, o, v in _partition_records(op):
            if o in wanted.get((topic, p), ()):
                d.offset_views[(topic, p)].see(_reader(op), o, v, _int(op.get("index")) or 0)
