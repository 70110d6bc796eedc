"""Reading Fabric envelopes: Envelope -> Payload -> Header -> (ChannelHeader,
SignatureHeader), as the model's Broadcast and Deliver read them, and as ordeal's client
(fabric/envelopes.py, which makes them) and the conformance replay read them back.

A history tx label ("tx-ab12cd-17") travels as the nonce, after LABEL_MARKER, so it is
readable back from any block, the real orderer's as well as the model's. No crypto library
is needed here: the model's image has none.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

from google.protobuf.message import DecodeError

from osn.wire.common import common_pb2, configtx_pb2
from osn.wire.msp import identities_pb2

LABEL_MARKER = b"ordeal-tx:"


class MalformedEnvelope(ValueError):
    """The envelope cannot be read as a Fabric payload with channel and signature headers."""


@dataclass(frozen=True)
class EnvelopeHeader:
    type: int
    channel: str
    tx_id: str
    creator: str
    tls_cert_hash: bytes = b""


def creator_name(creator: bytes) -> str:
    """The creator as the model checks writers: the MSP id of a serialized MSP identity (as a
    Fabric Writers policy "<MSP>.member" would), else the utf-8 name of a NamedIdentity.
    Raises MalformedEnvelope when it is neither."""
    try:
        identity = identities_pb2.SerializedIdentity.FromString(creator)
        if identity.mspid and identity.id_bytes:
            return identity.mspid
    except DecodeError:
        pass
    try:
        return creator.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MalformedEnvelope(f"creator is neither a serialized identity nor a name: {exc}") from None


def read_envelope(envelope: common_pb2.Envelope) -> tuple[EnvelopeHeader, bytes]:
    """The envelope's header fields and payload data; raises MalformedEnvelope."""
    try:
        payload = common_pb2.Payload.FromString(envelope.payload)
        if not payload.HasField("header"):
            raise MalformedEnvelope("payload has no header")
        channel_header = common_pb2.ChannelHeader.FromString(payload.header.channel_header)
        signature_header = common_pb2.SignatureHeader.FromString(payload.header.signature_header)
    except DecodeError as exc:
        raise MalformedEnvelope(str(exc)) from None
    creator = creator_name(signature_header.creator)
    if not channel_header.channel_id:
        raise MalformedEnvelope("channel header has no channel id")
    header = EnvelopeHeader(channel_header.type, channel_header.channel_id, channel_header.tx_id, creator,
                            channel_header.tls_cert_hash)
    return header, payload.data


def compute_tx_id(nonce: bytes, creator: bytes) -> str:
    """Fabric's tx id (protos/utils ComputeTxID): hex SHA-256 of nonce followed by creator."""
    return hashlib.sha256(nonce + creator).hexdigest()


def tx_label_of(raw_envelope: bytes) -> str:
    """What the history calls the tx of a marshalled envelope stored in a block: the label
    its nonce carries, else its ChannelHeader tx id ("" when unreadable). A CONFIG envelope is
    the orderer's (its nonce is the orderer's): it is named by the labelled CONFIG_UPDATE it
    orders, which it keeps as its last_update."""
    try:
        payload = common_pb2.Payload.FromString(common_pb2.Envelope.FromString(raw_envelope).payload)
        nonce = common_pb2.SignatureHeader.FromString(payload.header.signature_header).nonce
        if nonce.startswith(LABEL_MARKER):
            return nonce[len(LABEL_MARKER):].decode("utf-8")
        header = common_pb2.ChannelHeader.FromString(payload.header.channel_header)
        if header.type == common_pb2.CONFIG:
            update = configtx_pb2.ConfigEnvelope.FromString(payload.data).last_update
            if update.payload:
                inner = common_pb2.Payload.FromString(update.payload)
                inner_nonce = common_pb2.SignatureHeader.FromString(inner.header.signature_header).nonce
                if inner_nonce.startswith(LABEL_MARKER):
                    return inner_nonce[len(LABEL_MARKER):].decode("utf-8")
        return header.tx_id
    except (DecodeError, UnicodeDecodeError):
        return ""
