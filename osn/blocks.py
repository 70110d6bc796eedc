"""Fabric's block format as the Kafka consenter writes it: the header chain and the data
hash, and the Kafka offset a block's ORDERER metadata records.

Fabric (common/block.go, v1.x) hashes a header as SHA-256 over the ASN.1 DER encoding of
SEQUENCE { number INTEGER, previous_hash OCTET STRING, data_hash OCTET STRING }, and the
data as SHA-256 over the concatenated marshalled envelopes. Metadata is outside both.
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterable

from osn.wire.common import common_pb2
from osn.wire.orderer import kafka_pb2

_INTEGER, _OCTET_STRING, _SEQUENCE = 0x02, 0x04, 0x30


def _der_length(n: int) -> bytes:
    if n < 0x80:
        return bytes([n])
    body = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(body)]) + body


def _der(tag: int, content: bytes) -> bytes:
    return bytes([tag]) + _der_length(len(content)) + content


def _der_unsigned(n: int) -> bytes:
    # Minimal two's complement: a leading 0x00 keeps a high bit from reading as negative.
    return n.to_bytes(n.bit_length() // 8 + 1, "big")


def header_bytes(header: common_pb2.BlockHeader) -> bytes:
    return _der(_SEQUENCE, _der(_INTEGER, _der_unsigned(header.number))
                + _der(_OCTET_STRING, header.previous_hash)
                + _der(_OCTET_STRING, header.data_hash))


def header_hash(header: common_pb2.BlockHeader) -> bytes:
    return hashlib.sha256(header_bytes(header)).digest()


def data_hash(data: Iterable[bytes]) -> bytes:
    digest = hashlib.sha256()
    for envelope in data:
        digest.update(envelope)
    return digest.digest()


def last_offset_of(block: common_pb2.Block) -> int:
    """The Kafka offset of the last message in the block (Fabric's LastOffsetPersisted)."""
    metadata = common_pb2.Metadata.FromString(block.metadata.metadata[common_pb2.ORDERER])
    return kafka_pb2.KafkaMetadata.FromString(metadata.value).last_offset_persisted


def persisted_offset(block: common_pb2.Block) -> int | None:
    """The block's LastOffsetPersisted, or None for a block without consenter metadata (a
    channel's genesis block, as Fabric's registrar writes it). Fabric's getOffsets reads an
    empty ORDERER metadata value as "nothing persisted": the chain consumes from the oldest offset."""
    metadata = block.metadata.metadata
    if len(metadata) <= common_pb2.ORDERER or not common_pb2.Metadata.FromString(metadata[common_pb2.ORDERER]).value:
        return None
    return last_offset_of(block)
