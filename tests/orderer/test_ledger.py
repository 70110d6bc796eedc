"""The file ledger: hash chain, offsets in metadata, torn-tail recovery."""
import os
import threading

import pytest

from osn.blocks import header_hash
from osn.blocks import last_offset_of
from osn.ledger import Ledger, LedgerCorrupt


def filled(path, n: int) -> Ledger:
    ledger = Ledger(path)
    for i in range(n):
        ledger.append([f"env-{i}-a".encode(), f"env-{i}-b".encode()], last_offset=10 * i + 1)
    return ledger


def test_blocks_chain_by_header_hash_and_record_their_last_offset(tmp_path):
    ledger = filled(tmp_path / "ch.blocks", 3)
    b1, b2 = ledger.block(1), ledger.block(2)
    assert b2.header.previous_hash == header_hash(b1.header)
    assert ledger.block(0).header.previous_hash == b""
    assert last_offset_of(b2) == 21 and ledger.last_offset == 21


def test_empty_ledger_has_no_last_offset(tmp_path):
    ledger = Ledger(tmp_path / "ch.blocks")
    assert ledger.height == 0 and ledger.last_offset is None


def test_reopened_ledger_serves_the_same_blocks(tmp_path):
    path = tmp_path / "ch.blocks"
    before = filled(path, 3)
    hashes = [header_hash(before.block(i).header) for i in range(3)]
    before.close()
    after = Ledger(path)
    assert [header_hash(after.block(i).header) for i in range(3)] == hashes
    assert after.last_offset == 21


def test_torn_last_record_is_discarded_and_next_append_continues_the_chain(tmp_path):
    path = tmp_path / "ch.blocks"
    ledger = filled(path, 3)
    whole_two = os.path.getsize(path)
    ledger.append([b"torn"], last_offset=99)
    ledger.close()
    os.truncate(path, whole_two + 12)  # head written, body cut short

    reopened = Ledger(path)
    assert reopened.height == 3
    assert reopened.last_offset == 21
    assert os.path.getsize(path) == whole_two
    block = reopened.append([b"next"], last_offset=30)
    assert block.header.number == 3
    assert block.header.previous_hash == header_hash(reopened.block(2).header)
    reopened.close()
    assert Ledger(path).height == 4


def test_last_record_with_bad_checksum_is_discarded(tmp_path):
    path = tmp_path / "ch.blocks"
    ledger = filled(path, 2)
    ledger.close()
    with open(path, "r+b") as f:
        f.seek(-1, os.SEEK_END)
        last = f.read(1)
        f.seek(-1, os.SEEK_END)
        f.write(bytes([last[0] ^ 0xFF]))
    assert Ledger(path).height == 1


def test_damaged_record_before_the_last_is_refused(tmp_path):
    path = tmp_path / "ch.blocks"
    filled(path, 3).close()
    with open(path, "r+b") as f:
        f.seek(20)
        byte = f.read(1)
        f.seek(20)
        f.write(bytes([byte[0] ^ 0xFF]))
    with pytest.raises(LedgerCorrupt):
        Ledger(path)


def test_waiting_reader_wakes_when_the_block_is_appended(tmp_path):
    ledger = Ledger(tmp_path / "ch.blocks")
    appender = threading.Timer(0.05, lambda: ledger.append([b"x"], last_offset=0))
    appender.start()
    assert ledger.wait_for_height(1, timeout=5)
    appender.join()


def test_wait_for_height_times_out_when_nothing_is_appended(tmp_path):
    assert not Ledger(tmp_path / "ch.blocks").wait_for_height(1, timeout=0.01)
