"""A channel's ledger: an append-only file of blocks, each fsynced before anyone may read it.

Record = 4-byte big-endian length, 4-byte CRC-32 of the block, the marshalled common.Block.
A crash can leave only the last record torn (short, or with a CRC that does not match);
opening the ledger cuts it off, so it is never served and the next append continues the
chain from the last whole block. Damage anywhere else is refused (LedgerCorrupt).
"""
from __future__ import annotations

import logging
import os
import struct
import threading
import zlib
from pathlib import Path

from osn.blocks import data_hash, header_hash, persisted_offset
from osn.wire.common import common_pb2
from osn.wire.orderer import kafka_pb2

log = logging.getLogger(__name__)

_RECORD_HEAD = struct.Struct(">II")


class LedgerCorrupt(RuntimeError):
    """A record other than the last one is damaged: refusing to guess which blocks are right."""


def _kafka_metadata(block: common_pb2.Block) -> kafka_pb2.KafkaMetadata:
    metadata = common_pb2.Metadata.FromString(block.metadata.metadata[common_pb2.ORDERER])
    return kafka_pb2.KafkaMetadata.FromString(metadata.value)


def _last_config(block: common_pb2.Block, before: int) -> int:
    """The block's LAST_CONFIG index, `before` where it has none."""
    metadata = block.metadata.metadata
    if len(metadata) <= common_pb2.LAST_CONFIG or not metadata[common_pb2.LAST_CONFIG]:
        return before
    value = common_pb2.Metadata.FromString(metadata[common_pb2.LAST_CONFIG]).value
    return common_pb2.LastConfig.FromString(value).index if value else before


class Ledger:
    """One channel's blocks; thread-safe; readers can wait for a height."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        created = not path.exists()
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        if created:
            dir_fd = os.open(path.parent, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
        self._records: list[tuple[int, int]] = []  # (position of block bytes, length)
        self._last_hash = b""
        self._last_offset: int | None = None
        self._last_original_offset = 0
        self._last_config = 0
        self._changed = threading.Condition()
        self._closed = False
        self._recover()

    def _recover(self) -> None:
        size = os.fstat(self._fd).st_size
        pos = 0
        while pos < size:
            head = os.pread(self._fd, _RECORD_HEAD.size, pos)
            length, crc = _RECORD_HEAD.unpack(head) if len(head) == _RECORD_HEAD.size else (size, 0)
            end = pos + _RECORD_HEAD.size + length
            body = os.pread(self._fd, length, pos + _RECORD_HEAD.size) if end <= size else b""
            whole = end <= size and zlib.crc32(body) == crc
            if not whole:
                if end < size:
                    raise LedgerCorrupt(f"{self.path}: record at byte {pos} is damaged but not the last one")
                log.warning("%s: discarding torn last record at byte %d (%d bytes)", self.path, pos, size - pos)
                os.ftruncate(self._fd, pos)
                os.fsync(self._fd)
                break
            block = common_pb2.Block.FromString(body)
            if block.header.number != len(self._records) or block.header.previous_hash != self._last_hash:
                raise LedgerCorrupt(f"{self.path}: block at byte {pos} does not continue the chain")
            self._remember(block, pos + _RECORD_HEAD.size, length)
            pos = end

    def _remember(self, block: common_pb2.Block, position: int, length: int) -> None:
        self._records.append((position, length))
        self._last_hash = header_hash(block.header)
        self._last_offset = persisted_offset(block)
        if self._last_offset is not None:
            self._last_original_offset = _kafka_metadata(block).last_original_offset_processed
        self._last_config = _last_config(block, self._last_config)

    @property
    def height(self) -> int:
        return len(self._records)

    @property
    def last_original_offset(self) -> int:
        """The newest original offset of a re-submitted message ordered (Fabric's
        LastOriginalOffsetProcessed), 0 for none: a chain restarted on this ledger resumes it."""
        return self._last_original_offset

    @property
    def last_offset(self) -> int | None:
        """Offset of the last message persisted, None while the ledger holds no block."""
        return self._last_offset

    def append(self, envelopes: list[bytes], last_offset: int, last_original_offset: int = 0,
               config: bool = False) -> common_pb2.Block:
        """Make the next block from a batch, write it, fsync it, then make it visible. Its
        LAST_CONFIG metadata names the newest config block (this one, for `config`), as
        Fabric's block writer does, so that a reader can find the channel's config."""
        block = common_pb2.Block()
        block.header.number = self.height
        block.header.previous_hash = self._last_hash
        block.header.data_hash = data_hash(envelopes)
        block.data.data.extend(envelopes)
        kafka_metadata = kafka_pb2.KafkaMetadata(last_offset_persisted=last_offset,
                                                 last_original_offset_processed=last_original_offset)
        # Fabric keeps the consenter's metadata at index ORDERER of the metadata array.
        block.metadata.metadata.extend([b""] * (common_pb2.ORDERER + 1))
        block.metadata.metadata[common_pb2.ORDERER] = common_pb2.Metadata(
            value=kafka_metadata.SerializeToString()).SerializeToString()
        last_config = block.header.number if config else self._last_config
        block.metadata.metadata[common_pb2.LAST_CONFIG] = common_pb2.Metadata(
            value=common_pb2.LastConfig(index=last_config).SerializeToString()).SerializeToString()
        return self.write_block(block)

    def write_block(self, block: common_pb2.Block) -> common_pb2.Block:
        """Write a block made elsewhere (e.g. a channel's genesis block from Fabric's
        registrar) as the next one; it must continue the chain."""
        if block.header.number != self.height or block.header.previous_hash != self._last_hash:
            raise ValueError(f"{self.path}: block {block.header.number} does not continue the chain "
                             f"at height {self.height}")
        body = block.SerializeToString()
        position = os.lseek(self._fd, 0, os.SEEK_END) + _RECORD_HEAD.size
        os.write(self._fd, _RECORD_HEAD.pack(len(body), zlib.crc32(body)) + body)
        os.fsync(self._fd)
        with self._changed:
            self._remember(block, position, len(body))
            self._changed.notify_all()
        return block

    def block(self, number: int) -> common_pb2.Block:
        position, length = self._records[number]
        return common_pb2.Block.FromString(os.pread(self._fd, length, position))

    def wait_for_height(self, height: int, timeout: float) -> bool:
        """True once the ledger holds at least `height` blocks; False on timeout or close."""
        with self._changed:
            return self._changed.wait_for(lambda: self.height >= height or self._closed, timeout) \
                and self.height >= height

    def close(self) -> None:
        with self._changed:
            self._closed = True
            self._changed.notify_all()
        os.close(self._fd)
