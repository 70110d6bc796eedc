"""Host-side client of the OSNs, used by tests, workloads and the benchmark.

Answers are plain data: broadcast gives the OSN's status name ("SUCCESS", "FORBIDDEN",
"SERVICE_UNAVAILABLE", ...) as a str whose `indeterminate` says that a SERVICE_UNAVAILABLE
envelope reached Kafka and may be ordered all the same; deliver gives blocks as dicts in the
history's shape. A call that got no answer (OSN down, deadline passed) raises
OsnUnreachable: the tx may or may not have been ordered.

Every request is an envelope signed by the client's Identity (identity.py): an MspIdentity
for Fabric's real orderer, a NamedIdentity for ordeal's model. A tx's history label travels
as its envelope's nonce, so blocks name their txs by label on either orderer.
"""
from __future__ import annotations

import threading
import time
from typing import Literal

import grpc

from osn.blocks import header_hash
from osn.answers import MAYBE_APPENDED
from fabric.config_update import config_of_block, last_config_index
from fabric.envelopes import make_envelope
from osn.envelopes import MalformedEnvelope, tx_label_of
from fabric.identity import Identity
from osn.blocks import persisted_offset
from osn.wire.common import common_pb2, configtx_pb2
from osn.wire.orderer import ab_pb2, ab_pb2_grpc

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


def block_last_offset(block: common_pb2.Block) -> int:
    """The block's Kafka LastOffsetPersisted; -1 for a block without consenter metadata (a
    real orderer's block 0 of a channel: its genesis/config block)."""
    offset = persisted_offset(block)
    return -1 if offset is None else offset


def block_summary(block: common_pb2.Block) -> dict:
    """A block as the history records it ("txs": the label of each tx, see tx_label_of)."""
    return {
        "number": block.header.number,
        "hash": header_hash(block.header).hex(),
        "previous_hash": block.header.previous_hash.hex(),
        "data_hash": block.header.data_hash.hex(),
        "txs": [tx_label_of(raw) for raw in block.data.data],
        "last_offset": block_last_offset(block),
    }


def _seek_position(at: int | Literal["oldest", "newest"]) -> ab_pb2.SeekPosition:
    if at == "oldest":
        return ab_pb2.SeekPosition(oldest=ab_pb2.SeekOldest())
    if at == "newest":
        return ab_pb2.SeekPosition(newest=ab_pb2.SeekNewest())
    return ab_pb2.SeekPosition(specified=ab_pb2.SeekSpecified(number=at))


class DeliverReading:
    """One Deliver request and what its answer stream has brought so far: the blocking client
    and the asynchronous one (async_client.py) both read a stream through it, so a Deliver
    ends the same way on either.

    stop=None: up to the OSN's height when the request arrives, without waiting (nothing
    there yet gives []). stop=n: waits for block n. best_effort=True still reads the ledger
    of an OSN whose chain halted (Fabric's BEST_EFFORT).
    """

    def __init__(self, address: str, channel: str, identity: Identity, start: int | Literal["oldest", "newest"],
                 stop: int | None, best_effort: bool) -> None:
        self.address, self.channel, self.upto_height = address, channel, stop is None
        seek = ab_pb2.SeekInfo(
            start=_seek_position(start),
            stop=_seek_position("newest" if self.upto_height else stop),
            behavior=ab_pb2.SeekInfo.FAIL_IF_NOT_READY if self.upto_height else ab_pb2.SeekInfo.BLOCK_UNTIL_READY,
            error_response=ab_pb2.SeekInfo.BEST_EFFORT if best_effort else ab_pb2.SeekInfo.STRICT)
        # Under mutual TLS the OSN refuses a Deliver not bound to the connection's certificate (tls.py).
        self.request = make_envelope(channel, identity, seek.SerializeToString(),
                                     header_type=common_pb2.DELIVER_SEEK_INFO,
                                     tls_cert_hash=identity.tls.binding_hash if identity.tls else b"")
        self.blocks: list[common_pb2.Block] = []

    def take(self, response: ab_pb2.DeliverResponse) -> bool:
        """Take one answer: True once the Deliver is done (self.blocks is the answer); raises
        DeliverFailed for a final status other than SUCCESS."""
        if response.WhichOneof("Type") == "block":
            self.blocks.append(response.block)
            return False
        status = common_pb2.Status.Name(response.status)
        if status == "SUCCESS" or (status == "NOT_FOUND" and self.upto_height and not self.blocks):
            return True
        raise DeliverFailed(self.address, self.channel, status, [block_summary(b) for b in self.blocks])


CHANNEL_OPTIONS = [("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
                   ("grpc.max_send_message_length", MAX_MESSAGE_BYTES)]


class OsnClient:
    """Holds one gRPC channel per OSN address; thread-safe. Signs as `identity` and connects
    with its TLS material (plain gRPC when it has none)."""

    def __init__(self, identity: Identity) -> None:
        self.identity = identity
        self._stubs: dict[str, tuple[grpc.Channel, ab_pb2_grpc.AtomicBroadcastStub]] = {}
        self._lock = threading.Lock()

    def _stub(self, address: str) -> ab_pb2_grpc.AtomicBroadcastStub:
        with self._lock:
            if address not in self._stubs:
                tls = self.identity.tls
                channel = (grpc.secure_channel(address, tls.credentials(), options=CHANNEL_OPTIONS) if tls
                           else grpc.insecure_channel(address, options=CHANNEL_OPTIONS))
                self._stubs[address] = (channel, ab_pb2_grpc.AtomicBroadcastStub(channel))
            return self._stubs[address][1]

    def broadcast(self, address: str, channel: str, tx_label: str, data: bytes = b"", timeout: float = 10.0,
                  identity: Identity | None = None) -> BroadcastStatus:
        """Broadcast one ENDORSER_TRANSACTION labelled `tx_label`, signed by the client's
        identity (or `identity`); the status name the OSN answered."""
        envelope = make_envelope(channel, identity or self.identity, data, label=tx_label)
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
        return [block_summary(b) for b in self.deliver_blocks(address, channel, start, stop, timeout, best_effort)]

    def deliver_blocks(self, address: str, channel: str, start: int | Literal["oldest", "newest"] = 0,
                       stop: int | None = None, timeout: float = 30.0,
                       best_effort: bool = True) -> list[common_pb2.Block]:
        """As deliver, but the blocks as Fabric's common.Block messages, untouched."""
        reading = DeliverReading(address, channel, self.identity, start, stop, best_effort)
        try:
            for response in self._stub(address).Deliver(iter([reading.request]), timeout=timeout):
                if reading.take(response):
                    return reading.blocks
        except grpc.RpcError as exc:
            raise OsnUnreachable(address, exc.code().name, exc.details() or "") from None
        raise OsnUnreachable(address, "NO_RESPONSE")

    def config_block(self, address: str, channel: str, timeout: float = 10.0,
                     best_effort: bool = True) -> common_pb2.Block:
        """The channel's last config block as the OSN at `address` has it: its newest block's
        LAST_CONFIG metadata names it. Raises MalformedEnvelope for a block without one."""
        newest = self.deliver_blocks(address, channel, "newest", None, timeout=timeout, best_effort=best_effort)
        if not newest:
            raise MalformedEnvelope(f"{address} channel {channel}: no block delivered")
        number = last_config_index(newest[-1])
        return self.deliver_blocks(address, channel, number, number, timeout=timeout)[0]

    def channel_config(self, address: str, channel: str, timeout: float = 10.0,
                       best_effort: bool = True) -> configtx_pb2.Config:
        """The channel's config as the OSN at `address` has it (its last config block's)."""
        return config_of_block(self.config_block(address, channel, timeout, best_effort))

    def wait_for_block(self, address: str, channel: str, number: int = 0, timeout: float = 60.0,
                       poll: float = 0.5, best_effort: bool = False) -> dict:
        """Block `number` of `channel` once the OSN delivers it (block_summary).

        Retries while the OSN is unreachable, does not have the channel yet (NOT_FOUND, also
        for a block past its height) or its chain is not ready (SERVICE_UNAVAILABLE: with
        best_effort=False a Kafka chain that has not connected is not ready even when its
        ledger holds the block). Raises TimeoutError naming the last answer.
        """
        deadline = time.monotonic() + timeout
        last = "no attempt"
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"{address} channel {channel}: no block {number} within {timeout:g} s ({last})")
            try:
                blocks = self.deliver(address, channel, number, number, timeout=min(remaining, 5.0),
                                      best_effort=best_effort)
                if blocks:
                    return blocks[0]
                last = "empty deliver"
            except DeliverFailed as exc:
                if exc.status not in ("NOT_FOUND", "SERVICE_UNAVAILABLE"):
                    raise
                last = exc.status
            except OsnUnreachable as exc:
                last = exc.code
            time.sleep(min(poll, max(0.0, deadline - time.monotonic())))

    def close(self) -> None:
        with self._lock:
            for channel, _ in self._stubs.values():
                channel.close()
            self._stubs.clear()
