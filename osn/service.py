"""The gRPC AtomicBroadcast servicer: Fabric's two streaming RPCs over Broadcaster and Deliverer."""
from __future__ import annotations

from collections.abc import Iterator

import grpc

from osn.broadcast import Broadcaster
from osn.deliver import Deliverer
from osn.tls import binding_error
from osn.wire.common import common_pb2
from osn.wire.orderer import ab_pb2, ab_pb2_grpc


class AtomicBroadcastService(ab_pb2_grpc.AtomicBroadcastServicer):
    def __init__(self, broadcaster: Broadcaster, deliverer: Deliverer, mutual_tls: bool = False) -> None:
        self._broadcaster = broadcaster
        self._deliverer = deliverer
        self._mutual_tls = mutual_tls

    def Broadcast(self, request_iterator: Iterator[common_pb2.Envelope],
                  context: grpc.ServicerContext) -> Iterator[ab_pb2.BroadcastResponse]:
        for envelope in request_iterator:
            yield self._broadcaster.handle(envelope)

    def Deliver(self, request_iterator: Iterator[common_pb2.Envelope],
                context: grpc.ServicerContext) -> Iterator[ab_pb2.DeliverResponse]:
        binding = (lambda claimed: binding_error(context, claimed)) if self._mutual_tls else None
        for envelope in request_iterator:
            yield from self._deliverer.handle(envelope, context.is_active, binding)
