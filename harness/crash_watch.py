"""Crashes are findings: a thread that notices a node exiting while nothing meant to stop it.

Every `interval` seconds the watcher asks Docker for the state of every node of the
cluster (ZooKeeper, Kafka, OSN and toxiproxy alike). A node that is exited or dead while
its `expected_down` is not set (clusters/node.py: kill() and stop() set it before the
signal, start() clears it after the start) crashed by itself: a panic, an assertion, an
OOM kill. That is recorded once per down-time, told apart by Docker's FinishedAt, as one
nemesis op

    {"process": "nemesis", "type": "info", "f": "crash",
     "value": {"node", "role", "exit_code", "oom_killed", "log_tail": [last lines of its log]}}

which checkers report as the node-crash anomaly. The watcher never restarts a node.

Races with the nemesis: the flag is read before and after Docker's state, and a crash
is reported only when it is unset both times. A kill sets it before its SIGKILL, so a
kill that lands between the reads is seen by the second; a start clears it only once the
container runs, so a down state read after the first read comes from a new exit.

The look every second may come too late for a node that a fault then starts again (a
heal starts every node that is down, crashed ones too): whoever is about to start nodes
calls `poll()` first (the runner does before every nemesis op and every heal), so the
crash is recorded before the start. Looks never overlap, so one down-time is reported once.

`start()` takes a first look at once. A node that is already down then is not reported
when `baseline` is set (a reused cluster: an earlier run may have stopped it). After
`stop()` returns no op is recorded, so the cluster's teardown is never reported.
"""
from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from typing import Any

from ground.cluster_view import NodeView
from ground.op import INFO, NEMESIS, Op

log = logging.getLogger("ordeal.crash_watch")

INTERVAL = 1.0  # seconds between two looks at every node
LOG_LINES = 30  # lines of the node's log kept in the crash op
LINE_CHARS = 500  # a longer log line is cut
DOWN = ("exited", "dead")
STOP_WAIT = 5.0  # seconds stop() waits for a look in progress

State = dict[str, Any]


def exit_state(node: NodeView) -> State | None:
    return node.exit_state()


def log_tail(node: NodeView, lines: int = LOG_LINES) -> list[str]:
    """The last `lines` lines of the node's log, each cut at LINE_CHARS."""
    return [line[:LINE_CHARS] for line in node.log_tail(lines)]


class CrashWatch:
    """Watch `nodes()` every `interval` seconds and `record` one crash op per unexpected exit.

    `inspect` and `tail` reach the nodes (Docker by default; tests give fakes). `on_gone`
    hears, once, the name of the first node whose container was removed: not a crash, as
    nothing exited, but the end of the run's cluster (the runner then stops the run at once,
    where its ops would time out against nothing until the end of its duration).
    """

    def __init__(self, nodes: Callable[[], Iterable[NodeView]], record: Callable[[Op], Any], *,
                 interval: float | None = None, baseline: bool = False,
                 inspect: Callable[[NodeView], State | None] | None = None,
                 tail: Callable[[NodeView, int], list[str]] | None = None, log_lines: int = LOG_LINES,
                 on_gone: Callable[[str], None] | None = None):
        self._nodes = nodes
        self._record = record
        self.interval = INTERVAL if interval is None else interval
        self._inspect = inspect or exit_state
        self._tail = tail or log_tail
        self._log_lines = log_lines
        self._on_gone = on_gone
        self.gone: str | None = None  # the first node found removed
        self._baseline = baseline
        self._reported: dict[str, Any] = {}  # node name -> the down-time (FinishedAt) reported or ignored
        self._failing: set[str] = set()  # nodes whose last look failed (logged once)
        self._lock = threading.Lock()  # a record and stop() do not interleave
        self._looking = threading.Lock()  # one look at a time (the thread's, or a poll())
        self._stopped = False
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self.crashes: list[Op] = []

    # -- control ----------------------------------------------------------------
    def start(self) -> "CrashWatch":
        self._look(record=not self._baseline)
        self._thread = threading.Thread(target=self._loop, name="crash-watch", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """No op is recorded once this returns; waits a little for a look in progress."""
        with self._lock:
            self._stopped = True
        self._wake.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(STOP_WAIT)

    def __enter__(self) -> "CrashWatch":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _loop(self) -> None:
        while not self._stopped:
            try:
                self._look()
            except Exception:  # noqa: BLE001 - the watcher must never stop the run
                log.exception("crash watch: a look at the nodes failed")
            self._wake.wait(self.interval)

    # -- one look ---------------------------------------------------------------
    def poll(self) -> list[Op]:
        """One look at every node now; the crash ops recorded by it."""
        return self._look()

    def _look(self, record: bool = True) -> list[Op]:
        found = []
        with self._looking:
            for node in list(self._nodes()):
                if self._stopped:
                    break
                op = self._check(node, record)
                if op is not None:
                    found.append(op)
        return found

    def _check(self, node: NodeView, record: bool) -> Op | None:
        name = str(getattr(node, "name", node))
        if getattr(node, "expected_down", False):
            return None
        try:
            state = self._inspect(node)
        except Exception as exc:  # noqa: BLE001 - Docker slow or gone: look again next time
            if name not in self._failing:
                self._failing.add(name)
                log.warning("crash watch: cannot inspect %s: %s: %s", name, exc.__class__.__name__, exc)
            return None
        self._failing.discard(name)
        if state is None:
            if self.gone is None and not self._stopped:
                self.gone = name
                log.warning("crash watch: node %s was removed while the run used it", name)
                if self._on_gone is not None:
                    self._on_gone(name)
            return None
        if not state:
            return None
        if state.get("Status") not in DOWN:
            self._reported.pop(name, None)  # up again: its next exit is a new down-time
            return None
        if getattr(node, "expected_down", False):  # a kill between the two reads
            return None
        down_time = state.get("FinishedAt") or state.get("Status")
        if self._reported.get(name) == down_time:
            return None
        self._reported[name] = down_time
        if not record:
            log.info("crash watch: %s was already down when the watch began; not reported", name)
            return None
        try:
            tail = self._tail(node, self._log_lines)
        except Exception as exc:  # noqa: BLE001 - the crash is the finding; its log is a bonus
            tail = [f"(log unavailable: {exc.__class__.__name__}: {exc})"]
        exit_code = state.get("ExitCode")
        op: Op = {"process": NEMESIS, "type": INFO, "f": "crash", "value": {
            "node": name,
            "role": getattr(node, "role", None),
            "exit_code": exit_code if isinstance(exit_code, int) else None,
            "oom_killed": bool(state.get("OOMKilled", False)),
            "log_tail": [str(line) for line in tail],
        }}
        with self._lock:
            if self._stopped:
                return None
            log.warning("node %s (%s) exited with code %s while no fault had stopped it", name, op["value"]["role"],
                        exit_code)
            self._record(op)
            self.crashes.append(op)
        return op
