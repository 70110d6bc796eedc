"""The history file: a recorder that many threads append to, and a reader that streams.

Recording takes no lock: an op gets its `index` and `time` in one step that no other
thread can come between (see Recorder.__init__), so many threads do not queue behind each
other, and behind the GIL, on every op. A flusher thread writes the lines in index order,
so `index` strictly increases and `time` never goes backwards in file order. Lines reach
the OS at least every FLUSH_INTERVAL and at once on every nemesis op: a harness killed by
SIGKILL leaves a history that reads back completely up to its last flush (no fsync needed;
the page cache survives the process). Only while threads that never wait keep the GIL busy
(bench/recorder.py's 16 do) does the flusher wait for the GIL too: then lines can take
about a second to reach the OS.
"""
from __future__ import annotations

import itertools
import logging
import threading
import time
from pathlib import Path

from pydantic_core import to_json

from ground.op import NEMESIS, Op

log = logging.getLogger("ordeal.history")

FLUSH_INTERVAL = 0.1  # seconds; the contract is "at least every 200 ms"
# A nemesis op's flush waits until every op numbered before it is stored (see Recorder._lines):
# a thread stamped and not yet stored only lost the GIL, so the wait always ends. Past
# GAP_WARN it is said; only past GAP_LIMIT, when something is badly wrong, is the line
# written with the gap left behind it (the late op is then written at close, out of order).
GAP_WARN = 1.0
GAP_LIMIT = 60.0


def _encode_anyway(op: Op) -> bytes:
    """JSON of an op that pydantic_core's encoder refused (a client's bug): a value JSON
    cannot hold is written as its repr rather than stopping the run."""
    try:
        return to_json(op, fallback=repr)
    except ValueError:  # a value that contains itself
        return to_json({key: value if isinstance(value, (str, int)) else repr(value) for key, value in op.items()},
                       fallback=repr)


class Recorder:
    """Appends ops to history.jsonl; thread-safe; `record` sets the op's index and time and
    returns it (they come last in its line: the op is encoded as it is, which is the cheapest)."""

    def __init__(self, path: Path, *, flush_interval: float = FLUSH_INTERVAL):
        self.path = Path(path)
        self._file = open(self.path, "wb")
        self.start_ns = time.monotonic_ns()
        # (index, monotonic ns) pairs. zip, count and the clock are all C, and the GIL only
        # changes hands between bytecodes: no other thread takes a stamp between one's index
        # and its time, so time never goes backwards in index order. (This leans on the GIL;
        # a free-threaded Python would need a lock here.)
        self._stamps = zip(itertools.count(), iter(time.monotonic_ns, None))
        # index -> line not written yet. A worker stores its line with one dict store (atomic
        # under the GIL too); a thread that lost the GIL between its stamp and its store
        # leaves a gap for a moment, and the writer stops at the gap until it is filled.
        self._lines: dict[int, bytes] = {}
        self._written = 0  # the next index to write
        self._write_lock = threading.Lock()  # one writer at a time; workers never take it
        self._closed = threading.Event()
        self._flusher = threading.Thread(target=self._flush_every, args=(flush_interval,),
                                         name="history-flusher", daemon=True)
        self._flusher.start()

    @property
    def count(self) -> int:
        """Ops recorded so far (written or about to be)."""
        with self._write_lock:
            return self._written + len(self._lines)

    def elapsed_ns(self) -> int:
        return time.monotonic_ns() - self.start_ns

    def record(self, op: Op) -> Op:
        index, now = next(self._stamps)
        line = b""  # stays empty if encoding raises: the op is lost, but later ones must not wait for it
        try:
            op["index"] = index
            op["time"] = now - self.start_ns
            try:
                # pydantic_core's encoder is about three times as fast as the stdlib's on ops;
                # without the fallback argument it is faster still (bench/recorder.py).
                line = to_json(op) + b"\n"
            except ValueError:
                line = _encode_anyway(op) + b"\n"
        finally:
            self._lines[index] = line
        if op.get("process") == NEMESIS:
            self._flush_through(index)
        return op

    def flush(self) -> None:
        """Hand every op recorded before this call to the OS, in index order."""
        self._flush_through(max(self._lines, default=-1))

    def _flush_through(self, index: int) -> None:
        """Write the lines up to `index` before returning: a nemesis op is on disk before the
        run goes on, so a harness killed right after it still leaves it in the history. One
        numbered before it but not stored yet (its thread lost the GIL in between; with many
        busy threads it may wait for the GIL for tens of milliseconds) is waited for."""
        began = time.monotonic()
        warned = False
        self._write()
        while self._written <= index and not self._file.closed:
            waited = time.monotonic() - began
            if waited > GAP_LIMIT:
                log.error("history: op %d was numbered %.0f s ago and never stored; writing past it", self._written,
                          waited)
                self._write(gaps=True)
                return
            if waited > GAP_WARN and not warned:
                log.warning("history: a flush has waited %.1f s for op %d to be stored", waited, self._written)
                warned = True
            time.sleep(0.001)
            self._write()

    def _write(self, *, gaps: bool = False) -> None:
        """Write the stored lines that come next in index order: up to the first index not
        stored yet, or (`gaps`, at close) all of them."""
        with self._write_lock:
            if self._file.closed:
                return
            lines, first = self._lines, self._written
            if gaps:
                indices: range | list[int] = sorted(lines)
                if indices and indices[-1] - first != len(indices) - 1:
                    log.warning("history: some ops were numbered but never stored (their threads were still "
                                "recording at close)")
            else:  # lines holds no index below first: the next ones are first, first + 1, ...
                indices = range(first, first + len(lines))
                gap = next(itertools.filterfalse(lines.__contains__, indices), None)
                if gap is not None:
                    indices = range(first, gap)
            if indices:
                self._file.write(b"".join(map(lines.pop, indices)))
                self._file.flush()
                self._written = indices[-1] + 1

    def _flush_every(self, interval: float) -> None:
        while not self._closed.wait(interval):
            try:
                self._write()
            except (OSError, ValueError) as exc:  # disk full, file closed under us
                log.warning("history flush failed: %s", exc)

    def close(self) -> None:
        """Flush and close; safe to call more than once."""
        if self._closed.is_set():
            return
        self._closed.set()
        self._flusher.join()
        self._write(gaps=True)
        with self._write_lock:
            self._file.close()

    def __enter__(self) -> "Recorder":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
