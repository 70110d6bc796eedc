"""The final-read phase's ops, each asked again until it completes ok.

After the heal a partition may still be electing a leader, or an OSN still catching up; a
final read that ended incomplete is worth repeating while the phase's time limit lasts
(the runner's TimeLimit ends the phase). The workload's client reports each final op's
outcome here, which is how this generator knows what to ask again.
"""
from __future__ import annotations

import json
import threading
from collections import deque
from typing import Any

from harness.generator import Answer, Context, Pending
from harness.op import Op


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


class UntilOk:
    """These ops in order; one whose completion was not ok goes to the back of the queue.
    While some are out and none is queued it answers Pending; exhausted once all were ok."""

    def __init__(self, ops: list[Op]):
        self._lock = threading.Lock()
        self._todo: deque[Op] = deque(ops)
        self._out: dict[str, Op] = {}

    def op(self, ctx: Context) -> Answer:
        with self._lock:
            if self._todo:
                op = self._todo.popleft()
                self._out[_key(op["value"])] = op
                return {**op, "value": dict(op["value"])}
            return Pending() if self._out else None

    def completed(self, value: Any, ok: bool) -> None:
        """The client's report for the final op whose invoke value was `value`."""
        with self._lock:
            op = self._out.pop(_key(value), None)
            if op is not None and not ok:
                self._todo.append(op)


class FinalReports:
    """Where a workload's clients report final ops: to the newest UntilOk its final_generator
    made (the runner makes one per run)."""

    def __init__(self) -> None:
        self.current: UntilOk | None = None

    def start(self, ops: list[Op]) -> UntilOk:
        self.current = UntilOk(ops)
        return self.current

    def completed(self, value: Any, ok: bool) -> None:
        if self.current is not None:
            self.current.completed(value, ok)
