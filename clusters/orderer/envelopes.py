"""Reading and writing Fabric envelopes: Envelope -> Payload -> Header -> (ChannelHeader,
SignatureHeader). Shared by Broadcast, Deliver and the client so they agree on one shape.
"""
from __future__ import annotations

from dataclasses import dataclass

from google.protobuf.message import DecodeError

from clusters.orderer.wire.common import common_pb2


class MalformedEnvelope(ValueError):
    """The envelope cannot be read as a Fabric payload with channel and signature headers."""


@dataclass(frozen=True)
class EnvelopeHeader:
    type: int
    channel: str
    tx_id: str
    creator: str


def read_envelope(envelope: common_pb2.Envelope) -> tuple[EnvelopeHeader, bytes]:
    """The envelope's header fields and payload data; raises MalformedEnvelope."""
    try:
        payload = common_pb2.Payload.FromString(envelope.payload)
        if not payload.HasField("header"):
            raise MalformedEnvelope("payload has no header")
        channel_header = common_pb2.ChannelHeader.FromString(payload.header.channel_header)
        signature_header = common_pb2.SignatureHeader.FromString(payload.header.signature_header)
        creator = signature_header.creator.decode("utf-8")
    except (DecodeError, UnicodeDecodeError) as exc:
        raise MalformedEnvelope(str(exc)) from None
    if not channel_header.channel_id:
        raise MalformedEnvelope("channel header has no channel id")
    header = EnvelopeHeader(channel_header.type, channel_header.channel_id, channel_header.tx_id, creator)
    return header, payload.data


def tx_id_of(raw_envelope: bytes) -> str:
    """The tx id of a marshalled envelope as stored in a block ("" when unreadable)."""
    try:
        header, _ = read_envelope(common_pb2.Envelope.FromString(raw_envelope))
    except (DecodeError, MalformedEnvelope):
        return ""
    return header.tx_id


def make_envelope(channel: str, creator: str, data: bytes = b"", tx_id: str = "",
                  header_type: int = common_pb2.ENDORSER_TRANSACTION) -> common_pb2.Envelope:
    """An unsigned envelope (ordeal's OSN checks writers by creator id, not by signature)."""
    channel_header = common_pb2.ChannelHeader(type=header_type, channel_id=channel, tx_id=tx_id)
    signature_header = common_pb2.SignatureHeader(creator=creator.encode("utf-8"))
    payload = common_pb2.Payload(
        header=common_pb2.Header(channel_header=channel_header.SerializeToString(),
                                 signature_header=signature_header.SerializeToString()),
        data=data)
    return common_pb2.Envelope(payload=payload.SerializeToString())
