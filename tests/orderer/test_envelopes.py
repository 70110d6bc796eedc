"""Envelopes as Fabric's clients make them: tx id, labels in the nonce, signatures over the
payload; the signed channel-creation tx; block summaries of real-Fabric-shaped blocks."""
import hashlib
import time

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec

from fabric.client import block_summary
from fabric.config_update import read_channel_id, sign_channel_creation
from fabric.envelopes import make_envelope
from osn.envelopes import MalformedEnvelope, read_envelope, tx_label_of
from fabric.identity import MspIdentity, NamedIdentity
from osn.wire.common import common_pb2, configtx_pb2
from osn.wire.orderer import kafka_pb2
from osn.wire.peer import transaction_pb2
from tests.orderer.msp_fixture import make_msp_dir

ECDSA = ec.ECDSA(hashes.SHA256())


@pytest.fixture
def msp(tmp_path):
    msp_dir, cert = make_msp_dir(tmp_path)
    return MspIdentity.load("Org1MSP", msp_dir), cert


def headers(envelope: common_pb2.Envelope):
    payload = common_pb2.Payload.FromString(envelope.payload)
    return (common_pb2.ChannelHeader.FromString(payload.header.channel_header),
            common_pb2.SignatureHeader.FromString(payload.header.signature_header), payload.data)


@pytest.mark.parametrize("label", ["tx-ab12cd-17", ""])
def test_tx_id_is_the_sha256_of_nonce_and_creator(msp, label):
    identity, _ = msp
    channel_header, signature_header, _ = headers(make_envelope("ch0", identity, label=label))
    assert signature_header.creator == identity.creator
    assert channel_header.tx_id == hashlib.sha256(signature_header.nonce + identity.creator).hexdigest()
    assert len(signature_header.nonce) == (len(b"ordeal-tx:" + label.encode()) if label else 24)


def test_channel_header_is_fabrics_shape_and_data_an_empty_transaction():
    before = int(time.time())
    channel_header, _, data = headers(make_envelope("ch0", NamedIdentity("alice"), label="tx-1"))
    assert (channel_header.type, channel_header.version, channel_header.epoch, channel_header.channel_id) == (
        common_pb2.ENDORSER_TRANSACTION, 0, 0, "ch0")
    assert before <= channel_header.timestamp.seconds <= time.time() and channel_header.timestamp.nanos == 0
    assert transaction_pb2.Transaction.FromString(data) == transaction_pb2.Transaction()


def test_envelope_signature_verifies_over_the_payload(msp):
    identity, cert = msp
    envelope = make_envelope("ch0", identity, b"data", label="tx-2")
    cert.public_key().verify(envelope.signature, envelope.payload, ECDSA)
    assert make_envelope("ch0", NamedIdentity("alice"), label="tx-2").signature == b""


def test_label_round_trips_through_tx_label_of(msp):
    identity, _ = msp
    for who in (identity, NamedIdentity("alice")):
        assert tx_label_of(make_envelope("ch0", who, label="tx-ab12cd-17").SerializeToString()) == "tx-ab12cd-17"


def test_without_a_label_tx_label_of_is_the_tx_id_and_empty_when_unreadable():
    envelope = make_envelope("ch0", NamedIdentity("alice"), nonce=b"n" * 24)
    assert tx_label_of(envelope.SerializeToString()) == headers(envelope)[0].tx_id != ""
    assert tx_label_of(b"\xff\xff") == ""
    assert tx_label_of(common_pb2.Envelope(payload=b"\xff").SerializeToString()) == ""


def test_a_label_and_a_nonce_do_not_go_together():
    with pytest.raises(ValueError):
        make_envelope("ch0", NamedIdentity("alice"), label="tx", nonce=b"n")


def test_read_envelope_names_a_named_creator_by_name_and_an_msp_creator_by_msp_id(msp):
    identity, _ = msp
    assert read_envelope(make_envelope("ch0", NamedIdentity("alice"), label="t"))[0].creator == "alice"
    header, data = read_envelope(make_envelope("ch0", identity, b"d", label="t"))
    assert (header.creator, header.channel, data) == ("Org1MSP", "ch0", b"d")


def test_read_envelope_refuses_a_creator_that_is_neither_identity_nor_name():
    class Binary:
        msp_id, creator = "", b"\xff\xfe"

        def sign(self, message: bytes) -> bytes:
            return b""

    with pytest.raises(MalformedEnvelope):
        read_envelope(make_envelope("ch0", Binary(), label="t"))


def unsigned_creation_tx(channel: str) -> tuple[common_pb2.Envelope, bytes]:
    """What configtxgen -outputCreateChannelTx writes: no signatures anywhere."""
    update = configtx_pb2.ConfigUpdate(channel_id=channel)
    update.read_set.version = 0
    update.write_set.version = 1
    raw_update = update.SerializeToString()
    channel_header = common_pb2.ChannelHeader(type=common_pb2.CONFIG_UPDATE, channel_id=channel)
    payload = common_pb2.Payload(
        header=common_pb2.Header(channel_header=channel_header.SerializeToString(),
                                 signature_header=common_pb2.SignatureHeader().SerializeToString()),
        data=configtx_pb2.ConfigUpdateEnvelope(config_update=raw_update).SerializeToString())
    return common_pb2.Envelope(payload=payload.SerializeToString()), raw_update


def test_channel_creation_is_signed_as_peer_channel_create_signs_it(msp):
    identity, cert = msp
    tx, raw_update = unsigned_creation_tx("ch9")
    assert read_channel_id(tx) == "ch9"
    signed = sign_channel_creation(tx, identity)
    cert.public_key().verify(signed.signature, signed.payload, ECDSA)
    channel_header, signature_header, data = headers(signed)
    assert (channel_header.type, channel_header.channel_id, channel_header.version, channel_header.epoch) == (
        common_pb2.CONFIG_UPDATE, "ch9", 0, 0)
    assert channel_header.timestamp.seconds > 0
    assert signature_header.creator == identity.creator and len(signature_header.nonce) == 24
    update = configtx_pb2.ConfigUpdateEnvelope.FromString(data)
    assert update.config_update == raw_update
    [config_signature] = update.signatures
    cert.public_key().verify(config_signature.signature,
                             config_signature.signature_header + update.config_update, ECDSA)
    config_signer = common_pb2.SignatureHeader.FromString(config_signature.signature_header)
    assert config_signer.creator == identity.creator and len(config_signer.nonce) == 24
    assert read_channel_id(signed) == "ch9"


def test_only_a_config_update_is_signed_as_a_channel_creation(msp):
    identity, _ = msp
    with pytest.raises(MalformedEnvelope, match="CONFIG_UPDATE"):
        sign_channel_creation(make_envelope("ch0", identity, b"x", label="t"), identity)
    with pytest.raises(MalformedEnvelope):
        sign_channel_creation(common_pb2.Envelope(payload=b"\xff"), identity)


def fabric_block(number: int, envelopes: list[common_pb2.Envelope], kafka: kafka_pb2.KafkaMetadata | None):
    """A block as Fabric's orderer writes it: four metadata slots; ORDERER holds
    Metadata{value=KafkaMetadata} except in a channel's block 0 (left empty)."""
    block = common_pb2.Block()
    block.header.number = number
    block.data.data.extend(e.SerializeToString() for e in envelopes)
    block.metadata.metadata.extend([b""] * 4)
    if kafka is not None:
        block.metadata.metadata[common_pb2.ORDERER] = common_pb2.Metadata(
            value=kafka.SerializeToString()).SerializeToString()
    return block


def test_block_summary_of_fabric_blocks_names_txs_and_reads_the_kafka_offset(msp):
    identity, _ = msp
    genesis = fabric_block(0, [common_pb2.Envelope(payload=common_pb2.Payload(
        header=common_pb2.Header(channel_header=common_pb2.ChannelHeader(
            type=common_pb2.CONFIG, channel_id="ch0").SerializeToString())).SerializeToString())], None)
    assert block_summary(genesis)["last_offset"] == -1 and block_summary(genesis)["txs"] == [""]
    one = fabric_block(1, [make_envelope("ch0", identity, label="tx-a"), make_envelope("ch0", identity, label="tx-b")],
                       kafka_pb2.KafkaMetadata(last_offset_persisted=7, last_original_offset_processed=0))
    summary = block_summary(one)
    assert (summary["number"], summary["txs"], summary["last_offset"]) == (1, ["tx-a", "tx-b"], 7)
    assert block_summary(common_pb2.Block())["last_offset"] == -1
