"""An in-process single-partition log with the semantics a chain relies on, for tests and
for benchmarking the OSN without Kafka. `refusing` makes every write fail as Kafka would;
with `append_then_fail` the record is appended before the failure is reported, like
NOT_ENOUGH_REPLICAS_AFTER_APPEND or a timed-out produce that landed. `truncate` drops the
log's tail as an unclean election does: a reader already past the new end raises LogLost.
"""
from __future__ import annotations

import threading

from osn.partition_log import LogLost, LogRecord, LogUnavailable


class MemoryLog:
    def __init__(self) -> None:
        self._values: list[bytes] = []
        self._appended = threading.Condition()
        self.refusing: str | None = None
        self.append_then_fail = False
        self.topic_created = False

    def ensure_topic(self) -> None:
        if self.refusing:
            raise LogUnavailable(self.refusing)
        self.topic_created = True

    def append(self, value: bytes) -> int:
        with self._appended:
            if self.refusing and not self.append_then_fail:
                raise LogUnavailable(self.refusing)
            self._values.append(value)
            if self.refusing:
                self._appended.notify_all()
                raise LogUnavailable(self.refusing, maybe_appended=True)
            self._appended.notify_all()
            return len(self._values) - 1

    def truncate(self, length: int) -> None:
        """Keep the first `length` records; later appends go on from there."""
        with self._appended:
            del self._values[length:]
            self._appended.notify_all()

    def values(self) -> list[bytes]:
        with self._appended:
            return list(self._values)

    def reader(self, start: int | None) -> "MemoryReader":
        return MemoryReader(self, start or 0)


class MemoryReader:
    def __init__(self, log: MemoryLog, start: int) -> None:
        self._log = log
        self._next = start

    def poll(self, timeout: float) -> LogRecord | None:
        log = self._log
        with log._appended:
            if not log._appended.wait_for(lambda: len(log._values) != self._next, timeout):
                return None
            if len(log._values) < self._next:  # Kafka's OFFSET_OUT_OF_RANGE
                raise LogLost(f"offset {self._next} is past the log's end {len(log._values)}")
            record = LogRecord(self._next, log._values[self._next])
        self._next += 1
        return record

    def close(self) -> None:
        pass
