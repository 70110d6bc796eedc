"""Fabric's block cutter: decides, from the ordered messages alone, where batches end.

Pure and deterministic: every OSN feeds it the same partition, so every OSN cuts the
same batches. The batch timer lives in the chain; here only count and bytes.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Message:
    """A marshalled envelope and its size as Fabric counts it: len(payload) + len(signature)."""

    raw: bytes
    size: int


@dataclass
class BlockCutter:
    max_message_count: int
    preferred_max_bytes: int
    _pending: list[Message] = field(default_factory=list)
    _pending_bytes: int = 0

    @property
    def pending(self) -> bool:
        return bool(self._pending)

    def ordered(self, msg: Message) -> tuple[list[list[Message]], bool]:
        """Add one message; returns the batches cut by it (0, 1 or 2) and whether any remain pending."""
        batches: list[list[Message]] = []
        if msg.size > self.preferred_max_bytes:
            # Fabric isolates an oversized message: the pending batch is cut first, then the
            # message becomes a batch of its own (blockcutter.Ordered).
            if self._pending:
                batches.append(self.cut())
            batches.append([msg])
            return batches, False
        if self._pending_bytes + msg.size > self.preferred_max_bytes:
            batches.append(self.cut())
        self._pending.append(msg)
        self._pending_bytes += msg.size
        if len(self._pending) >= self.max_message_count:
            batches.append(self.cut())
        return batches, self.pending

    def reconfigure(self, max_message_count: int, preferred_max_bytes: int) -> None:
        """New batch settings from a config block, for the batches after it (the pending one
        was cut before the config block)."""
        self.max_message_count, self.preferred_max_bytes = max_message_count, preferred_max_bytes

    def cut(self) -> list[Message]:
        """The pending batch (possibly empty), which is then cleared."""
        batch, self._pending, self._pending_bytes = self._pending, [], 0
        return batch
