"""Broadcast: admit an envelope to a channel, answering SUCCESS only once Kafka acknowledged it.

Checks follow Fabric's message processor for normal transactions: a readable header, a
known channel, a non-empty payload no larger than AbsoluteMaxBytes, a creator allowed by the
channel's writers; then the chain produces it. Any failure to enqueue is SERVICE_UNAVAILABLE.
"""
from __future__ import annotations

import logging
from collections.abc import Mapping

from osn.chain import Chain, ChainNotReady
from osn.envelopes import MalformedEnvelope, read_envelope
from osn.partition_log import LogUnavailable
from osn.answers import MAYBE_APPENDED
from osn.settings import OsnSettings
from osn.wire.common import common_pb2
from osn.wire.orderer import ab_pb2

log = logging.getLogger(__name__)



_CONFIG_TYPES = frozenset({common_pb2.CONFIG_UPDATE, common_pb2.CONFIG, common_pb2.ORDERER_TRANSACTION})


def _answer(status: int, info: str = "") -> ab_pb2.BroadcastResponse:
    return ab_pb2.BroadcastResponse(status=status, info=info)


class Broadcaster:
    def __init__(self, chains: Mapping[str, Chain], settings: OsnSettings) -> None:
        self._chains = chains
        self._settings = settings

    def handle(self, envelope: common_pb2.Envelope) -> ab_pb2.BroadcastResponse:
        try:
            header, _ = read_envelope(envelope)
        except MalformedEnvelope as exc:
            return _answer(common_pb2.BAD_REQUEST, f"malformed envelope: {exc}")
        chain = self._chains.get(header.channel)
        if chain is None:
            return _answer(common_pb2.NOT_FOUND, f"no channel {header.channel}")
        if header.type in _CONFIG_TYPES:
            # Fabric would validate it against the channel's config and order it alone in a
            # block; the model keeps no channel config, so it must not order one as a tx.
            return _answer(common_pb2.BAD_REQUEST, f"{common_pb2.HeaderType.Name(header.type)} messages are not "
                                                   "modelled (the model orders no config update; docs/orderers.md)")
        # Fabric's size filter counts len(payload) + len(signature), as the block cutter does,
        # and answers BAD_REQUEST, not REQUEST_ENTITY_TOO_LARGE.
        size = len(envelope.payload) + len(envelope.signature)
        limit = self._settings.batch.absolute_max_bytes
        if size > limit:
            return _answer(common_pb2.BAD_REQUEST, f"message is {size} bytes, above AbsoluteMaxBytes {limit}")
        if not self._settings.may_write(header.channel, header.creator):
            return _answer(common_pb2.FORBIDDEN, f"{header.creator!r} may not write to {header.channel}")
        try:
            offset = chain.order(envelope.SerializeToString())
        except ChainNotReady as exc:
            return _answer(common_pb2.SERVICE_UNAVAILABLE, str(exc))
        except LogUnavailable as exc:
            log.info("[channel %s] produce of %s failed: %s", header.channel, header.tx_id, exc)
            info = f"kafka {exc} ({MAYBE_APPENDED})" if exc.maybe_appended else f"kafka {exc}"
            return _answer(common_pb2.SERVICE_UNAVAILABLE, info)
        return _answer(common_pb2.SUCCESS, f"offset {offset}")
