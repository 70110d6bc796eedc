"""A client thread of the run (Jepsen's worker): its logical processes, its open clients
(one per workload), and the daemon thread its calls run on.

Each op is an invoke then exactly one completion. A call not answered within op_timeout
(or within STOP_GRACE once the run stops) completes as info, and so does one that
raises: the process may still be doing it, so it is retired and the thread goes on as a
new process (thread + k * concurrency) with freshly opened clients.

A client that can start some ops without waiting for them (`Client.invoke_async`, e.g.
kafka-log's sends handed to the producer) gets up to `in_flight` of them open at once,
each under a logical process of its own (a lane), so the history's rule holds: a process
never has two ops open. The completion is recorded when the client calls back; a lane
whose op ended info is retired alone (the clients stay: they hold no state of its op).
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

from ground.cluster_view import ClusterView
from ground.client import Client, starts_async
from ground.op import CLIENT_CRASH, FAIL, INFO, Op, completion, indeterminate, invoke
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


PENDING = "pending"  # perform's answer for an op started asynchronously: on_done tells its end


class _Open:
    """An op started asynchronously: its invoke, the fields its completion repeats, its deadline."""

    __slots__ = ("op", "extras", "deadline")

    def __init__(self, op: Op, extras: dict[str, Any], deadline: float):
        self.op, self.extras, self.deadline = op, extras, deadline


class ClientWorker:
    """One client thread: its current process id, its open clients (one per workload),
    the caller thread its calls run on, and its ops open asynchronously (at most in_flight,
    each on a lane process of its own; on_done(type) is called when one completes)."""

    def __init__(self, thread: int, *, recorder: Recorder, workloads: dict[str, Workload], cluster: ClusterView,
                 concurrency: int, op_timeout: float, stop: threading.Event, in_flight: int = 1,
                 on_done: Callable[[str], None] | None = None):
        self.thread = thread
        self.recorder, self.workloads, self.cluster = recorder, workloads, cluster
        self.concurrency, self.op_timeout, self.stop = concurrency, op_timeout, stop
        self.in_flight, self.on_done = in_flight, on_done
        self.clients: dict[str | None, Client] = {}
        self.caller: Caller | None = None
        self._generation = 0
        self.process = self._fresh_process()
        self._cond = threading.Condition()
        self._open: dict[int, _Open] = {}  # lane process -> its open op
        self._idle_lanes: list[int] = []
        self._sweeper: threading.Thread | None = None
        self._closed = False

    def _fresh_process(self) -> int:
        """thread, thread + concurrency, ...: unique over all threads, and the sequence a
        thread without asynchronous ops has always used."""
        process = self.thread + self._generation * self.concurrency
        self._generation += 1
        return process

    def wait_for_room(self) -> None:
        """Block while in_flight asynchronous ops are open (ops past their deadline are
        completed info meanwhile), so the next op drawn can start."""
        with self._cond:
            while len(self._open) >= self.in_flight and not self.stop.is_set():
                self._expire()
                self._cond.wait(POLL)

    def perform(self, template: Op) -> str:
        if template["f"] == CLIENT_CRASH:
            return self.crash()
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
        if self.in_flight > 1 and starts_async(client, template["f"]):
            return self._start(client, template, extras)
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

    def _start(self, client: Client, template: Op, extras: dict[str, Any]) -> str:
        """Record the invoke on a free lane, then hand the op to the client; its completion
        is recorded by _finish, from whichever thread the client calls back on."""
        with self._cond:
            self._expire()
            lane = self._idle_lanes.pop() if self._idle_lanes else self._fresh_process()
            op = self.recorder.record(invoke(lane, template["f"], template.get("value"), **extras))
            self._open[lane] = _Open(op, extras, time.monotonic() + self.op_timeout)
            if self._sweeper is None:
                self._sweeper = threading.Thread(target=self._sweep, name=f"client-sweep-{self.thread}", daemon=True)
                self._sweeper.start()
        try:
            client.invoke_async(dict(op), lambda answer: self._finish(op, answer))  # type: ignore[attr-defined]
        except Exception as exc:  # noqa: BLE001 - indeterminate: it may have been handed over
            self._finish(op, None, "crash", f"{exc.__class__.__name__}: {exc}")
        return PENDING

    def _finish(self, op: Op, answer: Op | None, error: str | None = None, exception: str | None = None) -> None:
        """Record the completion of an asynchronous op once: a report after its timeout (or a
        second one) is dropped, the op having ended info already."""
        with self._cond:
            entry = self._open.get(op["process"])
            if entry is None or entry.op is not op:
                return
            done = completion(op, answer) if error is None else indeterminate(op, error)
            if exception:
                done["exception"] = exception
            done.update(entry.extras)
            self.recorder.record(done)
            del self._open[op["process"]]
            if done["type"] != INFO:
                self._idle_lanes.append(op["process"])  # an info op's process is never used again
            self._cond.notify_all()
        if self.on_done is not None:
            self.on_done(done["type"])

    def _expire(self, code: str = "timeout") -> None:
        """Complete as info every asynchronous op past its deadline (caller holds _cond).
        Ops are stored in the order they started, which is their deadlines' order (one
        op_timeout for all), so the look stops at the first op still in time: it runs at
        every completion, where a scan of every open op would cost in_flight steps per op."""
        now = time.monotonic()
        late = []
        for entry in self._open.values():
            if entry.deadline > now:
                break
            late.append(entry.op)
        for op in late:
            self._cond.release()
            try:
                self._finish(op, None, code)
            finally:
                self._cond.acquire()

    def _sweep(self) -> None:
        """Times out open asynchronous ops while this worker's thread waits elsewhere (the
        generator holds it until every op of a phase has completed)."""
        with self._cond:
            while not self._closed:
                self._expire()
                self._cond.wait(POLL)

    def drain(self) -> None:
        """Wait for the open asynchronous ops: until their deadlines, or STOP_GRACE once the
        run stops; what is still open then completes info ("interrupted" after a stop)."""
        with self._cond:
            grace_until: float | None = None
            while self._open:
                now = time.monotonic()
                if self.stop.is_set():
                    grace_until = grace_until or now + STOP_GRACE
                    if now >= grace_until:
                        for entry in self._open.values():
                            entry.deadline = now
                        self._expire("interrupted")
                        break
                self._expire()
                self._cond.wait(POLL)

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

    def crash(self) -> str:
        """Jepsen's crash op: this process's clients are dropped and the thread goes on as a
        new process with new ones, which meet what the crash left: a later kafka-txn producer
        takes the dropped one's transactional.id from the pool and fences it, consumers find
        their positions again. A client's close is already what a crash leaves: none flushes,
        aborts or commits on close (kafka-log's producer is shared by every process and
        lives on; its sends still open on this thread's lanes end at their reports or
        their deadlines, as any in-flight op does)."""
        op = self.recorder.record(invoke(self.process, CLIENT_CRASH, None))
        self.recorder.record(indeterminate(op, "crashed"))
        self._retire(stuck=None)
        return INFO

    def _retire(self, stuck: Client | None) -> None:
        """Jepsen: after an indeterminate op the process may still be doing it, so it is
        never used again; the thread continues as a new process with new clients."""
        for client in self.clients.values():
            if client is not stuck:
                close_quietly(client)
        self.clients.clear()
        self.process = self._fresh_process()

    def close(self) -> None:
        self.drain()
        with self._cond:
            self._closed = True
            self._cond.notify_all()
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
