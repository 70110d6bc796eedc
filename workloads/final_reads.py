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
from collections.abc import Callable
from typing import Any

from ground.generator import NS, Answer, Context, Pending
from ground.op import OK, Op

# A final op that was not ok is asked again no sooner than this after it was last handed out:
# one that fails at once (a client that cannot even start) must not spin the phase (a run
# whose Java client could not start recorded 229,212 final reads in its 60 s).
RETRY_AFTER = NS // 5


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


class UntilOk:
    """These ops in order; one whose completion was not ok goes to the back of the queue, and
    so does one out for longer than `stale_after` seconds without a report (its call hangs:
    the runner has given up on it). While some are out and none is queued it answers
    Pending; exhausted once all were ok."""

    def __init__(self, ops: list[Op], stale_after: float, first: list[Op] | None = None):
        self._lock = threading.Lock()
        self._todo: deque[Op] = deque(ops)
        self._out: dict[str, tuple[Op, int]] = {}  # key -> (op, when it was handed out)
        self._stale = int(stale_after * NS)
        # Asked once each, whatever their outcome, before any of `ops`.
        self._first: deque[Op] = deque(first or [])
        self._first_out: set[str] = set()
        self._retry: list[tuple[Op, int]] = []  # (op, when it may be asked again): failed ones

    def op(self, ctx: Context) -> Answer:
        with self._lock:
            if self._first:
                op = self._first.popleft()
                self._first_out.add(_key(op["value"]))
                return {**op, "value": dict(op["value"])}
            if self._first_out:
                return Pending(ctx.now + NS // 10)
            for key, (op, since) in list(self._out.items()):
                if ctx.now - since > self._stale:
                    del self._out[key]
                    self._todo.append(op)
            due = [r for r in self._retry if r[1] <= ctx.now]
            self._retry = [r for r in self._retry if r[1] > ctx.now]
            self._todo.extend(op for op, _ in due)
            if self._todo:
                op = self._todo.popleft()
                self._out[_key(op["value"])] = (op, ctx.now)
                return {**op, "value": dict(op["value"])}
            if not self._out and not self._retry:
                return None
            wake = [since + self._stale + 1 for _, since in self._out.values()] + [at for _, at in self._retry]
            return Pending(min(wake))

    def completed(self, value: Any, ok: bool) -> None:
        """The client's report for the final op whose invoke value was `value`."""
        with self._lock:
            if _key(value) in self._first_out:
                self._first_out.discard(_key(value))
                return
            out = self._out.pop(_key(value), None)
            if out is not None and not ok:
                self._retry.append((out[0], out[1] + RETRY_AFTER))


class FinalReports:
    """Where a workload's clients report final ops: to the newest UntilOk its final_generator
    made (the runner makes one per run)."""

    def __init__(self) -> None:
        self.current: UntilOk | None = None

    def start(self, ops: list[Op], stale_after: float, first: list[Op] | None = None) -> UntilOk:
        self.current = UntilOk(ops, stale_after, first)
        return self.current

    def completed(self, value: Any, ok: bool) -> None:
        if self.current is not None:
            self.current.completed(value, ok)

    def answer(self, value: Any, call: Callable[[Any], Op]) -> Op:
        """Run one final op and report it, whatever happens: asked again unless ok."""
        ok = False
        try:
            answer = call(value)
            ok = answer["type"] == OK
            return answer
        finally:
            self.completed(value, ok)
