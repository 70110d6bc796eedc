"""Conformance of the model: replay a channel's Kafka partition through the model's consenter
and compare the blocks it cuts with the blocks Fabric's real orderers cut from the same log.

Pure: no Kafka, no cluster. Input is what the real orderers wrote to the channel's partition,
[(offset, raw KafkaMessage bytes)] from the oldest offset, the real orderers' block 0 of the
channel (its genesis block, written by Fabric's registrar, without consenter metadata) and the
channel's batch settings. The replay runs the model's own Chain (chain.py, block_cutter.py,
ledger.py) record by record, exactly as a model OSN consuming that partition would, with no
batch timer: in a log, timer cuts are the TIME_TO_CUT messages.

Modelled: REGULAR messages of class NORMAL and CONFIG (a config block alone, after the
pending batch; the channel then under the config it carries), re-submitted ones (original
offset set: ordered unless their original offset was processed already), and ones validated
under an older config sequence (not ordered where they are read: Fabric re-validates them and
re-submits them, and the log holds what it re-submitted, so the replay's chain re-submits
nothing); TIME_TO_CUT; CONNECT. Only a pre-v1.1 UNKNOWN class is outside the model: the replay
stops before it and the comparison covers only the blocks cut before it (see README.md).
"""
from __future__ import annotations

import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from google.protobuf.message import DecodeError

from osn.block_cutter import BlockCutter, Message
from osn.chain import Chain, ChainHalted
from fabric.client import block_summary
from osn.envelopes import tx_label_of
from osn.ledger import Ledger
from osn.memory_log import MemoryLog
from osn.partition_log import LogRecord
from osn.settings import BatchSettings
from osn.wire.common import common_pb2, configtx_pb2
from osn.wire.orderer import kafka_pb2

# Why a block was cut. A PreferredMaxBytes cut is either the pending batch cut because the
# next message would overflow it (or is itself oversized), or an oversized message isolated.
TTC, COUNT, PREFERRED, OVERSIZED, CONFIG = "ttc", "count", "preferred_max_bytes", "oversized", "config"
CUT_REASONS = (TTC, COUNT, PREFERRED, OVERSIZED, CONFIG)
FIELDS = ("number", "hash", "previous_hash", "data_hash", "txs", "last_offset")

CutterFactory = Callable[[BatchSettings], BlockCutter]


def config_sequence(genesis: common_pb2.Block) -> int:
    """The config sequence of a channel's genesis block (its one CONFIG envelope)."""
    envelope = common_pb2.Envelope.FromString(genesis.data.data[0])
    payload = common_pb2.Payload.FromString(envelope.payload)
    return configtx_pb2.ConfigEnvelope.FromString(payload.data).config.sequence


def describe(value: bytes) -> str:
    """One Kafka message of a channel partition, in a few words."""
    msg = kafka_pb2.KafkaMessage()
    try:
        msg.ParseFromString(value)
    except DecodeError:
        return f"not a KafkaMessage ({len(value)} B)"
    kind = msg.WhichOneof("Type")
    if kind == "time_to_cut":
        return f"TIME_TO_CUT block {msg.time_to_cut.block_number}"
    if kind == "connect":
        return "CONNECT"
    if kind == "regular":
        r = msg.regular
        extra = "" if r.original_offset == 0 else f" original_offset={r.original_offset}"
        try:
            env = common_pb2.Envelope.FromString(r.payload)
            size = f"{len(env.payload) + len(env.signature)} B"
        except DecodeError:
            size = "not an Envelope"
        return (f"REGULAR {kafka_pb2.KafkaMessageRegular.Class.Name(getattr(r, 'class'))} "
                f"{tx_label_of(r.payload)!r} {size} config_seq={r.config_seq}{extra}")
    return "unknown KafkaMessage type"


class _RecordingCutter:
    """Wraps the cutter under test; remembers what its last `ordered` call did, to name the cut."""

    def __init__(self, inner: BlockCutter) -> None:
        self.inner = inner
        self.last: tuple[int, int, bool] | None = None  # (message size, batches, pending)

    @property
    def pending(self) -> bool:
        return self.inner.pending

    def ordered(self, msg: Message) -> tuple[list[list[Message]], bool]:
        batches, pending = self.inner.ordered(msg)
        self.last = (msg.size, len(batches), pending)
        return batches, pending

    def cut(self) -> list[Message]:
        return self.inner.cut()

    def reconfigure(self, max_message_count: int, preferred_max_bytes: int) -> None:
        self.inner.reconfigure(max_message_count, preferred_max_bytes)


def _regular_reasons(size: int, batches: int, pending: bool, preferred: int) -> list[str]:
    if size > preferred:
        return [PREFERRED, OVERSIZED][-batches:]
    if batches == 2:
        return [PREFERRED, COUNT]
    return [PREFERRED if pending else COUNT]


@dataclass
class ReplayedBlock:
    block: common_pb2.Block
    summary: dict
    cut_by: str       # one of CUT_REASONS
    cut_at: int       # offset of the message whose processing cut it


@dataclass
class Replay:
    channel: str
    genesis: dict                     # block_summary of block 0 (the seed)
    blocks: list[ReplayedBlock]       # blocks 1.. as the model cut them
    messages: dict[int, bytes]        # offset -> raw KafkaMessage
    consumed_to: int                  # last offset the model processed (-1: none)
    out_of_scope: tuple[int, str] | None = None   # (offset, why) the replay stopped before
    halted: tuple[int, str] | None = None         # (offset, why) the model's chain halted
    skipped: list[tuple[int, str]] = field(default_factory=list)  # unreadable records the chain skipped

    def counts(self) -> dict[str, int]:
        c = Counter(b.cut_by for b in self.blocks)
        return {reason: c.get(reason, 0) for reason in CUT_REASONS}


def replay(channel: str, messages: Iterable[tuple[int, bytes]], genesis: common_pb2.Block,
           batch: BatchSettings, cutter: CutterFactory | None = None,
           workdir: Path | None = None) -> Replay:
    """Run the partition through the model's Chain, seeded with the real block 0."""
    records = sorted(messages)
    sequence = config_sequence(genesis)
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        ledger = Ledger(Path(tmp) / f"{channel}.blocks")
        try:
            ledger.write_block(genesis)
            inner = cutter(batch) if cutter else BlockCutter(batch.max_message_count, batch.preferred_max_bytes)
            recording = _RecordingCutter(inner)
            chain = Chain(channel, MemoryLog(), ledger, batch, clock=lambda: 0.0, cutter=recording,  # type: ignore[arg-type]
                          config_seq=sequence, resubmit=lambda message: None)
            result = Replay(channel, block_summary(genesis), [], dict(records), -1)
            for offset, value in records:
                why = _out_of_scope(value, sequence)
                if why:
                    result.out_of_scope = (offset, why)
                    break
                recording.last = None
                try:
                    blocks = chain.process(LogRecord(offset, value))
                except ChainHalted as exc:
                    result.halted = (offset, str(exc))
                    break
                result.consumed_to = offset
                if not blocks:
                    continue
                if _is_config(value):  # the pending batch, if any, then the config block
                    reasons = [CONFIG] * len(blocks)
                elif recording.last is None:  # a TIME_TO_CUT
                    reasons = [TTC] * len(blocks)
                else:
                    reasons = _regular_reasons(*recording.last, batch.preferred_max_bytes)
                for block, reason in zip(blocks, reasons, strict=True):
                    result.blocks.append(ReplayedBlock(block, block_summary(block), reason, offset))
            return result
        finally:
            ledger.close()


def _out_of_scope(value: bytes, sequence: int) -> str | None:
    msg = kafka_pb2.KafkaMessage()
    try:
        msg.ParseFromString(value)
    except DecodeError:
        return None  # the chain skips it, as Fabric does
    if msg.WhichOneof("Type") != "regular":
        return None
    cls = getattr(msg.regular, "class")
    if cls not in (kafka_pb2.KafkaMessageRegular.NORMAL, kafka_pb2.KafkaMessageRegular.CONFIG):
        return "a REGULAR message of class UNKNOWN (pre-v1.1 compatibility mode): not modelled"
    return None


def _is_config(value: bytes) -> bool:
    msg = kafka_pb2.KafkaMessage()
    try:
        msg.ParseFromString(value)
    except DecodeError:
        return False
    return msg.WhichOneof("Type") == "regular" and getattr(msg.regular, "class") == kafka_pb2.KafkaMessageRegular.CONFIG


# -- comparison ---------------------------------------------------------------------------


@dataclass
class Difference:
    channel: str
    osn: str
    number: int
    fields: list[str]
    real: dict | None
    model: ReplayedBlock | None
    offsets: list[tuple[int, str]]   # the messages involved: offset, description

    def __str__(self) -> str:
        lines = [f"channel {self.channel}, {self.osn}: block {self.number} differs"
                 + (f" in {', '.join(self.fields)}" if self.fields else "")]
        lines.append(f"  real  (Fabric): {_block_line(self.real)}")
        model = self.model.summary if self.model else None
        cut = f" [cut by {self.model.cut_by} at offset {self.model.cut_at}]" if self.model else ""
        lines.append(f"  model (replay): {_block_line(model)}{cut}")
        if self.offsets:
            lines.append("  offsets involved:")
            lines.extend(f"    {offset}: {what}" for offset, what in self.offsets)
        return "\n".join(lines)


def _block_line(summary: dict | None) -> str:
    if summary is None:
        return "(no such block)"
    return (f"number={summary['number']} hash={summary['hash'][:16]} previous={summary['previous_hash'][:16]} "
            f"data_hash={summary['data_hash'][:16]} last_offset={summary['last_offset']} "
            f"txs({len(summary['txs'])})={summary['txs']}")


def _involved(result: Replay, number: int, real: dict | None, model: dict | None, limit: int = 40) -> list[tuple[int, str]]:
    """The messages from the end of the last agreed block to the later of the two blocks' ends."""
    previous = result.blocks[number - 2].summary["last_offset"] if number >= 2 and len(result.blocks) >= number - 1 else -1
    ends = [b["last_offset"] for b in (real, model) if b is not None]
    end = max(ends) if ends else previous + 1
    end = max(end, previous + 1)
    offsets = [o for o in sorted(result.messages) if previous < o <= end + 1]
    shown = offsets if len(offsets) <= limit else offsets[:limit // 2] + offsets[-limit // 2:]
    out = [(o, describe(result.messages[o])) for o in shown]
    if len(shown) < len(offsets):
        out.insert(limit // 2, (-1, f"... {len(offsets) - len(shown)} more ..."))
    return out


@dataclass
class Comparison:
    channel: str
    osn: str
    compared: int                 # blocks equal to the replay (block 0 excluded: it is the seed)
    not_compared: int             # real blocks after an out-of-scope message
    difference: Difference | None


def compare(result: Replay, real_chain: Sequence[dict], osn: str = "osn", complete: bool = True) -> Comparison:
    """Compare one real orderer's chain (block summaries, block 0 first) with the replay.

    complete=True: the orderer has consumed the whole log the replay was given, so a block the
    model cut beyond its height is a difference too."""
    compared = 0
    if not real_chain or real_chain[0]["hash"] != result.genesis["hash"]:
        first = real_chain[0] if real_chain else None
        diff = Difference(result.channel, osn, 0, ["hash"], first, None, [])
        return Comparison(result.channel, osn, 0, len(real_chain), diff)
    stop = result.out_of_scope[0] if result.out_of_scope else None
    for real in real_chain[1:]:
        number = real["number"]
        if stop is not None and real["last_offset"] >= stop and number > len(result.blocks):
            return Comparison(result.channel, osn, compared, len(real_chain) - number, None)
        model = result.blocks[number - 1] if number - 1 < len(result.blocks) else None
        fields = [f for f in FIELDS if model is None or model.summary[f] != real[f]]
        if fields:
            return Comparison(result.channel, osn, compared, 0, Difference(
                result.channel, osn, number, fields if model else [], real, model,
                _involved(result, number, real, model.summary if model else None)))
        compared += 1
    if complete and len(result.blocks) > len(real_chain) - 1:
        extra = result.blocks[len(real_chain) - 1]
        number = extra.summary["number"]
        return Comparison(result.channel, osn, compared, 0, Difference(
            result.channel, osn, number, [], None, extra, _involved(result, number, None, extra.summary)))
    return Comparison(result.channel, osn, compared, 0, None)


def model_chain(result: Replay) -> list[dict]:
    """The replay as a chain of block summaries, block 0 first (for the reverse direction)."""
    return [result.genesis] + [b.summary for b in result.blocks]
