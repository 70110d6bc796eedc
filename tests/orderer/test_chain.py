"""The Kafka consenter over an in-memory log: cut points, TTC rules, timer, restart."""
import os
import time

import pytest

from osn.chain import ChainHalted, ChainNotReady, regular_message, time_to_cut_message
from osn.blocks import last_offset_of
from osn.ledger import Ledger
from osn.memory_log import MemoryLog
from osn.partition_log import LogRecord
from osn.wire.common import common_pb2
from osn.wire.orderer import kafka_pb2
from tests.orderer.chain_fixtures import FakeClock, envelope, eventually, hashes, new_chain, tx_count


def regular(offset: int, tx: str, data: bytes = b"") -> LogRecord:
    return LogRecord(offset, regular_message(envelope(tx, data=data)))


def ttc(offset: int, number: int) -> LogRecord:
    return LogRecord(offset, time_to_cut_message(number))


def test_current_ttc_cuts_the_pending_batch_at_the_ttc_offset(tmp_path):
    chain = new_chain(tmp_path / "l", MemoryLog())
    chain.process(regular(0, "a"))
    chain.process(regular(1, "b"))
    [block] = chain.process(ttc(2, 0))
    assert block.header.number == 0 and len(block.data.data) == 2
    assert last_offset_of(block) == 2


def test_stale_ttc_is_ignored(tmp_path):
    chain = new_chain(tmp_path / "l", MemoryLog())
    chain.process(regular(0, "a"))
    chain.process(ttc(1, 0))
    chain.process(regular(2, "b"))
    assert chain.process(ttc(3, 0)) == []
    assert chain.ledger.height == 1 and chain.halted is None


def test_ttc_from_the_future_halts_the_chain(tmp_path):
    chain = new_chain(tmp_path / "l", MemoryLog())
    chain.process(regular(0, "a"))
    with pytest.raises(ChainHalted):
        chain.process(ttc(1, 1))
    assert chain.ledger.height == 0


def test_current_ttc_with_nothing_pending_halts_the_chain(tmp_path):
    chain = new_chain(tmp_path / "l", MemoryLog())
    with pytest.raises(ChainHalted):
        chain.process(ttc(0, 0))


def test_connect_message_cuts_nothing(tmp_path):
    chain = new_chain(tmp_path / "l", MemoryLog())
    connect = kafka_pb2.KafkaMessage(connect=kafka_pb2.KafkaMessageConnect()).SerializeToString()
    assert chain.process(LogRecord(0, connect)) == []


def test_count_cut_block_ends_at_the_offset_of_its_last_message(tmp_path):
    chain = new_chain(tmp_path / "l", MemoryLog(), count=2)
    chain.process(regular(5, "a"))
    [block] = chain.process(regular(7, "b"))
    assert last_offset_of(block) == 7


def test_overflow_cut_block_ends_before_the_message_left_pending(tmp_path):
    size_of_one = len(common_pb2.Envelope.FromString(envelope("a", data=b"x" * 40)).payload)
    chain = new_chain(tmp_path / "l", MemoryLog(), count=10, preferred=size_of_one + 10)
    chain.process(regular(0, "a", b"x" * 40))
    [block] = chain.process(regular(1, "b", b"x" * 40))
    assert last_offset_of(block) == 0


def test_oversized_message_gives_two_blocks_with_consecutive_last_offsets(tmp_path):
    chain = new_chain(tmp_path / "l", MemoryLog(), count=10, preferred=200)
    chain.process(regular(0, "a"))
    first, second = chain.process(regular(1, "big", b"x" * 500))
    assert (last_offset_of(first), last_offset_of(second)) == (0, 1)
    assert (first.header.number, second.header.number) == (0, 1)


def test_batch_timer_expiry_posts_one_ttc_for_the_next_block(tmp_path):
    clock, log = FakeClock(), MemoryLog()
    chain = new_chain(tmp_path / "l", log, clock=clock, timeout_ms=1000)
    chain.process(regular(0, "a"))
    clock.now += 0.999
    chain.tick()
    assert log.values() == []
    clock.now += 0.002
    chain.tick()
    chain.tick()
    assert log.values() == [time_to_cut_message(0)]


def test_batch_timer_stops_when_the_batch_is_cut_by_count(tmp_path):
    clock, log = FakeClock(), MemoryLog()
    chain = new_chain(tmp_path / "l", log, clock=clock, count=2, timeout_ms=1000)
    chain.process(regular(0, "a"))
    chain.process(regular(1, "b"))
    clock.now += 5
    chain.tick()
    assert log.values() == []


def test_started_chain_created_the_topic_and_posted_connect(tmp_path):
    log = MemoryLog()
    chain = new_chain(tmp_path / "l", log)
    chain.start()
    try:
        assert chain.wait_started(5)
        assert log.topic_created
        assert kafka_pb2.KafkaMessage.FromString(log.values()[0]).WhichOneof("Type") == "connect"
    finally:
        chain.stop()


def test_chain_not_started_refuses_to_order(tmp_path):
    log = MemoryLog()
    log.refusing = "NOT_ENOUGH_REPLICAS"
    chain = new_chain(tmp_path / "l", log)
    chain.start()
    try:
        with pytest.raises(ChainNotReady):
            chain.order(envelope("a"))
    finally:
        chain.stop()


def test_two_osns_reading_one_log_cut_identical_blocks(tmp_path):
    log = MemoryLog()
    one = new_chain(tmp_path / "one", log, count=4, timeout_ms=5)
    two = new_chain(tmp_path / "two", log, count=4, timeout_ms=5)
    for chain in (one, two):
        chain.start()
        assert chain.wait_started(5)
    try:
        for i in range(60):
            (one, two)[i % 2].order(envelope(f"tx-{i}"))
            if i % 7 == 0:
                time.sleep(0.02)  # let batch timers expire mid-stream so TTCs interleave
        eventually(lambda: tx_count(one.ledger) == 60 and tx_count(two.ledger) == 60)
    finally:
        one.stop()
        two.stop()
    assert hashes(one.ledger) == hashes(two.ledger)
    kinds = [kafka_pb2.KafkaMessage.FromString(v).WhichOneof("Type") for v in log.values()]
    assert "time_to_cut" in kinds


def test_restarted_chain_resumes_after_its_last_offset_without_gap_or_duplicate(tmp_path):
    log = MemoryLog()
    first = new_chain(tmp_path / "osn", log, count=3, timeout_ms=5)
    first.start()
    assert first.wait_started(5)
    for i in range(10):
        first.order(envelope(f"tx-{i}"))
    eventually(lambda: tx_count(first.ledger) == 10)
    first.stop()
    first.ledger.close()
    for i in range(10, 17):
        log.append(regular_message(envelope(f"tx-{i}")))

    restarted = new_chain(tmp_path / "osn", log, count=3, timeout_ms=5)
    resumed_from = restarted.ledger.last_offset + 1
    reference = new_chain(tmp_path / "fresh", log, count=3, timeout_ms=5)
    for chain in (restarted, reference):
        chain.start()
    try:
        eventually(lambda: tx_count(restarted.ledger) == 17 and tx_count(reference.ledger) == 17)
    finally:
        restarted.stop()
        reference.stop()
    assert resumed_from > 0
    assert hashes(restarted.ledger) == hashes(reference.ledger)


def test_block_torn_by_a_crash_is_cut_again_identically_after_restart(tmp_path):
    log = MemoryLog()
    first = new_chain(tmp_path / "osn", log, count=3, timeout_ms=60_000)
    first.start()
    assert first.wait_started(5)
    for i in range(12):
        first.order(envelope(f"tx-{i}"))
    eventually(lambda: first.ledger.height == 4)
    first.stop()
    first.ledger.close()
    before = hashes(Ledger(tmp_path / "osn"))
    os.truncate(tmp_path / "osn", os.path.getsize(tmp_path / "osn") - 5)  # tear block 3

    restarted = new_chain(tmp_path / "osn", log, count=3, timeout_ms=60_000)
    assert restarted.ledger.height == 3
    restarted.start()
    try:
        eventually(lambda: restarted.ledger.height == 4)
    finally:
        restarted.stop()
    assert hashes(restarted.ledger) == before


def test_a_message_of_an_older_config_sequence_is_resubmitted_with_its_offset_not_ordered(tmp_path):
    """Fabric 1.4's Resubmission: re-validated (the model has no policies: it passes) and
    produced again, stamped with the current sequence and the offset it was read at."""
    log = MemoryLog()
    chain = new_chain(tmp_path / "l", log)
    chain.config_seq = 2
    assert chain.process(LogRecord(7, regular_message(envelope("old"), config_seq=1))) == []
    [again] = [kafka_pb2.KafkaMessage.FromString(v).regular for v in log.values()]
    assert (again.config_seq, again.original_offset) == (2, 7)
    assert chain._cutter.pending is False


def test_a_resubmitted_message_is_ordered_once_and_its_original_offset_kept_in_the_block(tmp_path):
    chain = new_chain(tmp_path / "l", MemoryLog(), count=1)
    [block] = chain.process(LogRecord(9, regular_message(envelope("re"), original_offset=7)))
    assert chain.process(LogRecord(10, regular_message(envelope("re"), original_offset=7))) == []
    metadata = kafka_pb2.KafkaMetadata.FromString(
        common_pb2.Metadata.FromString(block.metadata.metadata[common_pb2.ORDERER]).value)
    assert (metadata.last_offset_persisted, metadata.last_original_offset_processed) == (9, 7)
    assert Ledger(tmp_path / "l").last_original_offset == 7  # a restarted chain resumes it
