"""The history file: a recorder that many threads append to, and a reader that streams.

Every op gets its `index` and `time` under one lock, so both are strictly/monotonically
increasing in file order. Lines reach the OS at least every FLUSH_INTERVAL and at once on
every nemesis op: a harness killed by SIGKILL leaves a history that reads back completely
up to its last flush (no fsync needed; the page cache survives the process).
"""
from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from pydantic_core import to_json

from harness.op import NEMESIS, Op

log = logging.getLogger("ordeal.history")

FLUSH_INTERVAL = 0.1  # seconds; the contract is "at least every 200 ms"


def _encode(op: Op) -> bytes:
    """Compact JSON of one op. pydantic_core's encoder is about three times as fast as the
    stdlib's C encoder on ops (bench/recorder.py); a value JSON cannot hold (a client's
    bug) is written as its repr rather than stopping the run."""
    return to_json(op, fallback=repr)


class HistoryError(ValueError):
    """A history file that is not version 1 (a corrupt line before the last one)."""


class Recorder:
    """Appends ops to history.jsonl; thread-safe; `record` returns the op with index and time."""

    def __init__(self, path: Path, *, flush_interval: float = FLUSH_INTERVAL):
        self.path = Path(path)
        self._file = open(self.path, "wb")
        self._lock = threading.Lock()  # index, time and buffer order
        self._write_lock = threading.Lock()  # one writer at a time, in buffer order
        self._buffer: list[bytes] = []
        self._next_index = 0
        self.start_ns = time.monotonic_ns()
        self._closed = threading.Event()
        self._flusher = threading.Thread(target=self._flush_every, args=(flush_interval,),
                                         name="history-flusher", daemon=True)
        self._flusher.start()

    @property
    def count(self) -> int:
        return self._next_index

    def elapsed_ns(self) -> int:
        return time.monotonic_ns() - self.start_ns

    def record(self, op: Op) -> Op:
        # Encode outside the lock (the expensive part); only numbering and ordering are locked.
        body = _encode(op)
        rest = body[1:] if len(body) > 2 else b"}"
        sep = b"," if len(body) > 2 else b""
        with self._lock:
            index = self._next_index
            self._next_index = index + 1
            now = time.monotonic_ns() - self.start_ns
            self._buffer.append(b'{"index":%d,"time":%d%s%s\n' % (index, now, sep, rest))
        op["index"] = index
        op["time"] = now
        if op.get("process") == NEMESIS:
            self.flush()
        return op

    def flush(self) -> None:
        """Hand every recorded line to the OS, in index order."""
        with self._write_lock:
            with self._lock:
                lines, self._buffer = self._buffer, []
            if lines and not self._file.closed:
                self._file.write(b"".join(lines))
                self._file.flush()

    def _flush_every(self, interval: float) -> None:
        while not self._closed.wait(interval):
            try:
                self.flush()
            except (OSError, ValueError) as exc:  # disk full, file closed under us
                log.warning("history flush failed: %s", exc)

    def close(self) -> None:
        """Flush and close; safe to call more than once."""
        if self._closed.is_set():
            return
        self._closed.set()
        self._flusher.join()
        self.flush()
        with self._write_lock:
            self._file.close()

    def __enter__(self) -> "Recorder":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_history(path: Path) -> Iterator[Op]:
    """Stream the ops of a history file. A torn last line (a run killed mid-write) is
    skipped with a warning; a corrupt line followed by more lines is a HistoryError."""
    torn: tuple[int, str] | None = None
    with open(path, encoding="utf-8", errors="replace") as fh:
        for number, line in enumerate(fh, 1):
            if torn is not None:
                raise HistoryError(f"{path}:{torn[0]}: not a JSON object: {torn[1][:60]!r}")
            if not line.strip():
                continue
            try:
                op = json.loads(line)
            except json.JSONDecodeError:
                torn = (number, line)
                continue
            if not isinstance(op, dict):
                raise HistoryError(f"{path}:{number}: not a JSON object")
            yield op
    if torn is not None:
        log.warning("%s:%d: skipped a torn last line (the run stopped mid-write)", path, torn[0])
