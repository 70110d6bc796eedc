"""Shared builders for the chain, Broadcast and Deliver tests (in-memory log, file ledger)."""
from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from osn.blocks import header_hash
from osn.chain import Chain
from fabric.envelopes import make_envelope
from fabric.identity import NamedIdentity
from osn.ledger import Ledger
from osn.memory_log import MemoryLog
from osn.settings import BatchSettings


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def envelope(tx: str, channel: str = "ch0", creator: str = "alice", data: bytes = b"") -> bytes:
    return make_envelope(channel, NamedIdentity(creator), data, label=tx).SerializeToString()


def new_chain(path: Path, log: MemoryLog, clock: Callable[[], float] = time.monotonic,
              count: int = 3, preferred: int = 10_000, timeout_ms: int = 1000) -> Chain:
    batch = BatchSettings(max_message_count=count, absolute_max_bytes=1_000_000,
                          preferred_max_bytes=preferred, batch_timeout_ms=timeout_ms)
    return Chain("ch0", log, Ledger(path), batch, clock=clock, retry_interval_s=0.01)


def hashes(ledger: Ledger) -> list[str]:
    return [header_hash(ledger.block(i).header).hex() for i in range(ledger.height)]


def tx_count(ledger: Ledger) -> int:
    return sum(len(ledger.block(i).data.data) for i in range(ledger.height))


def eventually(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.005)
