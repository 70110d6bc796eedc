"""Why something stopped serving, from what a run keeps: the nodes' logs (logs/<node>.log) and
the channels' partition offsets asked of Kafka as the run ended (evidence/channels.json,
written by harness/evidence.py). A stalled-osn row gets, beside its heights: the offset the
OSN said it started its chain from, the partition's log start and end offsets, and its last
distinct ERROR and WARN lines with their counts. An unavailable-partition row gets the
partition's leader and ISR history as the brokers logged it (their state-change and
partition lines).

Both orderers say where a chain starts: Fabric's Kafka chain logs "[channel: ch1] Starting
chain with last persisted offset 1260 and last recorded block [123]" (it then asks Kafka for
the offset after it), the model "[channel ch1] started: height 5, consuming from offset 42".
"""
from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from ground.run_files import CHANNEL_OFFSETS, EVIDENCE, LOGS

_FABRIC_START = re.compile(r"\[channel: ([\w.-]+)\] Starting chain with last persisted offset (-?\d+)")
_MODEL_START = re.compile(r"\[channel ([\w.-]+)\] started: height \d+, consuming from offset (-?\d+|None)")
_LEVEL = re.compile(r"\b(ERRO|ERROR|WARN|WARNING)\b")
_STAMP = re.compile(r"^\S*\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?\S*\s*")
_NUMBERS = re.compile(r"\b\d+\b")
DISTINCT_LINES = 5


def start_offsets(log: str) -> dict[str, int]:
    """The offset each channel's chain asked Kafka for at its last start (Fabric's is the one
    after its last persisted offset)."""
    found: dict[str, int] = {}
    for channel, offset in _FABRIC_START.findall(log):
        found[channel] = int(offset) + 1
    for channel, offset in _MODEL_START.findall(log):
        if offset != "None":
            found[channel] = int(offset)
    return found


def last_distinct_problems(log: str, limit: int = DISTINCT_LINES) -> list[dict[str, Any]]:
    """The last `limit` distinct ERROR and WARN lines (timestamps and numbers made alike, so
    one line repeated with other offsets counts once), with how often each came."""
    counts: Counter[str] = Counter()
    last: dict[str, str] = {}
    for line in log.splitlines():
        if not _LEVEL.search(line):
            continue
        text = _STAMP.sub("", line.strip())
        key = _NUMBERS.sub("N", text)
        counts[key] += 1
        last.pop(key, None)
        last[key] = text[:300]
    return [{"line": text, "count": counts[key]} for key, text in list(last.items())[-limit:]]


def channel_offsets(run_dir: Path) -> dict[str, dict[str, int]]:
    try:
        data = json.loads((run_dir / EVIDENCE / CHANNEL_OFFSETS).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def stalled_causes(run_dir: Path, examples: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each stalled-osn example with what explains it, as far as the run kept it."""
    offsets = channel_offsets(run_dir)
    logs: dict[str, str] = {}
    out = []
    for ex in examples:
        osn, channel = str(ex.get("osn")), str(ex.get("channel"))
        if osn not in logs:
            try:
                logs[osn] = (run_dir / LOGS / f"{osn}.log").read_text(errors="replace")
            except OSError:
                logs[osn] = ""
        cause = dict(ex)
        start = start_offsets(logs[osn]).get(channel)
        partition = offsets.get(channel) or {}
        if start is not None:
            cause["start_offset"] = start
        for key in ("log_start", "log_end"):
            if isinstance(partition.get(key), int):
                cause[key] = partition[key]
        cause["problems"] = last_distinct_problems(logs[osn])
        out.append(cause)
    return out


def sentence(cause: dict[str, Any]) -> str:
    """One sentence on what stopped and why, for the report's banner."""
    said = (f"{cause.get('osn')} stopped serving {cause.get('channel')} after the faults "
            f"(height {cause.get('height')} of {cause.get('channel_height')})")
    start, log_start = cause.get("start_offset"), cause.get("log_start")
    if isinstance(start, int) and isinstance(log_start, int) and start < log_start:
        return (said + f": it restarted asking Kafka for offset {start}, below the log start offset "
                f"{log_start} of its partition, whose records had been deleted.")
    if cause.get("problems"):
        return said + f"; its last error: {cause['problems'][-1]['line']}."
    return said + "."


_LEADERSHIP = re.compile(r"leader|isr|offlinepartition|onlinepartition|elect", re.IGNORECASE)
HISTORY_LINES = 20


def partition_history(run_dir: Path, topic: str, partition: int, limit: int = HISTORY_LINES) -> list[str]:
    """The last `limit` lines any broker logged about the partition's leader or ISR, in time
    order (each line begins with its timestamp), each with the broker that logged it."""
    name = f"{topic}-{partition}"
    found: list[str] = []
    for log in sorted((run_dir / LOGS).glob("kafka*.log")):
        try:
            text = log.read_text(errors="replace")
        except OSError:
            continue
        found += [f"{line[:300]}  [{log.stem}]" for line in text.splitlines()
                  if re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", line) and _LEADERSHIP.search(line)]
    return sorted(found)[-limit:]


def unavailable_causes(run_dir: Path, examples: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each unavailable-partition example with its partition's leader and ISR history."""
    out = []
    for ex in examples:
        cause = dict(ex)
        if isinstance(ex.get("topic"), str) and isinstance(ex.get("partition"), int):
            cause["history"] = partition_history(run_dir, ex["topic"], ex["partition"])
        out.append(cause)
    return out
