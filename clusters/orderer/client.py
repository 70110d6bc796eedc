"""Host-side client of the OSNs, used by tests, workloads and the benchmark.

Answers are plain data: broadcast gives the OSN's status name ("SUCCESS", "FORBIDDEN",
"SERVICE_UNAVAILABLE", ...) as a str whose `indeterminate` says that a SERVICE_UNAVAILABLE
envelope reached Kafka and may be ordered all the same; deliver gives blocks as dicts in the
history's shape. A call that got no answer (OSN down, deadline passed) raises
OsnUnreachable: the tx may or may not have been ordered.
"""
from __future__ import annotations

import threading
from typing import Literal

import grpc

from clusters.orderer.block_hash import header_hash
from clusters.orderer.broadcast import MAYBE_APPENDED
from clusters.orderer.envelopes import make_envelope, tx_id_of
from clusters.orderer.ledger import last_offset_of
from clusters.orderer.wire.common import common_pb2
from clusters.orderer.wire.orderer import ab_pb2, ab_pb2_grpc

MAX_MESSAGE_BYTES = 128 * 1024 * 1024


class BroadcastStatus(str):
    """The status name the OSN answered (compares equal to "SUCCESS" etc.), with its info text."""

    info: str

    def __new__(cls, status: str, info: str = "") -> "BroadcastStatus":
        answer = super().__new__(cls, status)
        answer.info = info
        return answer

    @property
    def indeterminate(self) -> bool:
        """SERVICE_UNAVAILABLE for an envelope that reached Kafka: it may still be ordered."""
        return self == "SERVICE_UNAVAILABLE" and MAYBE_APPENDED in self.info


class OsnUnreachable(Exception):
    """No answer from the OSN; `code` is the gRPC status name (UNAVAILABLE, DEADLINE_EXCEEDED, ...)."""

    def __init__(self, address: str, code: str, detail: str = "") -> None:
        super().__init__(f"{address}: {code} {detail}".rstrip())
        self.code = code


class DeliverFailed(Exception):
    """The OSN closed the Deliver request with a status other than SUCCESS; `status` names it."""

    def __init__(self, address: str, channel: str, status: str, blocks: list[dict]) -> None:
        super().__init__(f"{address} channel {channel}: deliver ended with {status}")
        self.status = status
        self.blocks = blocks


def block_summary(block: common_pb2.Block) -> dict:
    """A block as the history records it."""
    return {
        "number": block.header.number,
        "hash": header_hash(block.header).hex(),
        "previous_hash": block.header.previous_hash.hex(),
        "data_hash": block.header.data_hash.hex(),
        "txs": [tx_id_of(raw) for raw in block.data.data],
        "last_offset": last_offset_of(block),
    }


def _seek_position(at: int | Literal["oldest", "newest"]) -> ab_pb2.SeekPosition:
    if at == "oldest":
        return ab_pb2.SeekPosition(oldest=ab_pb2.SeekOldest())
    if at == "newest":
        return ab_pb2.SeekPosition(newest=ab_pb2.SeekNewest())
    return ab_pb2.SeekPosition(specified=ab_pb2.SeekSpecified(number=at))


class OsnClient:
    """Holds one gRPC channel per OSN address; thread-safe."""

    def __init__(self, creator: str = "client") -> None:
        self.creator = creator
        self._stubs: dict[str, tuple[grpc.Channel, ab_pb2_grpc.AtomicBroadcastStub]] = {}
        self._lock = threading.Lock()

    def _stub(self, address: str) -> ab_pb2_grpc.AtomicBroadcastStub:
        with self._lock:
            if address not in self._stubs:
                channel = grpc.insecure_channel(address, options=[
                    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
                    ("grpc.max_send_message_length", MAX_MESSAGE_BYTES)])
                self._stubs[address] = (channel, ab_pb2_grpc.AtomicBroadcastStub(channel))
            return self._stubs[address][1]

    def broadcast(self, address: str, channel: str, tx: str, creator: str | None = None,
                  data: bytes = b"", timeout: float = 10.0) -> BroadcastStatus:
        """Broadcast one tx (its id is `tx`); the status name the OSN answered."""
        envelope = make_envelope(channel, creator if creator is not None else self.creator, data, tx_id=tx)
        return self.broadcast_envelope(address, envelope, timeout)

    def broadcast_envelope(self, address: str, envelope: common_pb2.Envelope,
                           timeout: float = 10.0) -> BroadcastStatus:
        try:
            for response in self._stub(address).Broadcast(iter([envelope]), timeout=timeout):
                return BroadcastStatus(common_pb2.Status.Name(response.status), response.info)
        except grpc.RpcError as exc:
            raise OsnUnreachable(address, exc.code().name, exc.details() or "") from None
        raise OsnUnreachable(address, "NO_RESPONSE")

    def deliver(self, address: str, channel: str, start: int | Literal["oldest", "newest"] = 0,
                stop: int | None = None, timeout: float = 30.0, best_effort: bool = True) -> list[dict]:
        """Blocks start..stop as dicts (see block_summary).

        stop=None: up to the OSN's height when the request arrives, without waiting
        (nothing there yet gives []). stop=n: waits for block n. best_effort=True still
        reads the ledger of an OSN whose chain halted (Fabric's BEST_EFFORT).
        """
        upto_height = stop is None
        seek = ab_pb2.SeekInfo(
            start=_seek_position(start),
            stop=_seek_position("newest" if upto_height else stop),
            behavior=ab_pb2.SeekInfo.FAIL_IF_NOT_READY if upto_height else ab_pb2.SeekInfo.BLOCK_UNTIL_READY,
            error_response=ab_pb2.SeekInfo.BEST_EFFORT if best_effort else ab_pb2.SeekInfo.STRICT)
        request = make_envelope(channel, self.creator, seek.SerializeToString(),
                                header_type=common_pb2.DELIVER_SEEK_INFO)
        blocks: list[dict] = []
        try:
            for response in self._stub(address).Deliver(iter([request]), timeout=timeout):
                if response.WhichOneof("Type") == "block":
                    blocks.append(block_summary(response.block))
                    continue
                status = common_pb2.Status.Name(response.status)
                if status == "SUCCESS" or (status == "NOT_FOUND" and upto_height and not blocks):
                    return blocks
                raise DeliverFailed(address, channel, status, blocks)
        except grpc.RpcError as exc:
            raise OsnUnreachable(address, exc.code().name, exc.details() or "") from None
        raise OsnUnreachable(address, "NO_RESPONSE")

    def close(self) -> None:
        with self._lock:
            for channel, _ in self._stubs.values():
                channel.close()
            self._stubs.clear()
