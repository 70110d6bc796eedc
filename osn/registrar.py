"""The channels this OSN orders: for each, its ledger file and its chain (Fabric's registrar)."""
from __future__ import annotations

import time
from collections.abc import Callable

from osn.chain import Chain
from osn.ledger import Ledger
from osn.partition_log import PartitionLog
from osn.settings import OsnSettings


class Registrar:
    def __init__(self, settings: OsnSettings, partition_of: Callable[[str], PartitionLog],
                 clock: Callable[[], float] = time.monotonic, retry_interval_s: float = 1.0) -> None:
        self.chains: dict[str, Chain] = {}
        for channel in settings.channels:
            ledger = Ledger(settings.ledger_dir / f"{channel}.blocks")
            self.chains[channel] = Chain(channel, partition_of(channel), ledger, settings.batch,
                                         clock=clock, retry_interval_s=retry_interval_s)

    def start(self) -> None:
        for chain in self.chains.values():
            chain.start()

    def stop(self) -> None:
        for chain in self.chains.values():
            chain.stop()
        for chain in self.chains.values():
            chain.ledger.close()

    def unhealthy(self) -> dict[str, str]:
        """Channel -> why it cannot order now; empty when every chain has started and none halted."""
        return {name: chain.halted or "not started" for name, chain in self.chains.items() if not chain.started}
