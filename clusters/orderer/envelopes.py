"""Reading and writing Fabric envelopes: Envelope -> Payload -> Header -> (ChannelHeader,
SignatureHeader). Shared by Broadcast, Deliver and the client so they agree on one shape.

An envelope is made as Fabric's clients make it (protos/utils CreateSignedEnvelope, with
the tx id of ComputeTxID): the ChannelHeader carries the type, channel, a timestamp in whole
seconds and tx id = hex(SHA-256(nonce || creator)); the SignatureHeader carries the creator
and nonce; Envelope.signature is the identity's signature over the payload bytes. A history
tx label ("tx-ab12cd-17") travels as the nonce, so it is readable back from any block, the
real orderer's as well as the model's.

This module runs inside the model OSN too: it needs no crypto library (identities are passed
in; see identity.py).
"""
from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from google.protobuf.message import DecodeError

from clusters.orderer.wire.common import common_pb2, configtx_pb2
from clusters.orderer.wire.msp import identities_pb2
from clusters.orderer.wire.peer import transaction_pb2

if TYPE_CHECKING:
    from clusters.orderer.identity import Identity

LABEL_MARKER = b"ordeal-tx:"
NONCE_BYTES = 24  # as Fabric's crypto.GetRandomNonce


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


def label_nonce(label: str) -> bytes:
    return LABEL_MARKER + label.encode("utf-8")


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


def signed_envelope(channel: str, identity: "Identity", data: bytes, header_type: int,
                    nonce: bytes | None = None, with_tx_id: bool = True,
                    tls_cert_hash: bytes = b"") -> common_pb2.Envelope:
    """An envelope of `data` with version 0, epoch 0, timestamp now, signed by `identity`;
    `tls_cert_hash` binds it to a mutual-TLS connection (tls.py)."""
    if nonce is None:
        nonce = os.urandom(NONCE_BYTES)
    creator = identity.creator
    channel_header = common_pb2.ChannelHeader(
        type=header_type, version=0, channel_id=channel, epoch=0,
        tx_id=compute_tx_id(nonce, creator) if with_tx_id else "", tls_cert_hash=tls_cert_hash)
    # Whole seconds, as Fabric's MakeChannelHeader: also keeps an envelope's size independent
    # of the moment it is made.
    channel_header.timestamp.seconds = int(time.time())
    signature_header = common_pb2.SignatureHeader(creator=creator, nonce=nonce)
    payload = common_pb2.Payload(
        header=common_pb2.Header(channel_header=channel_header.SerializeToString(),
                                 signature_header=signature_header.SerializeToString()),
        data=data).SerializeToString()
    return common_pb2.Envelope(payload=payload, signature=identity.sign(payload))


def make_envelope(channel: str, identity: "Identity", data: bytes = b"", label: str = "",
                  header_type: int = common_pb2.ENDORSER_TRANSACTION,
                  nonce: bytes | None = None, tls_cert_hash: bytes = b"") -> common_pb2.Envelope:
    """A signed envelope. The nonce is `nonce` if given, else the history label (`label`) with
    its marker, else random. An ENDORSER_TRANSACTION without `data` carries an empty
    peer.Transaction."""
    if label and nonce is not None:
        raise ValueError("give a label or a nonce, not both")
    if label:
        nonce = label_nonce(label)
    if header_type == common_pb2.ENDORSER_TRANSACTION and not data:
        data = transaction_pb2.Transaction().SerializeToString()
    return signed_envelope(channel, identity, data, header_type, nonce, tls_cert_hash=tls_cert_hash)
