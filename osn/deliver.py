"""Deliver: stream blocks of a channel from this OSN's own ledger (never from Kafka).

Seek semantics follow Fabric's common/deliver: start past the height is NOT_FOUND, start at
the height waits; FAIL_IF_NOT_READY answers NOT_FOUND instead of waiting; after the stop
block (or on error) one status closes the request. A chain whose consenter errored (it
lost its position in the partition, Fabric's closed errorChan, or failed unexpectedly)
answers SERVICE_UNAVAILABLE unless the client asked for BEST_EFFORT. Under mutual TLS a
request not bound to its connection's certificate is BAD_REQUEST before anything else is
looked at, as Fabric checks it with the channel header (tls.py).
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping

from google.protobuf.message import DecodeError

from osn.chain import Chain
from osn.envelopes import MalformedEnvelope, read_envelope
from osn.wire.common import common_pb2
from osn.wire.orderer import ab_pb2

log = logging.getLogger("osn")

WAIT_SLICE_S = 0.2  # how often a waiting Deliver checks that its client is still there


def _status(status: int) -> ab_pb2.DeliverResponse:
    return ab_pb2.DeliverResponse(status=status)


class Deliverer:
    def __init__(self, chains: Mapping[str, Chain]) -> None:
        self._chains = chains

    def handle(self, envelope: common_pb2.Envelope, is_active: Callable[[], bool] = lambda: True,
               binding: Callable[[bytes], str | None] | None = None) -> Iterator[ab_pb2.DeliverResponse]:
        """The responses to one seek request: blocks, then exactly one status (unless the client
        left). `binding`, under mutual TLS: why the header's tls_cert_hash does not bind the
        request to its connection, or None."""
        try:
            header, data = read_envelope(envelope)
            seek = ab_pb2.SeekInfo.FromString(data)
        except (MalformedEnvelope, DecodeError):
            yield _status(common_pb2.BAD_REQUEST)
            return
        if binding is not None and (why := binding(header.tls_cert_hash)) is not None:
            log.warning("rejecting deliver on channel %s: %s", header.channel, why)
            yield _status(common_pb2.BAD_REQUEST)
            return
        chain = self._chains.get(header.channel)
        if chain is None:
            yield _status(common_pb2.NOT_FOUND)
            return
        if not seek.HasField("start") or not seek.HasField("stop"):
            yield _status(common_pb2.BAD_REQUEST)
            return
        strict = seek.error_response == ab_pb2.SeekInfo.STRICT
        ledger = chain.ledger
        height = ledger.height
        start_kind = seek.start.WhichOneof("Type")
        if start_kind == "oldest":
            number = 0
        elif start_kind == "newest":
            number = max(height - 1, 0)
        elif start_kind == "specified":
            number = seek.start.specified.number
            if number > height:
                yield _status(common_pb2.NOT_FOUND)
                return
        elif start_kind == "next_commit":
            number = height
        else:
            yield _status(common_pb2.BAD_REQUEST)
            return
        stop_kind = seek.stop.WhichOneof("Type")
        if stop_kind == "oldest":
            stop = number
        elif stop_kind == "newest":
            # Newest-to-newest is one block; otherwise the height when the request arrived.
            stop = number if start_kind == "newest" else max(height - 1, 0)
        elif stop_kind == "specified":
            stop = seek.stop.specified.number
        else:
            yield _status(common_pb2.BAD_REQUEST)
            return
        if stop < number:
            yield _status(common_pb2.BAD_REQUEST)
            return
        while True:
            if strict and chain.errored:
                yield _status(common_pb2.SERVICE_UNAVAILABLE)
                return
            if number >= ledger.height:
                if seek.behavior == ab_pb2.SeekInfo.FAIL_IF_NOT_READY:
                    yield _status(common_pb2.NOT_FOUND)
                    return
                if not ledger.wait_for_height(number + 1, WAIT_SLICE_S):
                    if not is_active():
                        return
                    continue
            yield ab_pb2.DeliverResponse(block=ledger.block(number))
            if number == stop:
                break
            number += 1
        yield _status(common_pb2.SUCCESS)
