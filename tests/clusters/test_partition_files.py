"""Record batches read from a segment file's bytes (clusters/partition_files.py): each batch's
offsets, producer and transactional flag, and a control batch's marker. The segments are
built with kafka-python's own writer of the record format; the copy from real brokers is
tested on the cluster in test_kraft.py."""
from __future__ import annotations

import struct

from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.util import calc_crc32c

from clusters.partition_files import batch_line, read_batches, write_listing

CONTROL_BIT = 0x20  # attributes bit 5: a control batch
ATTRIBUTES_AT, CRC_AT = 21, 17  # byte positions in a v2 batch header


def batch(base_offset: int, values: list[bytes], producer: int = 1003, epoch: int = 0, seq: int = 12,
          transactional: bool = True, key: bytes | None = None) -> bytes:
    builder = DefaultRecordBatchBuilder(2, 0, transactional, producer, epoch, seq, 1 << 20)
    for i, value in enumerate(values):
        builder.append(i, 1_700_000_000_000 + i, key, value, [])
    raw = bytearray(builder.build())
    raw[0:8] = struct.pack(">q", base_offset)
    return bytes(raw)


def control(base_offset: int, kind: int, producer: int = 1003, epoch: int = 0) -> bytes:
    """A transaction marker as a broker writes it: one record whose key is (version 0, kind)."""
    raw = bytearray(batch(base_offset, [struct.pack(">hi", 0, 7)], producer, epoch, -1, True,
                          key=struct.pack(">hh", 0, kind)))
    attributes = struct.unpack_from(">h", raw, ATTRIBUTES_AT)[0] | CONTROL_BIT
    struct.pack_into(">h", raw, ATTRIBUTES_AT, attributes)
    struct.pack_into(">I", raw, CRC_AT, calc_crc32c(bytes(raw[ATTRIBUTES_AT:])))
    return bytes(raw)


def test_a_transactional_batch_and_its_abort_marker_are_listed_with_producer_offsets_and_values():
    found = read_batches(batch(169, [b"247"]) + control(170, 0) + batch(171, [b"5", b"6"], producer=7, seq=0,
                                                                          transactional=False))
    assert [(b["base_offset"], b["last_offset"]) for b in found] == [(169, 169), (170, 170), (171, 172)]
    assert found[0]["producer_id"] == 1003 and found[0]["base_sequence"] == 12 and found[0]["transactional"]
    assert [r["value"] for r in found[0]["records"]] == ["247"]
    assert found[1]["control"] == ["ABORT"] and "records" not in found[1]
    assert not found[2]["transactional"] and [r["offset"] for r in found[2]["records"]] == [171, 172]
    assert "marker ABORT" in batch_line(found[1]) and "values 247" in batch_line(found[0])


def test_a_commit_marker_is_told_from_an_abort():
    assert read_batches(control(5, 1))[0]["control"] == ["COMMIT"]


def test_a_partition_directory_gets_a_listing_of_each_segment_and_a_torn_tail_is_not_a_batch(tmp_path):
    part = tmp_path / "t100-0"
    part.mkdir()
    whole = batch(0, [b"1"]) + control(1, 1)
    (part / "00000000000000000000.log").write_bytes(whole + batch(2, [b"2"])[:30])
    text = write_listing(part).read_text().splitlines()
    assert text[0] == "# 00000000000000000000.log"
    assert len(text) == 3 and "values 1" in text[1] and "marker COMMIT" in text[2]
