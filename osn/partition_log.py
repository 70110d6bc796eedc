"""What a chain needs from a channel's single-partition topic, so the consenter can be
driven by Kafka (kafka_log.py) in the cluster and by an in-memory log (memory_log.py) in tests.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class LogRecord:
    offset: int
    value: bytes


class LogUnavailable(Exception):
    """The log refused or did not acknowledge; str() is Kafka's error name (e.g. NOT_ENOUGH_REPLICAS).

    maybe_appended: the record left this process, so it may be in the log all the same (a
    timed-out or retried produce without idempotence); False when it was never sent.
    """

    def __init__(self, reason: str, maybe_appended: bool = False) -> None:
        super().__init__(reason)
        self.maybe_appended = maybe_appended


class LogLost(Exception):
    """The reader's position no longer exists in the log (offset out of range): the chain must halt."""


class LogReader(Protocol):
    def poll(self, timeout: float) -> LogRecord | None:
        """The next record, or None if none arrived within timeout; raises LogLost."""

    def close(self) -> None: ...


class PartitionLog(Protocol):
    def ensure_topic(self) -> None:
        """Create the channel's topic if missing; raises LogUnavailable."""

    def append(self, value: bytes) -> int:
        """Append one record and wait for the acknowledgement; its offset, or LogUnavailable."""

    def reader(self, start: int | None) -> LogReader:
        """A reader from offset `start`, or from the oldest offset when None."""
