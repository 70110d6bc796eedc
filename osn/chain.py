"""One channel's Kafka consenter, after Fabric v1.x orderer/consensus/kafka/chain.go.

Every OSN reads the channel's partition in the same order and cuts blocks only on what it
reads (the cutter's count and bytes, and the first TTC for lastCut+1), so all OSNs cut at
the same offsets. The batch timer only decides when this OSN *posts* a TTC.

Config messages (a channel config update Fabric's Broadcast turned into a CONFIG envelope):
the pending batch is cut, the config envelope becomes a block of its own, and the channel
takes its config sequence and batch settings. A message stamped with an older config
sequence is re-validated and re-submitted with its original offset (Fabric 1.4.2+'s
Resubmission capability) instead of being ordered where it was read; one read again with an
original offset not after the last one processed is dropped as already done. The model
keeps no policies: its re-validation is a pass, and `resubmit` decides what a re-submission
does (produce to the partition on a live OSN; nothing in the conformance replay, where the
log already holds what Fabric re-submitted, or nothing if Fabric's re-validation refused it).
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from google.protobuf.message import DecodeError

from osn.batch_config import BATCH_VALUES, batch_value
from osn.block_cutter import BlockCutter, Message
from osn.ledger import Ledger
from osn.partition_log import LogLost, LogRecord, LogUnavailable, PartitionLog
from osn.settings import BatchSettings
from osn.wire.common import common_pb2, configtx_pb2
from osn.wire.orderer import configuration_pb2 as orderer_configuration_pb2
from osn.wire.orderer import kafka_pb2

log = logging.getLogger(__name__)

POLL_INTERVAL_S = 0.05


class ChainHalted(Exception):
    """The partition holds something no correct OSN can follow; the chain stops consuming."""


class ChainNotReady(Exception):
    """The chain cannot take a message now: its start phase has not completed."""


def regular_message(envelope: bytes, config_seq: int = 0, original_offset: int = 0,
                    cls: int = kafka_pb2.KafkaMessageRegular.NORMAL) -> bytes:
    """A NORMAL (or CONFIG) message as Fabric's Broadcast produces it: stamped with the config
    sequence it was validated under (a Fabric orderer re-validates and re-orders one with an
    older sequence), and, re-submitted, with the offset it was first read at."""
    return kafka_pb2.KafkaMessage(regular=kafka_pb2.KafkaMessageRegular(
        payload=envelope, config_seq=config_seq, original_offset=original_offset,
        **{"class": cls})).SerializeToString()


def channel_config(envelope: common_pb2.Envelope) -> configtx_pb2.Config:
    """The channel config a CONFIG envelope carries."""
    payload = common_pb2.Payload.FromString(envelope.payload)
    return configtx_pb2.ConfigEnvelope.FromString(payload.data).config


def batch_settings_of(config: configtx_pb2.Config, before: BatchSettings) -> BatchSettings:
    """The Orderer group's BatchSize and BatchTimeout in `config` (`before`'s where absent)."""
    values = config.channel_group.groups["Orderer"].values
    changed = dict(before.model_dump())
    if BATCH_VALUES["max_message_count"] in values:
        size = orderer_configuration_pb2.BatchSize.FromString(values["BatchSize"].value)
        changed.update(max_message_count=size.max_message_count, absolute_max_bytes=size.absolute_max_bytes,
                       preferred_max_bytes=size.preferred_max_bytes)
    if BATCH_VALUES["batch_timeout_ms"] in values:
        changed["batch_timeout_ms"] = batch_value(config, "batch_timeout_ms")[0]
    return BatchSettings.model_validate(changed)


def time_to_cut_message(block_number: int) -> bytes:
    return kafka_pb2.KafkaMessage(
        time_to_cut=kafka_pb2.KafkaMessageTimeToCut(block_number=block_number)).SerializeToString()


def connect_message() -> bytes:
    return kafka_pb2.KafkaMessage(connect=kafka_pb2.KafkaMessageConnect()).SerializeToString()


class Chain:
    """Consumes the channel's partition into the ledger; `order` produces to it."""

    def __init__(self, channel: str, partition: PartitionLog, ledger: Ledger, batch: BatchSettings,
                 clock: Callable[[], float] = time.monotonic, retry_interval_s: float = 1.0,
                 cutter: BlockCutter | None = None, config_seq: int = 0,
                 resubmit: Callable[[bytes], object] | None = None) -> None:
        self.channel = channel
        self.batch = batch
        # Fabric's lastOriginalOffsetProcessed: a re-submitted message whose original offset is
        # not after it was ordered already.
        self.last_original_offset = ledger.last_original_offset
        # What re-submitting a re-validated message does (the module's docstring): by default,
        # produce it to the partition again, as Fabric does.
        self._resubmit = resubmit if resubmit is not None else (lambda message: self._log.append(message))
        # The channel's config sequence, stamped on every message ordered: 0 on the model's own
        # channels (no config block); that of the genesis block when seeded with a Fabric one.
        self.config_seq = config_seq
        self.ledger = ledger
        self._log = partition
        # `cutter` lets a test (or the conformance replay) put a different cutter in.
        self._cutter = cutter or BlockCutter(batch.max_message_count, batch.preferred_max_bytes)
        self._batch_timeout_s = batch.batch_timeout_ms / 1000
        self._clock = clock
        self._retry_interval_s = retry_interval_s
        self._timer_deadline: float | None = None
        self.last_cut = ledger.height - 1  # Fabric's lastCutBlockNumber
        self.halted: str | None = None  # why the consenter stopped consuming, for good
        # Fabric's errorChan closed: strict Deliver requests are refused. Fabric closes it when
        # the partition lost the consumer's position (ErrOffsetOutOfRange), not when a TTC
        # ends its consumer: those chains stop cutting, yet strict readers are still served.
        self.errored = False
        self._started = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    # -- ingress ----------------------------------------------------------------------

    @property
    def started(self) -> bool:
        return self._started.is_set() and self.halted is None

    def order(self, envelope: bytes) -> int:
        """Produce a validated envelope to the partition; returns after Kafka acknowledged it.

        A halted chain still takes envelopes, as Fabric 1.4.12's does (its enqueue looks only
        at whether the start phase completed and the OSN is not shutting down): they reach
        Kafka and Broadcast answers SUCCESS, though no block of this OSN will hold them."""
        if not self._started.is_set():
            raise ChainNotReady(f"chain {self.channel} has not started yet")
        return self._log.append(regular_message(envelope, self.config_seq))

    # -- the consenter loop -----------------------------------------------------------

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=f"chain-{self.channel}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join()

    def wait_started(self, timeout: float) -> bool:
        return self._started.wait(timeout)

    def _retry(self, what: str, attempt: Callable[[], object]) -> bool:
        while not self._stopping.is_set():
            try:
                attempt()
                return True
            except LogUnavailable as exc:
                log.warning("[channel %s] %s failed (%s); retrying in %.1fs", self.channel, what, exc,
                            self._retry_interval_s)
                self._stopping.wait(self._retry_interval_s)
        return False

    def _run(self) -> None:
        try:
            self._consume()
        except (ChainHalted, LogLost) as exc:
            # errored first: a reader that sees the chain halted sees why too.
            self.errored = isinstance(exc, LogLost)
            self.halted = str(exc)
            log.error("[channel %s] consenter halted: %s", self.channel, exc)
        except Exception as exc:  # e.g. the ledger's disk failed: stop ordering, say why, stay up for Deliver
            self.errored = True
            self.halted = f"{type(exc).__name__}: {exc}"
            log.exception("[channel %s] consenter halted by an unexpected error", self.channel)

    def _consume(self) -> None:
        if not self._retry("creating the topic", self._log.ensure_topic):
            return
        # Fabric posts CONNECT before consuming, so the partition is never empty when read.
        if not self._retry("posting CONNECT", lambda: self._log.append(connect_message())):
            return
        start = None if self.ledger.last_offset is None else self.ledger.last_offset + 1
        reader = self._log.reader(start)
        log.info("[channel %s] started: height %d, consuming from offset %s", self.channel,
                 self.ledger.height, "oldest" if start is None else start)
        self._started.set()
        try:
            while not self._stopping.is_set():
                record = reader.poll(self._poll_timeout())
                if record is not None:
                    self.process(record)
                self.tick()
        finally:
            reader.close()

    def _poll_timeout(self) -> float:
        if self._timer_deadline is None:
            return POLL_INTERVAL_S
        return max(0.0, min(POLL_INTERVAL_S, self._timer_deadline - self._clock()))

    def tick(self) -> None:
        """On batch timer expiry, post TTC(lastCut+1); cutting waits until a TTC is read back."""
        if self._timer_deadline is None or self._clock() < self._timer_deadline:
            return
        self._timer_deadline = None
        try:
            self._log.append(time_to_cut_message(self.last_cut + 1))
        except LogUnavailable as exc:
            # As in Fabric, a failed TTC post is logged, not fatal: the next message restarts the timer.
            log.error("[channel %s] posting TTC for block %d failed: %s", self.channel, self.last_cut + 1, exc)

    def process(self, record: LogRecord) -> list[common_pb2.Block]:
        """Apply one record of the partition; the blocks it cut (written to the ledger)."""
        msg = kafka_pb2.KafkaMessage()
        try:
            msg.ParseFromString(record.value)
        except DecodeError:
            log.error("[channel %s] skipping offset %d: not a KafkaMessage", self.channel, record.offset)
            return []
        kind = msg.WhichOneof("Type")
        if kind == "regular":
            return self._regular_message(msg.regular, record.offset)
        if kind == "time_to_cut":
            return self._time_to_cut(msg.time_to_cut.block_number, record.offset)
        # CONNECT (and anything unknown) only moves the offset on.
        return []

    def _regular_message(self, r: kafka_pb2.KafkaMessageRegular, offset: int) -> list[common_pb2.Block]:
        """Fabric's processRegular with the Resubmission capability (V1_4_2)."""
        cls = getattr(r, "class")
        if cls not in (kafka_pb2.KafkaMessageRegular.NORMAL, kafka_pb2.KafkaMessageRegular.CONFIG):
            raise ChainHalted(f"a REGULAR message of class {cls} at offset {offset} (pre-v1.1 compatibility mode)")
        if r.original_offset and r.original_offset <= self.last_original_offset:
            log.debug("[channel %s] dropping re-submitted offset %d: original offset %d processed already",
                      self.channel, offset, r.original_offset)
            return []
        if r.config_seq < self.config_seq:
            # Re-validated (the model keeps no policies: it passes), re-submitted stamped with
            # the current sequence and this offset, and ordered when read again.
            self._resubmit(regular_message(r.payload, self.config_seq, offset, cls))
            return []
        # Fabric's newOffset: a re-submitted message's original offset, else the last one processed.
        newest = r.original_offset or self.last_original_offset
        if cls == kafka_pb2.KafkaMessageRegular.CONFIG:
            return self._config(r.payload, offset, newest)
        return self._regular(r.payload, offset, newest)

    def _config(self, payload: bytes, offset: int, newest: int) -> list[common_pb2.Block]:
        """Cut what is pending (its block ends at the offset before), then the config envelope
        alone; the channel then runs under the config it carries."""
        try:
            config = channel_config(common_pb2.Envelope.FromString(payload))
        except DecodeError:
            log.error("[channel %s] skipping offset %d: not a config envelope", self.channel, offset)
            return []
        blocks = []
        pending = self._cutter.cut()
        if pending:
            blocks.append(self._write(pending, offset - 1))
        self.last_original_offset = newest
        blocks.append(self._write([Message(payload, 0)], offset, config=True))
        self._timer_deadline = None
        self.config_seq = config.sequence
        self.batch = batch_settings_of(config, self.batch)
        self._cutter.reconfigure(self.batch.max_message_count, self.batch.preferred_max_bytes)
        self._batch_timeout_s = self.batch.batch_timeout_ms / 1000
        return blocks

    def _regular(self, payload: bytes, offset: int, newest: int | None = None) -> list[common_pb2.Block]:
        """`newest`: the original offset processed once this message is (Fabric's newOffset);
        a block that ends before the message keeps the one before."""
        newest = self.last_original_offset if newest is None else newest
        envelope = common_pb2.Envelope()
        try:
            envelope.ParseFromString(payload)
        except DecodeError:
            log.error("[channel %s] skipping offset %d: payload is not an Envelope", self.channel, offset)
            return []
        batches, pending = self._cutter.ordered(Message(payload, len(envelope.payload) + len(envelope.signature)))
        # Fabric's timer rule: start it when something becomes pending and none runs, stop it
        # when nothing is pending; a cut that leaves a pending message keeps the running timer.
        if self._timer_deadline is not None and not pending:
            self._timer_deadline = None
        elif self._timer_deadline is None and pending:
            self._timer_deadline = self._clock() + self._batch_timeout_s
        if not batches:
            self.last_original_offset = newest
            return []
        # When this message is not in the first batch (it is pending, or isolated in a second
        # batch), the first block ends at the previous offset: a restart re-reads this message.
        outside = pending or len(batches) == 2
        if not outside:
            self.last_original_offset = newest
        blocks = [self._write(batches[0], offset - 1 if outside else offset)]
        self.last_original_offset = newest
        if len(batches) == 2:
            blocks.append(self._write(batches[1], offset))
        return blocks

    def _time_to_cut(self, number: int, offset: int) -> list[common_pb2.Block]:
        expected = self.last_cut + 1
        if number < expected:
            log.debug("[channel %s] ignoring stale TTC for block %d at offset %d", self.channel, number, offset)
            return []
        if number > expected:
            raise ChainHalted(f"TTC for block {number} at offset {offset} is ahead of the next block {expected}")
        batch = self._cutter.cut()
        if not batch:
            # Fabric treats a current TTC with nothing pending as a bug and exits the chain too.
            raise ChainHalted(f"TTC for block {number} at offset {offset} with nothing pending")
        self._timer_deadline = None
        return [self._write(batch, offset)]

    def _write(self, batch: list[Message], last_offset: int, config: bool = False) -> common_pb2.Block:
        block = self.ledger.append([m.raw for m in batch], last_offset, self.last_original_offset, config=config)
        self.last_cut = block.header.number
        return block
