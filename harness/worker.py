"""A client thread of the run (Jepsen's worker): one logical process at a time, its open
clients (one per workload), and the daemon thread its calls run on.

Each op is an invoke then exactly one completion. A call not answered within op_timeout
(or within STOP_GRACE once the run stops) completes as info, and so does one that
raises: the process may still be doing it, so it is retired and the thread goes on as
process + concurrency with freshly opened clients.
"""
from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from ground.client import Client
from ground.op import FAIL, INFO, Op, completion, indeterminate, invoke
from ground.workload import Workload
from harness.history import Recorder

log = logging.getLogger("ordeal.worker")

STOP_GRACE = 2.0  # seconds an in-flight op may still take once the run is told to stop
POLL = 0.1  # seconds; how often a waiting thread looks at the stop flag


class Caller:
    """Runs one client call at a time on a daemon thread, so its worker can stop waiting
    for a call that hangs (and the process can exit although that call never returns)."""

    def __init__(self, name: str):
        self._calls: queue.SimpleQueue = queue.SimpleQueue()
        threading.Thread(target=self._loop, name=name, daemon=True).start()

    def _loop(self) -> None:
        while (item := self._calls.get()) is not None:
            fut, fn, arg = item
            if fut.set_running_or_notify_cancel():
                try:
                    fut.set_result(fn(arg))
                except BaseException as exc:  # noqa: BLE001 - handed to the worker
                    fut.set_exception(exc)

    def submit(self, fn: Callable[[Any], Any], arg: Any) -> Future:
        fut: Future = Future()
        self._calls.put((fut, fn, arg))
        return fut

    def retire(self) -> None:
        self._calls.put(None)


class ClientWorker:
    """One client thread: its current process id, its open clients (one per workload)
    and the caller thread its calls run on."""

    def __init__(self, thread: int, *, recorder: Recorder, workloads: dict[str, Workload], cluster: Any,
                 concurrency: int, op_timeout: float, stop: threading.Event):
        self.process = thread
        self.recorder, self.workloads, self.cluster = recorder, workloads, cluster
        self.concurrency, self.op_timeout, self.stop = concurrency, op_timeout, stop
        self.clients: dict[str | None, Client] = {}
        self.caller: Caller | None = None

    def perform(self, template: Op) -> str:
        recorder = self.recorder
        name = template.get("workload")
        extras = {k: v for k, v in template.items() if k not in ("f", "value")}
        client = self.clients.get(name)
        if client is None:
            try:
                client = self.workloads[name].client.open(self.cluster, self.process)
            except Exception as exc:  # noqa: BLE001 - nothing was sent: a definite fail
                op = recorder.record(invoke(self.process, template["f"], template.get("value"), **extras))
                recorder.record({**indeterminate(op, "client-open"), "type": FAIL, **extras,
                                 "exception": f"{exc.__class__.__name__}: {exc}"})
                return FAIL
            self.clients[name] = client
        op = recorder.record(invoke(self.process, template["f"], template.get("value"), **extras))
        answer, error, exception = self._call(client, op)
        done = completion(op, answer) if error is None else indeterminate(op, error)
        if exception:
            done["exception"] = exception
        done.update(extras)
        recorder.record(done)
        if done["type"] == INFO:
            self._retire(stuck=client if error in ("timeout", "interrupted") else None)
        return done["type"]

    def _call(self, client: Client, op: Op) -> tuple[Op | None, str | None, str | None]:
        """(answer, None, None), or (None, error code, exception text) when the call
        raised, timed out or was cut short by a stop."""
        if self.caller is None:
            self.caller = Caller(f"client-call-{self.process}")
        fut = self.caller.submit(client.invoke, dict(op))
        deadline = time.monotonic() + self.op_timeout
        while True:
            now = time.monotonic()
            if self.stop.is_set():
                deadline = min(deadline, now + STOP_GRACE)
            if now >= deadline:
                code = "interrupted" if self.stop.is_set() else "timeout"
                fut.add_done_callback(lambda _f: close_quietly(client))
                self.caller.retire()
                self.caller = None
                return None, code, None
            try:
                return fut.result(timeout=min(POLL, deadline - now)), None, None
            except FutureTimeout:
                continue
            except Exception as exc:  # noqa: BLE001 - indeterminate: it may have happened
                return None, "crash", f"{exc.__class__.__name__}: {exc}"

    def _retire(self, stuck: Client | None) -> None:
        """Jepsen: after an indeterminate op the process may still be doing it, so it is
        never used again; the thread continues as a new process with new clients."""
        for client in self.clients.values():
            if client is not stuck:
                close_quietly(client)
        self.clients.clear()
        self.process += self.concurrency

    def close(self) -> None:
        for client in self.clients.values():
            close_quietly(client)
        self.clients.clear()
        if self.caller is not None:
            self.caller.retire()


def close_quietly(client: Client) -> None:
    try:
        client.close()
    except Exception as exc:  # noqa: BLE001 - closing a broken client is best effort
        log.debug("closing a client failed: %s", exc)
