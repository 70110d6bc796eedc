"""Signing a channel-creation transaction as Fabric v1.4's `peer channel create -f` does.

`configtxgen -outputCreateChannelTx` writes an Envelope whose payload has a CONFIG_UPDATE
channel header and whose data is a common.ConfigUpdateEnvelope without signatures. The peer
CLI (peer/channel/create.go) checks that shape, appends one common.ConfigSignature of its
identity (signature_header = a marshalled SignatureHeader(creator, fresh nonce); signature
over signature_header || config_update) and sends the result in a new envelope: CONFIG_UPDATE
for the same channel, version 0, epoch 0, signed by the same identity (CreateSignedEnvelope).
The orderer then checks the signatures against the consortium's channel creation policy.
"""
from __future__ import annotations

import os

from google.protobuf.message import DecodeError

from clusters.orderer.envelopes import NONCE_BYTES, MalformedEnvelope, signed_envelope
from clusters.orderer.identity import Identity
from clusters.orderer.wire.common import common_pb2, configtx_pb2


def _config_update_parts(tx: common_pb2.Envelope) -> tuple[str, configtx_pb2.ConfigUpdateEnvelope]:
    try:
        payload = common_pb2.Payload.FromString(tx.payload)
        if not payload.HasField("header") or not payload.header.channel_header:
            raise MalformedEnvelope("channel creation tx has no channel header")
        channel_header = common_pb2.ChannelHeader.FromString(payload.header.channel_header)
        if channel_header.type != common_pb2.CONFIG_UPDATE:
            raise MalformedEnvelope(f"channel creation tx has header type {channel_header.type}, not CONFIG_UPDATE")
        if not channel_header.channel_id:
            raise MalformedEnvelope("channel creation tx has no channel id")
        update = configtx_pb2.ConfigUpdateEnvelope.FromString(payload.data)
    except DecodeError as exc:
        raise MalformedEnvelope(f"channel creation tx: {exc}") from None
    if not update.config_update:
        raise MalformedEnvelope("channel creation tx carries no config update")
    return channel_header.channel_id, update


def read_channel_id(tx: common_pb2.Envelope) -> str:
    """The channel a CONFIG_UPDATE envelope creates or updates; raises MalformedEnvelope."""
    return _config_update_parts(tx)[0]


def config_signature(config_update: bytes, identity: Identity) -> configtx_pb2.ConfigSignature:
    """`identity`'s signature of a marshalled ConfigUpdate, as a ConfigUpdateEnvelope holds it."""
    signature_header = common_pb2.SignatureHeader(creator=identity.creator,
                                                  nonce=os.urandom(NONCE_BYTES)).SerializeToString()
    return configtx_pb2.ConfigSignature(signature_header=signature_header,
                                        signature=identity.sign(signature_header + config_update))


def sign_channel_creation(tx: common_pb2.Envelope, identity: Identity) -> common_pb2.Envelope:
    """The envelope to Broadcast to create the channel of `tx` (configtxgen's output)."""
    channel, update = _config_update_parts(tx)
    signed = configtx_pb2.ConfigUpdateEnvelope()
    signed.CopyFrom(update)
    signed.signatures.append(config_signature(update.config_update, identity))
    return signed_envelope(channel, identity, signed.SerializeToString(), common_pb2.CONFIG_UPDATE,
                           with_tx_id=False)
