"""The conformance replay on synthetic logs: a log shaped as Fabric's orderers write it
(genesis block without consenter metadata, REGULAR NORMAL messages with config_seq, TTCs,
CONNECTs) replays into the blocks Fabric would cut, and a wrong model is caught at the first
differing block."""
from __future__ import annotations

import pytest

from osn.block_cutter import BlockCutter, Message
from osn.blocks import data_hash
from fabric.client import block_summary
from checkers.conformance import (CONFIG, COUNT, OVERSIZED, PREFERRED, TTC, compare, config_sequence, model_chain,
                                     replay)
from osn.settings import BatchSettings
from osn.wire.common import common_pb2, configtx_pb2
from osn.wire.orderer import kafka_pb2
from tests.orderer.chain_fixtures import envelope

SEQ = 1
BATCH = BatchSettings(max_message_count=3, absolute_max_bytes=1_000_000, preferred_max_bytes=1000,
                      batch_timeout_ms=500)


def genesis(sequence: int = SEQ) -> common_pb2.Block:
    """A channel's block 0 as Fabric's registrar writes it: one CONFIG envelope, no consenter metadata."""
    config = configtx_pb2.ConfigEnvelope(config=configtx_pb2.Config(sequence=sequence))
    payload = common_pb2.Payload(data=config.SerializeToString()).SerializeToString()
    env = common_pb2.Envelope(payload=payload).SerializeToString()
    block = common_pb2.Block()
    block.header.number = 0
    block.header.data_hash = data_hash([env])
    block.data.data.append(env)
    block.metadata.metadata.extend([b""] * 4)
    return block


def regular(tx: str, data: bytes = b"", config_seq: int = SEQ, original_offset: int = 0,
            cls: int = kafka_pb2.KafkaMessageRegular.NORMAL) -> bytes:
    return kafka_pb2.KafkaMessage(regular=kafka_pb2.KafkaMessageRegular(
        payload=envelope(tx, data=data), config_seq=config_seq, original_offset=original_offset,
        **{"class": cls})).SerializeToString()


def ttc(number: int) -> bytes:
    return kafka_pb2.KafkaMessage(time_to_cut=kafka_pb2.KafkaMessageTimeToCut(block_number=number)).SerializeToString()


def connect() -> bytes:
    return kafka_pb2.KafkaMessage(connect=kafka_pb2.KafkaMessageConnect()).SerializeToString()


def fabric_like_log() -> list[tuple[int, bytes]]:
    """CONNECTs from 3 orderers, a count cut, racing TTCs, an overflow cut, an oversized tx.
    Made once: envelopes carry a timestamp, and two logs made across a second's turn differ."""
    return list(_FABRIC_LIKE_LOG)


def _fabric_like_log() -> list[tuple[int, bytes]]:
    values = [connect(), connect(), connect(),
              regular("a1"), regular("a2"), regular("a3"),          # block 1: count, ends at 5
              regular("b1"), ttc(2), ttc(2), connect(),               # block 2: TTC at 7; 8 stale
              regular("c1", b"x" * 500), regular("c2", b"y" * 500),  # c2 overflows: block 3 = [c1], ends at 10
              regular("d1", b"z" * 2000),                             # oversized: block 4 = [c2] ends 11, block 5 = [d1] ends 12
              regular("e1"), ttc(6), ttc(5)]                          # block 6 by TTC at 14; TTC(5) stale
    return list(enumerate(values))


_FABRIC_LIKE_LOG = tuple(_fabric_like_log())


def test_replay_of_a_fabric_shaped_log_cuts_the_blocks_fabric_cuts():
    result = replay("ch0", fabric_like_log(), genesis(), BATCH)
    assert result.halted is None and result.out_of_scope is None
    chain = model_chain(result)
    assert [b["txs"] for b in chain[1:]] == [["a1", "a2", "a3"], ["b1"], ["c1"], ["c2"], ["d1"], ["e1"]]
    assert [b["last_offset"] for b in chain[1:]] == [5, 7, 10, 11, 12, 14]
    assert [b.cut_by for b in result.blocks] == [COUNT, TTC, PREFERRED, PREFERRED, OVERSIZED, TTC]
    assert result.counts() == {TTC: 2, COUNT: 1, PREFERRED: 2, OVERSIZED: 1, CONFIG: 0}
    assert chain[1]["previous_hash"] == chain[0]["hash"] and chain[0]["last_offset"] == -1


def test_a_real_chain_equal_to_the_replay_compares_equal():
    real = model_chain(replay("ch0", fabric_like_log(), genesis(), BATCH))
    outcome = compare(replay("ch0", fabric_like_log(), genesis(), BATCH), real, "osn1")
    assert outcome.difference is None and outcome.compared == 6


class IgnoresPreferredMaxBytes(BlockCutter):
    """A deliberately wrong model: cuts by count only."""

    def ordered(self, msg: Message) -> tuple[list[list[Message]], bool]:
        self._pending.append(msg)
        if len(self._pending) >= self.max_message_count:
            return [self.cut()], False
        return [], True


def test_a_cutter_that_ignores_preferred_max_bytes_is_caught_at_the_first_differing_block():
    real = model_chain(replay("ch0", fabric_like_log(), genesis(), BATCH))
    wrong = replay("ch0", fabric_like_log(), genesis(), BATCH,
                   cutter=lambda b: IgnoresPreferredMaxBytes(b.max_message_count, b.preferred_max_bytes))
    outcome = compare(wrong, real, "osn2")
    diff = outcome.difference
    assert diff is not None and outcome.compared == 2  # blocks 1 and 2 agree
    assert diff.number == 3 and {"hash", "data_hash", "txs", "last_offset"} <= set(diff.fields)
    assert diff.real["txs"] == ["c1"] and diff.model.summary["txs"] == ["c1", "c2", "d1"]
    text = str(diff)
    assert "block 3 differs" in text and "osn2" in text
    assert "10: REGULAR NORMAL 'c1'" in text and "12: REGULAR NORMAL 'd1'" in text


def test_a_block_the_model_cut_that_the_real_orderer_did_not_is_a_difference():
    result = replay("ch0", fabric_like_log(), genesis(), BATCH)
    real = model_chain(result)[:-1]
    diff = compare(result, real, "osn3").difference
    assert diff is not None and diff.number == 6 and diff.real is None
    assert compare(result, real, "osn3", complete=False).difference is None


def test_a_different_genesis_is_a_difference_at_block_0():
    result = replay("ch0", fabric_like_log(), genesis(), BATCH)
    other = model_chain(replay("ch0", fabric_like_log(), genesis(sequence=2), BATCH))
    assert compare(result, other).difference.number == 0


@pytest.mark.parametrize("message, why", [
    (regular("v10", cls=kafka_pb2.KafkaMessageRegular.UNKNOWN), "UNKNOWN"),
])
def test_messages_outside_the_model_stop_the_replay_and_only_later_blocks_are_skipped(message, why):
    log = fabric_like_log()[:9] + [(9, message), (10, ttc(3))]
    result = replay("ch0", log, genesis(), BATCH)
    assert result.out_of_scope[0] == 9 and why in result.out_of_scope[1]
    assert len(result.blocks) == 2
    # Fabric's chain went on past offset 9 (here: one more block); that block is not compared.
    later = block_summary(genesis())  # any content: it is past the out-of-scope offset
    real = model_chain(result) + [dict(later, number=3, last_offset=10)]
    outcome = compare(result, real)
    assert outcome.difference is None and outcome.compared == 2 and outcome.not_compared == 1


def test_a_ttc_ahead_of_the_next_block_halts_the_replay_as_it_halts_fabric():
    log = list(enumerate([connect(), regular("a"), ttc(5), regular("b")]))
    result = replay("ch0", log, genesis(), BATCH)
    assert result.halted and result.halted[0] == 2 and result.consumed_to == 1


def test_the_genesis_config_sequence_is_read_from_block_0():
    assert config_sequence(genesis(7)) == 7


def test_a_ledger_seeded_with_a_genesis_block_consumes_from_the_oldest_offset_and_cuts_block_1(tmp_path):
    from osn.chain import Chain
    from osn.ledger import Ledger
    from osn.memory_log import MemoryLog

    ledger = Ledger(tmp_path / "ch0.blocks")
    ledger.write_block(genesis())
    assert (ledger.height, ledger.last_offset) == (1, None)  # Fabric's getOffsets: empty metadata = oldest
    ledger.close()
    reopened = Ledger(tmp_path / "ch0.blocks")
    assert (reopened.height, reopened.last_offset) == (1, None)
    log = MemoryLog()
    chain = Chain("ch0", log, reopened, BATCH, config_seq=SEQ, retry_interval_s=0.01)
    assert chain.last_cut == 0
    chain.start()
    try:
        assert chain.wait_started(5)
        chain.order(envelope("t1"))
        sent = kafka_pb2.KafkaMessage.FromString(log.values()[-1]).regular
        assert sent.config_seq == SEQ and getattr(sent, "class") == kafka_pb2.KafkaMessageRegular.NORMAL
    finally:
        chain.stop()
        reopened.close()


def test_a_block_that_does_not_continue_the_chain_is_refused(tmp_path):
    from osn.ledger import Ledger

    ledger = Ledger(tmp_path / "ch0.blocks")
    block = genesis()
    block.header.number = 1
    with pytest.raises(ValueError, match="does not continue"):
        ledger.write_block(block)
    ledger.close()


# -- config messages and re-submission ----------------------------------------------------
def config_message(sequence: int, max_message_count: int, config_seq: int = SEQ, original_offset: int = 0) -> bytes:
    """A CONFIG message as Fabric's Broadcast produces it: the CONFIG envelope of the channel's
    next config (here only its sequence and the Orderer group's BatchSize)."""
    from osn.wire.orderer import configuration_pb2

    config = configtx_pb2.Config(sequence=sequence)
    config.channel_group.groups["Orderer"].values["BatchSize"].value = configuration_pb2.BatchSize(
        max_message_count=max_message_count, absolute_max_bytes=1_000_000, preferred_max_bytes=1000).SerializeToString()
    header = common_pb2.ChannelHeader(type=common_pb2.CONFIG, channel_id="ch0").SerializeToString()
    payload = common_pb2.Payload(header=common_pb2.Header(channel_header=header),
                                 data=configtx_pb2.ConfigEnvelope(config=config).SerializeToString())
    env = common_pb2.Envelope(payload=payload.SerializeToString()).SerializeToString()
    return kafka_pb2.KafkaMessage(regular=kafka_pb2.KafkaMessageRegular(
        payload=env, config_seq=config_seq, original_offset=original_offset,
        **{"class": kafka_pb2.KafkaMessageRegular.CONFIG})).SerializeToString()


def test_a_config_message_cuts_the_pending_batch_then_stands_alone_and_sets_the_new_count():
    log = list(enumerate([connect(), regular("a1"), config_message(2, max_message_count=2),
                          regular("b1", config_seq=2), regular("b2", config_seq=2), regular("b3", config_seq=2),
                          ttc(4)]))
    result = replay("ch0", log, genesis(), BATCH)
    assert result.out_of_scope is None and result.halted is None
    assert [len(b.summary["txs"]) for b in result.blocks] == [1, 1, 2, 1]
    assert [b.summary["last_offset"] for b in result.blocks] == [1, 2, 4, 6]
    assert [b.cut_by for b in result.blocks] == [CONFIG, CONFIG, COUNT, TTC]
    assert result.blocks[2].summary["txs"] == ["b1", "b2"]  # cut at the new count of 2, not 3


def test_a_message_of_an_older_config_sequence_is_ordered_where_fabric_resubmitted_it_and_once():
    log = list(enumerate([connect(), config_message(2, max_message_count=3),
                          regular("stale", config_seq=SEQ),                  # offset 2: re-validated, not ordered here
                          regular("x", config_seq=2),
                          regular("stale", config_seq=2, original_offset=2),  # Fabric's re-submission
                          regular("stale", config_seq=2, original_offset=2),  # a second OSN's: already done
                          regular("y", config_seq=2)]))
    result = replay("ch0", log, genesis(), BATCH)
    txs = [tx for b in result.blocks for tx in b.summary["txs"]]
    assert txs.count("stale") == 1 and txs[-3:] == ["x", "stale", "y"]


def test_a_stale_message_fabric_refused_on_re_validation_is_never_ordered():
    log = list(enumerate([connect(), config_message(2, max_message_count=2),
                          regular("refused", config_seq=SEQ), regular("x", config_seq=2), regular("y", config_seq=2)]))
    result = replay("ch0", log, genesis(), BATCH)
    assert [tx for b in result.blocks for tx in b.summary["txs"]][1:] == ["x", "y"]
