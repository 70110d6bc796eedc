"""Making Fabric envelopes as Fabric's clients make them (protos/utils CreateSignedEnvelope,
with the tx id of ComputeTxID): the ChannelHeader carries the type, channel, a timestamp in
whole seconds and tx id = hex(SHA-256(nonce || creator)); the SignatureHeader carries the
creator and nonce; Envelope.signature is the identity's signature over the payload bytes.
The history's tx label travels as the nonce (osn/envelopes.py reads it back).
"""
from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

from osn.envelopes import LABEL_MARKER, compute_tx_id
from osn.wire.common import common_pb2
from osn.wire.peer import transaction_pb2

if TYPE_CHECKING:
    from fabric.identity import Identity

NONCE_BYTES = 24  # as Fabric's crypto.GetRandomNonce


def label_nonce(label: str) -> bytes:
    return LABEL_MARKER + label.encode("utf-8")


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
