"""Fabric's header hash: SHA-256 over DER SEQUENCE{INTEGER number, OCTET STRING previous_hash,
OCTET STRING data_hash}. Expected encodings are written out byte by byte here."""
import hashlib

from osn.blocks import data_hash, header_bytes, header_hash
from osn.wire.common import common_pb2


def test_header_hash_of_a_known_block_matches_hand_encoded_der():
    header = common_pb2.BlockHeader(number=1, previous_hash=b"\x11" * 32, data_hash=b"\x22" * 32)
    # SEQUENCE, length 3 + 34 + 34 = 71 (0x47); INTEGER 1; OCTET STRING 32 x 0x11; OCTET STRING 32 x 0x22
    der = bytes.fromhex("3047" "020101" "0420" + "11" * 32 + "0420" + "22" * 32)
    assert header_bytes(header) == der
    assert header_hash(header) == hashlib.sha256(der).digest()


def test_number_with_high_bit_gets_a_leading_zero_and_empty_hash_encodes_as_empty_octet_string():
    header = common_pb2.BlockHeader(number=128, previous_hash=b"", data_hash=b"\xab" * 32)
    # INTEGER 128 is 02 02 00 80 (positive), empty previous_hash is 04 00; total 4 + 2 + 34 = 40 (0x28)
    der = bytes.fromhex("3028" "02020080" "0400" "0420" + "ab" * 32)
    assert header_hash(header) == hashlib.sha256(der).digest()


def test_block_zero_encodes_number_as_single_zero_octet():
    header = common_pb2.BlockHeader(number=0, previous_hash=b"", data_hash=b"")
    assert header_bytes(header) == bytes.fromhex("3007" "020100" "0400" "0400")


def test_data_hash_is_sha256_of_concatenated_envelopes():
    assert data_hash([b"ab", b"c", b""]) == hashlib.sha256(b"abc").digest()
