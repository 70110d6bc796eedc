"""Many Broadcasts and Delivers open at once from one client, each answered by a callback.

Why: an OSN serves one Broadcast stream strictly in turn (Fabric's handler receives an
envelope, orders it, which for Kafka waits for the broker's acknowledgement, answers, and
only then receives the next), so what the ordering service can take is set by how many
Broadcasts are open at once, not by how fast one client sends. A blocking call per thread
gives one open Broadcast per thread; here every call is its own stream on grpc's asyncio
API, all driven by one event-loop thread per client, so a client keeps hundreds open with
no thread each. Delivers go the same way for the workload's sake: a Deliver to a paused OSN
waits out its whole timeout, and one blocking call per worker thread let a few such
Delivers hold every thread of a run while the sends and broadcasts it should have started
waited.

Answers are those of OsnClient.broadcast and OsnClient.deliver (client.py): the status name,
or the blocks as dicts; OsnUnreachable when no answer came (a tx may or may not be ordered)
and DeliverFailed for a Deliver the OSN ended with another status.
"""
from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Literal

import grpc

from fabric.client import (CHANNEL_OPTIONS, BroadcastStatus, DeliverFailed, DeliverReading,
                                     OsnUnreachable, block_summary)
from fabric.envelopes import make_envelope
from fabric.identity import Identity
from osn.wire.common import common_pb2
from osn.wire.orderer import ab_pb2_grpc

Answer = Callable[[BroadcastStatus | OsnUnreachable], None]
Blocks = Callable[[list[dict] | OsnUnreachable | DeliverFailed], None]


class AsyncOsnClient:
    """Broadcasts and Delivers signed as `identity`, started from any thread; answers come on
    the loop thread."""

    def __init__(self, identity: Identity) -> None:
        self.identity = identity
        self._loop = asyncio.new_event_loop()
        self._stubs: dict[str, tuple[grpc.aio.Channel, ab_pb2_grpc.AtomicBroadcastStub]] = {}
        self._closed = False
        self._thread = threading.Thread(target=self._loop.run_forever, name="osn-async-calls", daemon=True)
        self._thread.start()

    def broadcast(self, address: str, channel: str, tx_label: str, answer: Answer, data: bytes = b"",
                  timeout: float = 10.0) -> None:
        """Start one Broadcast of an ENDORSER_TRANSACTION labelled `tx_label` and return; `answer`
        gets its status, or OsnUnreachable, exactly once (also when the client is closed first)."""
        envelope = make_envelope(channel, self.identity, data, label=tx_label)
        if self._closed:
            answer(OsnUnreachable(address, "CLIENT_CLOSED"))
            return
        future = asyncio.run_coroutine_threadsafe(self._one(address, envelope, timeout), self._loop)
        future.add_done_callback(lambda f: answer(_outcome(f, address)))

    async def _one(self, address: str, envelope: common_pb2.Envelope, timeout: float) -> BroadcastStatus:
        call = self._stub(address).Broadcast(timeout=timeout)
        try:
            await call.write(envelope)
            await call.done_writing()
            response = await call.read()
        except grpc.aio.AioRpcError as exc:
            raise OsnUnreachable(address, exc.code().name, exc.details() or "") from None
        if response is grpc.aio.EOF:
            raise OsnUnreachable(address, "NO_RESPONSE")
        return BroadcastStatus(common_pb2.Status.Name(response.status), response.info)

    def deliver(self, address: str, channel: str, start: int | Literal["oldest", "newest"], answer: Blocks,
                stop: int | None = None, timeout: float = 30.0, best_effort: bool = True) -> None:
        """Start one Deliver (as OsnClient.deliver) and return; `answer` gets the blocks as dicts,
        OsnUnreachable or DeliverFailed exactly once (also when the client is closed first)."""
        reading = DeliverReading(address, channel, self.identity, start, stop, best_effort)
        if self._closed:
            answer(OsnUnreachable(address, "CLIENT_CLOSED"))
            return
        future = asyncio.run_coroutine_threadsafe(self._read(reading, timeout), self._loop)
        future.add_done_callback(lambda f: answer(_outcome(f, address)))

    async def _read(self, reading: DeliverReading, timeout: float) -> list[dict]:
        call = self._stub(reading.address).Deliver(timeout=timeout)
        try:
            await call.write(reading.request)
            await call.done_writing()
            while (response := await call.read()) is not grpc.aio.EOF:
                if reading.take(response):
                    call.cancel()  # the OSN's stream may stay open: this Deliver is done
                    return [block_summary(b) for b in reading.blocks]
        except grpc.aio.AioRpcError as exc:
            raise OsnUnreachable(reading.address, exc.code().name, exc.details() or "") from None
        raise OsnUnreachable(reading.address, "NO_RESPONSE")

    def _stub(self, address: str) -> ab_pb2_grpc.AtomicBroadcastStub:
        """The address's channel, made on the loop thread (an aio channel belongs to its loop)."""
        if address not in self._stubs:
            tls = self.identity.tls
            channel = (grpc.aio.secure_channel(address, tls.credentials(), options=CHANNEL_OPTIONS) if tls
                       else grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS))
            self._stubs[address] = (channel, ab_pb2_grpc.AtomicBroadcastStub(channel))
        return self._stubs[address][1]

    def close(self, grace: float = 1.0) -> None:
        """Cancel what is still open (each answered OsnUnreachable CANCELLED) and stop the loop."""
        if self._closed:
            return
        self._closed = True

        async def shut() -> None:
            for channel, _ in self._stubs.values():
                await channel.close(grace=None)
            self._stubs.clear()

        closing = asyncio.run_coroutine_threadsafe(shut(), self._loop)
        closing.add_done_callback(lambda _f: self._loop.call_soon_threadsafe(self._loop.stop))
        if threading.current_thread() is self._thread:
            return  # closed from an answer: the loop stops once shut() has run
        try:
            closing.result(timeout=grace + 5)
        except Exception:  # noqa: BLE001 - closing is best effort; the thread is a daemon
            self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=grace + 5)


def _outcome(future: "asyncio.Future | object", address: str) -> BroadcastStatus | list[dict] | OsnUnreachable | DeliverFailed:
    try:
        return future.result()  # type: ignore[union-attr]
    except (OsnUnreachable, DeliverFailed) as exc:
        return exc
    except asyncio.CancelledError:
        return OsnUnreachable(address, "CANCELLED")
    except Exception as exc:  # noqa: BLE001 - no answer came: indeterminate
        return OsnUnreachable(address, "CLIENT_ERROR", f"{exc.__class__.__name__}: {exc}")
