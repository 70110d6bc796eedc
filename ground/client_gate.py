"""A fault's way to hold the run's clients: no client op starts while the gate is held, and
the holder may wait for the ops already open to end.

Why a fault needs it: some operations are done with the clients stopped, as their operators
are told to. Fabric's migration from Kafka to Raft allows for downtime; a tx answered SUCCESS
just before the channel enters maintenance mode is re-validated against the maintenance config
and dropped (docs/findings.md). With the clients held and their open ops ended first, what the
migration keeps and loses is the migration's own doing.

The runner makes one gate per run and hands it to every nemesis that has
`bind_client_gate(gate)` (optional, as `bind_recorder`).
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable


class ClientGate:
    def __init__(self, cond: threading.Condition, open_ops: Callable[[], int]):
        """`cond`: the runner's condition, notified whenever an op ends; `open_ops`: the
        client ops started and not yet ended, read under `cond`."""
        self._cond = cond
        self._open_ops = open_ops
        self._held = False

    @property
    def held(self) -> bool:
        return self._held

    def hold(self, drain_timeout: float) -> int:
        """No client op starts from now; wait (at most `drain_timeout` s) for the open ones
        to end. Answers how many were still open when the wait ended (0: all ended)."""
        deadline = time.monotonic() + drain_timeout
        with self._cond:
            self._held = True
            while (left := self._open_ops()) > 0 and (remaining := deadline - time.monotonic()) > 0:
                self._cond.wait(min(remaining, 0.5))
            return left

    def release(self) -> None:
        with self._cond:
            self._held = False
            self._cond.notify_all()
