"""An OSN served in-process on 127.0.0.1 over in-memory logs, with a client pointed at it.

The batch timeout is long, so blocks are cut by count only and tests know every cut point.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from fabric.client import OsnClient
from fabric.identity import NamedIdentity
from osn.memory_log import MemoryLog
from osn.server import Osn
from osn.settings import OsnSettings

CHANNELS = ["ch0", "ch1"]


@dataclass
class RunningOsn:
    osn: Osn
    address: str
    logs: dict[str, MemoryLog]
    client: OsnClient


@contextmanager
def running_osn(ledger_dir: Path, writers: dict[str, list[str]] | None = None, refusing: str | None = None,
                max_message_count: int = 2, absolute_max_bytes: int = 4096, tls: dict | None = None,
                identity: NamedIdentity = NamedIdentity("alice")) -> Iterator[RunningOsn]:
    """`tls`: the OSN's settings.tls (None: plain gRPC); the client signs and connects as `identity`."""
    settings = OsnSettings.model_validate({
        "name": "osn1", "listen": "127.0.0.1:0", "operations_listen": "127.0.0.1:0",
        "kafka_bootstrap_servers": ["127.0.0.1:1"], "ledger_dir": str(ledger_dir), "channels": CHANNELS,
        "batch": {"max_message_count": max_message_count, "absolute_max_bytes": absolute_max_bytes,
                  "preferred_max_bytes": 2048, "batch_timeout_ms": 60_000},
        "writers": writers or {},
        "tls": tls,
    })
    logs = {channel: MemoryLog() for channel in CHANNELS}
    for log in logs.values():
        log.refusing = refusing
    osn = Osn(settings, logs.__getitem__, retry_interval_s=0.01)
    osn.start()
    if refusing is None:
        for chain in osn.registrar.chains.values():
            assert chain.wait_started(5)
    client = OsnClient(identity)
    try:
        yield RunningOsn(osn, f"127.0.0.1:{osn.port}", logs, client)
    finally:
        client.close()
        osn.stop()
