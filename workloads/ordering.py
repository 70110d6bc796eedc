"""The ordering workload: unique tx ids broadcast to random OSNs on every channel, Deliver
followers reading each OSN's chain, and after the heal one Deliver of every block of every
channel from every OSN (docs/anomalies.md: lost-tx, duplicate-tx, block-fork, broken-chain).
With `config_fraction`, channel config updates among them (`config-update`: a new BatchSize
MaxMessageCount or BatchTimeout, signed by the orderer org's admin; Fabric's orderer only),
which Fabric's Kafka consenter orders alone in a block, re-validating one that a config
ordered meanwhile may have made stale (config-not-alone, batch-overflow).

Broadcast answers are classified by what they say about the envelope: SUCCESS is an
acknowledged write; BAD_REQUEST / NOT_FOUND / FORBIDDEN and a SERVICE_UNAVAILABLE that
never reached Kafka are refusals (fail); a SERVICE_UNAVAILABLE marked maybe-appended, an
unknown status, or no answer at all may still be ordered (info). Deliver is a read, so a
Deliver that failed changed nothing and is `fail`.
"""
from __future__ import annotations

import itertools
import random
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ground.cluster_view import ClusterView
from fabric.async_client import AsyncOsnClient
from fabric.client import BroadcastStatus, DeliverFailed, OsnClient, OsnUnreachable
from fabric.config_update import BATCH_VALUES, batch_update, config_update_envelope
from fabric.envelopes import label_nonce
from osn.envelopes import MalformedEnvelope
from ground.generator import Answer, Context
from ground.op import FAIL, INFO, OK, Op
from ground.workload import Workload
from workloads.final_reads import FinalReports, UntilOk

REFUSED = frozenset({"BAD_REQUEST", "NOT_FOUND", "FORBIDDEN"})  # checked before anything reaches Kafka
# Seconds the errored probe of a final Deliver may take (the OSN answers it at once): it
# comes after final_deliver_timeout, within the scenario's op_timeout.
_PROBE_TIMEOUT = 1.0


class OrderingOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    channels: list[str] | None = Field(None, min_length=1, description="None = every channel of the variant")
    broadcast_fraction: float = Field(0.7, ge=0, le=1, description="share of ops that are broadcasts; the rest deliver")
    broadcast_timeout: float = Field(5.0, gt=0, le=300, description="seconds one Broadcast may take")
    deliver_timeout: float = Field(5.0, gt=0, le=300, description="seconds one Deliver may take")
    final_deliver_timeout: float = Field(8.0, gt=0, le=600,
                                         description="seconds a final Deliver may keep reading; below op_timeout")
    config_fraction: float = Field(0.0, ge=0, le=0.5,
                                   description="share of ops that are channel config updates (Fabric's orderer only): "
                                               "a new max_message_count or batch_timeout_ms for one channel")
    max_message_counts: tuple[int, int] = Field((2, 20), description="the range a new MaxMessageCount is drawn from")
    batch_timeouts_ms: tuple[int, int] = Field((200, 1000), description="the range a new BatchTimeout is drawn from")
    settle: float = Field(1.0, gt=0, le=60,
                          description="seconds a final Deliver waits for new blocks before it calls the chain complete, "
                                      "once the block of its channel's acknowledged final broadcast is in; above the "
                                      "variant's batch timeout")


def _status_code(status: str) -> str:
    return status.lower().replace("_", "-")


class DeliverCursors:
    """Where the Deliver followers are: the next block number to ask each OSN for, per channel.
    Clients advance it from what they read and the generator starts each deliver there
    (less one block, so consecutive reads overlap and the hash chain is checkable across them).
    A follower's first read of a channel on an OSN starts at its newest block: from block 0
    it would read every block a kept cluster's earlier runs cut (thousands after a few
    runs at speed), past the Deliver timeout, and never advance. The final Deliver reads
    every block from 0 all the same."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._next: dict[tuple[str, str], int] = {}

    def start(self, channel: str, osn: str) -> int | str:
        with self._lock:
            known = self._next.get((channel, osn))
            return "newest" if known is None else max(0, known - 1)

    def advance(self, channel: str, osn: str, blocks: list[dict]) -> None:
        if blocks:
            with self._lock:
                key = (channel, osn)
                self._next[key] = max(self._next.get(key, 0), blocks[-1]["number"] + 1)


class Nudges:
    """The final broadcast of each channel that the OSN acknowledged (its tx id): its block
    must be in a final Deliver before that Deliver may call the chain complete. SUCCESS
    means the tx reached Kafka, not that its block is cut yet: that takes the batch timer
    and a time-to-cut message through Kafka, which after a fault can outlast `settle`; a
    Deliver that stopped before the block was cut read one block less than its peers, and
    the check called its OSN lagging (lagging-osn)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._acked: dict[str, str] = {}

    def acked(self, channel: str, tx: str) -> None:
        with self._lock:
            self._acked[channel] = tx

    def awaited(self, channel: str) -> str | None:
        with self._lock:
            return self._acked.get(channel)


class ConfigSlots:
    """Which (channel, setting) has a config update in flight: at most one each, so that two
    updates of one value never race for one version (the second would be refused, or, both
    acknowledged, discarded by Fabric on re-validation). Updates of the other setting of a
    channel may overlap one: that is what makes Fabric re-validate and re-submit."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._busy: set[tuple[str, str]] = set()

    def take(self, channel: str, setting: str) -> bool:
        with self._lock:
            if (channel, setting) in self._busy:
                return False
            self._busy.add((channel, setting))
            return True

    def give_back(self, channel: str, setting: str) -> None:
        with self._lock:
            self._busy.discard((channel, setting))


class OrderingOps:
    """The main phase's endless ops: a broadcast of the next tx id to a random OSN and channel,
    a deliver from where that OSN's follower is, or (config_fraction) a config update."""

    def __init__(self, opts: OrderingOptions, channels: list[str], osns: list[str], token: str,
                 cursors: DeliverCursors, rng: random.Random, slots: ConfigSlots | None = None):
        self.opts, self.channels, self.osns, self.rng, self.cursors = opts, channels, osns, rng, cursors
        self.token = token
        self.slots = slots if slots is not None else ConfigSlots()
        self.tx = itertools.count()  # runs under the runner's generator lock: ids are unique

    def op(self, ctx: Context) -> Answer:
        r = self.rng
        pick, channel, osn = r.random(), r.choice(self.channels), r.choice(self.osns)
        if self.opts.config_fraction and r.random() < self.opts.config_fraction:
            setting = r.choice(sorted(BATCH_VALUES))
            low, high = self.opts.max_message_counts if setting == "max_message_count" else self.opts.batch_timeouts_ms
            if self.slots.take(channel, setting):
                return {"f": "config-update", "value": {"channel": channel, "osn": osn,
                                                        "tx": f"cfg-{self.token}-{next(self.tx)}",
                                                        setting: r.randint(low, high)}}
        if pick < self.opts.broadcast_fraction:
            return {"f": "broadcast", "value": {"channel": channel, "osn": osn, "tx": f"tx-{self.token}-{next(self.tx)}"}}
        return {"f": "deliver", "value": {"channel": channel, "osn": osn, "from": self.cursors.start(channel, osn)}}


class OrderingClient:
    """One process's gRPC channels to the OSNs. With the scenario's in_flight above 1 a
    broadcast or deliver is started without waiting (invoke_async): an OSN serves each
    Broadcast stream in turn, so the ordering service's throughput is as many Broadcasts as
    are open at once; and a Deliver to a paused OSN holds no worker thread for its timeout."""

    async_fs = frozenset({"broadcast", "deliver"})

    def __init__(self, opts: OrderingOptions, cursors: DeliverCursors, finals: FinalReports,
                 addresses: dict[str, str] | None = None, nudges: Nudges | None = None,
                 slots: ConfigSlots | None = None):
        self.opts, self.cursors, self.finals, self.addresses = opts, cursors, finals, addresses or {}
        self.nudges = nudges if nudges is not None else Nudges()
        self.slots = slots if slots is not None else ConfigSlots()
        self.config_admin: Any = None  # who signs config updates (Cluster.config_admin)
        self.osn: OsnClient | None = None
        self._calls: AsyncOsnClient | None = None  # made at the first invoke_async
        self._calls_lock = threading.Lock()
        # Which ordering service answers ({"implementation", "version"}), carried by the final
        # delivers so that the history itself says what it tested.
        self.orderer: dict[str, str] | None = None
        self._closed = threading.Event()

    def open(self, cluster: ClusterView, process: int) -> "OrderingClient":
        client = OrderingClient(self.opts, self.cursors, self.finals, cluster.osn_addresses(), self.nudges,
                                self.slots)
        client.osn = OsnClient(cluster.client_identity())
        if self.opts.config_fraction:
            client.config_admin = cluster.config_admin()
        client.orderer = cluster.orderer_description()
        return client

    def invoke(self, op: Op) -> Op:
        f, value = op["f"], op["value"]
        if value.get("osn") not in self.addresses:
            return {"type": FAIL, "value": value, "error": "unknown-osn"}
        if f == "broadcast" and value.get("final"):
            answer = self.finals.answer(value, self.broadcast)
            if answer["type"] == OK:
                self.nudges.acked(value["channel"], value["tx"])
            return answer
        if f == "broadcast":
            return self.broadcast(value)
        if f == "deliver" and value.get("final"):
            return self.finals.answer(value, self.final_deliver)
        if f == "deliver":
            return self.deliver(value)
        if f == "config-update":
            try:
                return self.config_update(value)
            finally:
                self.slots.give_back(value["channel"], next(k for k in BATCH_VALUES if k in value))
        return {"type": FAIL, "value": value, "error": f"unknown-f:{f}"}

    def invoke_async(self, op: Op, done: Callable[[Op], None]) -> None:
        """Start a broadcast or a deliver and return; `done` gets its completion when the OSN
        answers (on the client's loop thread). A final broadcast or deliver, which is asked
        again until it is complete, and an op for an unknown OSN are answered here and now."""
        value = op["value"]
        if value.get("final") or value.get("osn") not in self.addresses:
            done(self.invoke(op))
            return
        if self._closed.is_set():  # nothing is sent once the process's client is closed
            done({"type": FAIL, "value": value, "error": "client-closed"})
            return
        with self._calls_lock:
            if self._calls is None:
                assert self.osn is not None
                self._calls = AsyncOsnClient(self.osn.identity)
            calls = self._calls
        address = self.addresses[value["osn"]]
        if op["f"] == "deliver":
            calls.deliver(address, value["channel"], value["from"],
                          lambda answer: done(self._deliver_outcome(value, answer)), timeout=self.opts.deliver_timeout)
            return
        calls.broadcast(address, value["channel"], value["tx"],
                        lambda answer: done(self._broadcast_outcome(value, answer)),
                        timeout=self.opts.broadcast_timeout)

    def broadcast(self, value: dict[str, Any]) -> Op:
        assert self.osn is not None
        try:
            status = self.osn.broadcast(self.addresses[value["osn"]], value["channel"], value["tx"],
                                        timeout=self.opts.broadcast_timeout)
        except OsnUnreachable as exc:
            return self._broadcast_outcome(value, exc)
        return self._broadcast_outcome(value, status)

    def config_update(self, value: dict[str, Any]) -> Op:
        """Build the update on the channel's config as this OSN has it now (its last config
        block), sign it as the orderer org's admin and Broadcast it; the completion carries the
        `version` the update writes. Nothing is sent when the config cannot be read (fail)."""
        assert self.osn is not None
        if self.config_admin is None:
            return {"type": FAIL, "value": value, "error": "no-config-admin"}
        setting = next(k for k in BATCH_VALUES if k in value)
        address, channel = self.addresses[value["osn"]], value["channel"]
        timeout = self.opts.deliver_timeout
        try:
            config = self.osn.channel_config(address, channel, timeout=timeout)
            update, version = batch_update(channel, config, setting, value[setting])
        except (OsnUnreachable, DeliverFailed) as exc:
            return {"type": FAIL, "value": value, "error": f"config-unread:{_deliver_error(exc)}"}
        except (MalformedEnvelope, IndexError) as exc:
            return {"type": FAIL, "value": value, "error": f"config-unread:{exc}"}
        envelope = config_update_envelope(channel, update, [self.config_admin], self.osn.identity,
                                          label_nonce(value["tx"]))
        value = {**value, "version": version}
        try:
            status = self.osn.broadcast_envelope(address, envelope, timeout=self.opts.broadcast_timeout)
        except OsnUnreachable as exc:
            return self._broadcast_outcome(value, exc)
        return self._broadcast_outcome(value, status)

    @staticmethod
    def _broadcast_outcome(value: dict[str, Any], status: BroadcastStatus | OsnUnreachable) -> Op:
        if isinstance(status, OsnUnreachable):  # the envelope may have reached Kafka before the answer was lost
            return {"type": INFO, "value": value, "error": _status_code(status.code)}
        if status == "SUCCESS":
            return {"type": OK, "value": {**value, "status": "SUCCESS"}}
        definite = status in REFUSED or (status == "SERVICE_UNAVAILABLE" and not status.indeterminate)
        # The status an orderer answered rides in the value, as SUCCESS does: the checkers read
        # an OSN that refuses every broadcast after the faults (stalled-osn) from it.
        return {"type": FAIL if definite else INFO, "value": {**value, "status": str(status)},
                "error": _status_code(status)}

    def _read(self, value: dict[str, Any], start: int | str, timeout: float) -> list[dict]:
        assert self.osn is not None
        # stop=None: up to the OSN's height now, without waiting for blocks not yet cut.
        blocks = self.osn.deliver(self.addresses[value["osn"]], value["channel"], start, None, timeout=timeout)
        self.cursors.advance(value["channel"], value["osn"], blocks)
        return blocks

    def deliver(self, value: dict[str, Any]) -> Op:
        try:
            assert self.osn is not None
            blocks = self.osn.deliver(self.addresses[value["osn"]], value["channel"], value["from"], None,
                                      timeout=self.opts.deliver_timeout)
        except (OsnUnreachable, DeliverFailed) as exc:
            return self._deliver_outcome(value, exc)
        return self._deliver_outcome(value, blocks)

    def _deliver_outcome(self, value: dict[str, Any], answer: list[dict] | OsnUnreachable | DeliverFailed) -> Op:
        """A deliver's completion: its blocks (and the follower moved past them), or a fail
        (a read changes nothing, so a read without an answer is no indeterminate op)."""
        if isinstance(answer, (OsnUnreachable, DeliverFailed)):
            return {"type": FAIL, "value": value, "error": _deliver_error(answer)}
        self.cursors.advance(value["channel"], value["osn"], answer)
        return {"type": OK, "value": {"channel": value["channel"], "osn": value["osn"], "blocks": answer}}

    def final_deliver(self, value: dict[str, Any]) -> Op:
        """Every block from `from`, read again until no new block was cut for `settle`
        seconds (the batch timer may still cut after the heal) and the channel's acknowledged
        final broadcast (Nudges) is among them; info "incomplete" when
        final_deliver_timeout ends first, with the blocks read so far. A final Deliver that
        did not end ok says whether the chain is errored (`_errored`)."""
        o = self.opts
        deadline = time.monotonic() + o.final_deliver_timeout
        awaited = self.nudges.awaited(value["channel"])
        blocks: list[dict] = []
        quiet_since: float | None = None
        error = "incomplete"
        while time.monotonic() < deadline and not self._closed.is_set():
            # From the last block read, not past it: a start beyond the OSN's newest block is a
            # BAD_REQUEST when Deliver does not wait (FAIL_IF_NOT_READY).
            start = blocks[-1]["number"] if blocks else value["from"]
            try:
                read = self._read(value, start, max(0.5, min(o.deliver_timeout, deadline - time.monotonic())))
            except (OsnUnreachable, DeliverFailed) as exc:
                error = _deliver_error(exc)
                time.sleep(0.2)
                continue
            new = [b for b in read if not blocks or b["number"] > blocks[-1]["number"]]
            blocks.extend(new)
            if awaited is not None and any(awaited in b.get("txs", ()) for b in new):
                awaited = None
            now = time.monotonic()
            if new or quiet_since is None or awaited is not None:
                quiet_since = now
            elif now - quiet_since >= o.settle:
                return {"type": OK, "value": {"channel": value["channel"], "osn": value["osn"], "blocks": blocks,
                                              **self._orderer_field()}}
            time.sleep(min(0.25, o.settle / 4))
        errored = {"errored": True} if self._errored(value) else {}
        if not blocks:
            return {"type": FAIL, "value": {**value, **errored}, "error": error}
        return {"type": INFO, "value": {"channel": value["channel"], "osn": value["osn"], "blocks": blocks,
                                        **errored, **self._orderer_field()},
                "error": error}

    def _errored(self, value: dict[str, Any]) -> bool:
        """Whether the OSN's chain of the channel is errored: a STRICT Deliver of block 0 answered
        SERVICE_UNAVAILABLE (Fabric's deliver handler refuses strict readers while the chain's
        Errored() channel is closed). A Kafka-based chain whose partition lost records it had
        consumed is errored for good and orders nothing again, though Broadcast still answers
        SUCCESS; one cut off from Kafka is errored until it reconnects. The block reads above
        are BEST_EFFORT, so they cannot tell: asked once, when a final Deliver did not end ok,
        so that the checker can say why (checkers.ordering)."""
        assert self.osn is not None
        if self._closed.is_set():
            return False
        try:
            self.osn.deliver(self.addresses[value["osn"]], value["channel"], 0, 0, timeout=_PROBE_TIMEOUT,
                             best_effort=False)
        except DeliverFailed as exc:
            return exc.status == "SERVICE_UNAVAILABLE"
        except OsnUnreachable:
            return False
        return False

    def _orderer_field(self) -> dict[str, Any]:
        return {"orderer": self.orderer} if self.orderer else {}

    def close(self) -> None:
        self._closed.set()
        with self._calls_lock:
            calls, self._calls = self._calls, None
        if calls is not None:
            calls.close()  # what is still open is answered: broadcasts info, delivers fail (cancelled)
        if self.osn is not None:
            self.osn.close()


def _deliver_error(exc: Exception) -> str:
    return _status_code(exc.status if isinstance(exc, DeliverFailed) else getattr(exc, "code", "error"))


def ordering_workload(options: dict[str, Any], variant: Any = None) -> Workload:
    opts = OrderingOptions.model_validate(options)
    if variant is None:
        raise ValueError("ordering needs a variant with OSNs (its channels and OSN names)")
    if variant.cluster.osns < 1:
        raise ValueError(f"ordering needs OSNs; variant {variant.name} has none")
    channels = opts.channels or list(variant.orderer.channels)
    unknown = sorted(set(channels) - set(variant.orderer.channels))
    if unknown:
        raise ValueError(f"channels {', '.join(unknown)} are not channels of variant {variant.name}")
    osns = [f"osn{i}" for i in range(1, variant.cluster.osns + 1)]
    # A token per workload instance keeps tx ids unique on a kept cluster whose chains
    # already hold an earlier run's txs.
    token = uuid.uuid4().hex[:6]
    if opts.config_fraction and variant.orderer.implementation == "model":
        raise ValueError("ordering's config_fraction needs Fabric's orderer: the model orders no config update")
    cursors = DeliverCursors()
    finals = FinalReports()
    nudges = Nudges()
    slots = ConfigSlots()

    def generator(rng: random.Random) -> OrderingOps:
        return OrderingOps(opts, channels, osns, token, cursors, rng, slots)

    def final_generator() -> UntilOk:
        # A Kafka-based OSN posts a batch's time-to-cut once: when that failed (the channel's
        # partition had too few replicas) the batch waits for the next broadcast of its
        # channel, as in Fabric v1.x. One broadcast per channel, before the final delivers,
        # gives every channel that next message, so no acknowledged tx is left uncut.
        nudges = [{"f": "broadcast", "value": {"channel": c, "osn": osns[0], "tx": f"tx-{token}-final-{c}",
                                               "final": True}} for c in channels]
        return finals.start([{"f": "deliver", "value": {"channel": c, "osn": o, "from": 0, "final": True}}
                             for c in channels for o in osns], stale_after=opts.final_deliver_timeout + 5,
                            first=nudges)

    return Workload(name="ordering", client=OrderingClient(opts, cursors, finals, nudges=nudges, slots=slots),
                    generator=generator,
                    final_generator=final_generator)
