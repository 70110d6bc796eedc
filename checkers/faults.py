"""Whether the faults of a run happened: the outcome of every fault request, from the history.

A verdict says what the clients saw; it says nothing of whether the faults it was meant to
be seen under took place. A `valid` run whose every kill failed proves nothing about kills,
so the outcomes are a fact of the run in their own right, judged beside the anomalies
(results.json "faults", the report's fault table, the suites' `undecided`).

ordeal's runner marks each nemesis op it records for a request of the fault schedule with
an `outcome`: a start `took-effect`, `failed` (the fault raised) or found `no-target` (live
state named nothing to hit: no leader, no coordinator yet); a stop (or a heal) `undone` or
`undo-failed`. A history without outcomes (older ordeal, another harness) says nothing
either way: "recorded" is false and "took_effect" null.

The nemesis ops are found by scanning the file's bytes for the word "nemesis" and reading
only those lines: a few hundred lines in a history of millions, at about the speed of
reading the file.
"""
from __future__ import annotations

import json
import mmap
from pathlib import Path
from typing import Any

from ground.fault_outcome import FAILED, NO_TARGET, OUTCOME, OUTCOMES, START_OUTCOMES, TOOK_EFFECT, UNDO_FAILED
from ground.history_file import parse_line
from ground.op import NEMESIS

MAX_FAILURES = 20
_WORD = json.dumps(NEMESIS).encode()


def nemesis_ops(path: Path) -> list[dict[str, Any]]:
    """The nemesis ops of the history at `path`, in file order (lines that are not JSON
    objects of process "nemesis" are left to the history's own reader to judge)."""
    found: list[dict[str, Any]] = []
    with open(path, "rb") as f:
        try:
            data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except ValueError:  # an empty file cannot be mapped
            return found
        with data:
            at = data.find(_WORD)
            while at != -1:
                start = data.rfind(b"\n", 0, at) + 1
                end = data.find(b"\n", at)
                end = len(data) if end == -1 else end
                op = parse_line(data[start:end])
                if op is not None and op.get("process") == NEMESIS:
                    found.append(op)
                at = data.find(_WORD, end)
    return found


def fault_outcomes(ops: list[dict[str, Any]]) -> dict[str, Any]:
    """The faults part of results.json, from a history's nemesis ops.

    by_fault: per fault of the scenario (the op's top-level `fault`), how many requests
    ended in each outcome; took_effect: whether any start took effect (null where nothing
    was recorded: no fault ran, or the history records no outcomes); failures: the first
    failed, target-less or failed-undo requests with their index and error."""
    by_fault: dict[str, dict[str, int]] = {}
    failures: list[dict[str, Any]] = []
    failed = 0
    for op in ops:
        outcome = op.get(OUTCOME)
        if outcome not in OUTCOMES:
            continue
        fault = str(op.get("fault") or _value_fault(op) or "?")
        counts = by_fault.setdefault(fault, {name: 0 for name in OUTCOMES})
        counts[outcome] += 1
        if outcome in (FAILED, NO_TARGET, UNDO_FAILED):
            failed += 1
            if len(failures) < MAX_FAILURES:
                failures.append({"index": op.get("index"), "time": op.get("time"), "fault": fault,
                                 "outcome": outcome, "error": str(op.get("error") or "")})
    starts = {name: sum(c[o] for o in START_OUTCOMES) for name, c in by_fault.items()}
    return {
        "recorded": bool(by_fault),
        "took_effect": any(c[TOOK_EFFECT] for c in by_fault.values()) if any(starts.values()) else None,
        "by_fault": {name: {"starts": starts[name], **counts} for name, counts in sorted(by_fault.items())},
        "failures": failures,
        "more_failures": failed - len(failures),
    }


def history_fault_outcomes(path: Path) -> dict[str, Any]:
    """fault_outcomes of the history file at `path`."""
    return fault_outcomes(nemesis_ops(Path(path)))


def _value_fault(op: dict[str, Any]) -> Any:
    value = op.get("value")
    return value.get("fault") if isinstance(value, dict) else None
