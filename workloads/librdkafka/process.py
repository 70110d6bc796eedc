"""A confluent-kafka release's own process (workloads/librdkafka/child.py, the wire is described
there), as this process sees it: started once per release, calls that return what the release
returned or raise what it raised, delivery reports and rebalance callbacks run on the calling
thread, and an end with this process.

Every call is bounded: one that takes a timeout is given up MARGIN seconds after it, one that
takes none after NO_TIMEOUT seconds, and raises KafkaError _TIMED_OUT then (its late answer is
dropped; delivery reports that come for it still run, on the thread that reads the socket).
While this process runs a callback the call waits anew. A process that died makes every call of its clients raise a fatal KafkaError; the next
client of the release starts a new process.
"""
from __future__ import annotations

import builtins
import itertools
import pickle
import queue
import socket
import subprocess
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from confluent_kafka import KafkaError, KafkaException

from workloads.librdkafka.environments import ClientUnavailable, environment, python_of

CHILD = Path(__file__).resolve().with_name("child.py")
MARGIN = 10.0  # seconds past a call's own timeout before the parent gives it up
NO_TIMEOUT = 120.0  # seconds for a call that takes no timeout (produce, assign, close, a sync commit)
START_TIMEOUT = 60.0  # seconds for a new process to answer its first call


def kafka_error(fields: tuple) -> KafkaError:
    """The child's KafkaError (code, reason, fatal, retriable, txn_requires_abort) as this
    process's confluent-kafka's: the same code and flags (librdkafka's codes are one list)."""
    code, reason, fatal, retriable, abort = fields
    return KafkaError(code, reason, fatal=fatal, retriable=retriable, txn_requires_abort=abort)


def _exception(fields: tuple) -> BaseException:
    kind = fields[0]
    if kind == "kafka":
        return KafkaException(kafka_error(fields[1]))
    if kind == "kafka-text":
        return KafkaException(fields[1])
    if kind == "builtin":
        cls = getattr(builtins, fields[1], None)
        if isinstance(cls, type) and issubclass(cls, Exception):
            return cls(fields[2])
    return RuntimeError(": ".join(str(f) for f in fields[1:]) or "the child's callback failed")


class _Wire:
    """Frames both ways (child.py's format); drops of objects ride ahead of the next frame."""

    def __init__(self, sock: socket.socket):
        from workloads.librdkafka.child import HEADER

        self.header, self.sock, self.read = HEADER, sock, sock.makefile("rb")
        self.lock = threading.Lock()
        self.drops: deque[int] = deque()

    def send(self, message: tuple) -> None:
        frames = []
        if self.drops:
            ids = []
            while self.drops:
                ids.append(self.drops.popleft())
            frames.append(("drop", ids))
        frames.append(message)
        data = b"".join(self.header.pack(len(p)) + p for p in (pickle.dumps(f, pickle.HIGHEST_PROTOCOL) for f in frames))
        with self.lock:
            self.sock.sendall(data)

    def receive(self) -> tuple | None:
        head = self.read.read(self.header.size)
        if len(head) < self.header.size:
            return None
        (size,) = self.header.unpack(head)
        body = self.read.read(size)
        return pickle.loads(body) if len(body) == size else None


class _Chan:
    """This process's side of one thread's calls: the answers, and the calls it waits on."""

    def __init__(self, chan: int):
        self.id = chan
        self.queue: queue.SimpleQueue = queue.SimpleQueue()
        self.waiting: list[int] = []  # request ids, innermost last (calls made inside callbacks)


class Release:
    """One confluent-kafka release's process and the clients it holds."""

    def __init__(self, version: str, python: Path):
        self.version = version
        mine, theirs = socket.socketpair()
        try:
            self.proc = subprocess.Popen([str(python), "-I", str(CHILD), str(theirs.fileno())],
                                         pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL)
        finally:
            theirs.close()
        self._sock, self._wire = mine, _Wire(mine)
        self._local = threading.local()
        self._chans: weakref.WeakValueDictionary[int, _Chan] = weakref.WeakValueDictionary()
        self._ids, self._rids, self._chan_ids, self._mids = (itertools.count(1) for _ in range(4))
        self._reports: dict[int, Callable[[KafkaError | None, int, int], None]] = {}
        self.dead: str | None = None
        threading.Thread(target=self._read, name=f"confluent-kafka-{version}", daemon=True).start()
        try:
            self.versions: dict[str, Any] = self.call(0, "hello", (), START_TIMEOUT - MARGIN)
        except KafkaException as exc:
            self.close()
            raise ClientUnavailable(f"confluent-kafka {version}'s process did not start: {exc.args[0]}") from None

    # -- objects --------------------------------------------------------------------
    def new(self, kind: str, config: dict[str, Any]) -> int:
        """A new producer or consumer in the child; its id."""
        obj = next(self._ids)
        self.call(0, kind, (obj, config))
        return obj

    def handle(self) -> int:
        """An id for an object the child makes in a call (a consumer's group metadata)."""
        return next(self._ids)

    def drop(self, obj: int) -> None:
        """The proxy of `obj` is gone (a finalizer: it only queues the word for the next frame)."""
        self._wire.drops.append(obj)

    def expect_report(self, deliver: Callable[[KafkaError | None, int, int], None]) -> int:
        """An id for a produce's delivery report; `deliver(error, partition, offset)` runs at it."""
        mid = next(self._mids)
        self._reports[mid] = deliver
        return mid

    def forget_report(self, mid: int | None) -> None:
        if mid is not None:
            self._reports.pop(mid, None)

    # -- calls ----------------------------------------------------------------------
    def _chan(self) -> _Chan:
        chan = getattr(self._local, "chan", None)
        if chan is None:
            chan = self._local.chan = _Chan(next(self._chan_ids))
            self._chans[chan.id] = chan
        return chan

    def _dead(self) -> KafkaException:
        return KafkaException(KafkaError(KafkaError._FATAL, self.dead or f"confluent-kafka {self.version}'s process is gone",
                                         fatal=True))

    def call(self, obj: int, method: str, args: tuple = (), timeout: float | None = None,
             on_callback: Callable[[str, list[tuple]], None] | None = None) -> Any:
        """`method` of the child's object `obj`, on this thread's twin there; what it returned,
        or what it raised. `timeout`: the call's own (the bound is MARGIN past it).
        `on_callback(name, partitions)` runs the rebalance callbacks the call asks for."""
        if self.dead:
            raise self._dead()
        chan = self._chan()
        rid = next(self._rids)
        chan.waiting.append(rid)
        try:
            try:
                self._wire.send(("call", chan.id, rid, obj, method, args))
            except OSError:
                raise self._dead() from None
            bound = NO_TIMEOUT if timeout is None else max(0.0, timeout) + MARGIN
            deadline = time.monotonic() + bound
            failure: BaseException | None = None
            while True:
                try:
                    message = chan.queue.get(timeout=max(0.0, deadline - time.monotonic()))
                except queue.Empty:
                    raise KafkaException(KafkaError(
                        KafkaError._TIMED_OUT, f"confluent-kafka {self.version}'s process did not answer "
                                               f"{method} within {bound:.0f} s")) from None
                if message[0] == "dead":
                    chan.queue.put(message)  # for the calls this one is inside of
                    raise self._dead()
                if message[2] != rid:
                    self._stale(message)
                    continue
                if message[0] == "rep":
                    try:
                        self._deliver(message[3])
                    except Exception as exc:  # noqa: BLE001 - raised out of the call, as in-process
                        failure = failure or exc
                    continue
                if message[0] == "cb":
                    failed = False
                    try:
                        if on_callback is not None:
                            on_callback(message[4], message[5])
                    except BaseException as exc:  # noqa: BLE001 - raised out of the call, as in-process
                        failure, failed = failure or exc, True
                    try:
                        self._wire.send(("done", chan.id, rid, failed))
                    except OSError:
                        pass  # the process is gone: "dead" comes next
                    deadline = time.monotonic() + bound
                    continue
                if failure is not None:
                    raise failure
                if message[0] == "ret":
                    return message[3]
                raise _exception(message[3])
        finally:
            chan.waiting.remove(rid)

    def _deliver(self, reports: list[tuple]) -> None:
        """Run delivery reports, in order; a report's handler that raised is raised after the
        others ran (and, by call(), out of the call that served it, as in-process)."""
        first: BaseException | None = None
        for mid, err, partition, offset in reports:
            deliver = self._reports.pop(mid, None)
            if deliver is None:
                continue
            try:
                deliver(kafka_error(err) if err is not None else None, partition, offset)
            except Exception as exc:  # noqa: BLE001
                first = first or exc
        if first is not None:
            raise first

    def _stale(self, message: tuple) -> None:
        """A word for a call its caller gave up: its delivery reports still run; a callback it
        asks for is answered as failed (the caller is no longer there to run it)."""
        if message[0] == "cb":
            try:
                self._wire.send(("done", message[1], message[2], True))
            except OSError:
                pass
        elif message[0] == "rep":
            try:
                self._deliver(message[3])
            except Exception as exc:  # noqa: BLE001 - nobody to raise it to
                print(f"ordeal: a delivery report's handler failed: {exc.__class__.__name__}: {exc}", flush=True)

    def _read(self) -> None:
        try:
            while (message := self._wire.receive()) is not None:
                chan = self._chans.get(message[1])
                if chan is not None and message[2] in chan.waiting:
                    chan.queue.put(message)
                else:
                    self._stale(message)
        except (OSError, ValueError, EOFError, pickle.UnpicklingError):
            pass
        try:
            code = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        self.dead = f"confluent-kafka {self.version}'s process ended (exit status {code})"
        for chan in list(self._chans.values()):
            chan.queue.put(("dead",))

    def close(self) -> None:
        """End the process: it exits when its end of the socket reads end-of-file."""
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._sock.close()


_lock = threading.Lock()
_releases: dict[str, Release] = {}


def release(version: str) -> Release:
    """confluent-kafka `version`'s process in this one: its environment built (the first time
    on this machine) and the process started (the first time in this one, and again after it
    died). ClientUnavailable (one line) when either cannot be."""
    with _lock:
        running = _releases.get(version)
        if running is None or running.dead:
            running = _releases[version] = Release(version, python_of(environment(version)))
        return running
