"""The kafka-log workload: unique integers sent to T topics x P partitions, read back by
consumers that record every record they see, then drained by final reads.

Ops (docs/history-format.md, "Format 1"): send, assign, poll in the main phase,
one final-read per topic-partition after the heal. With `group` set, consumers subscribe
to the topics in that consumer group instead of assigning, and commit what they read
(subscribe, poll, commit: workloads.group_consumer). The checkers look for lost,
duplicated and reordered writes in what these ops record, so a client records exactly
what Kafka answered and answers `fail` only when nothing can have happened.
"""
from __future__ import annotations

import itertools
import random
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaException, TopicPartition
from pydantic import BaseModel, ConfigDict, Field, model_validator

from ground.cluster_view import ClusterView
from ground.generator import Answer, Context
from ground.op import FAIL, INFO, OK, Op
from ground.workload import Workload
from workloads.final_reads import FinalReports, UntilOk
from workloads.group_consumer import GroupConsumer, check_protocol, commit_outcome
from workloads.kafka_clients import KafkaClient
from workloads.kafka_errors import error_code, send_outcome
from workloads.partition_read import read_partition, record
from workloads.producer import SharedProducer
from workloads.topics import TopicSet


class KafkaLogOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    topics: int = Field(2, ge=1, le=100)
    partitions: int = Field(3, ge=1, le=100)
    send_fraction: float = Field(0.5, ge=0, le=1, description="share of ops that are sends; the rest are assign/poll")
    reassign_probability: float = Field(0.05, ge=0, le=1, description="chance a consumer op is a fresh assign")
    poll_batch: int = Field(100, ge=1, le=100_000, description="records one poll returns at most")
    poll_timeout: float = Field(0.2, gt=0, le=10, description="seconds one poll waits for records")
    send_timeout: float = Field(5.0, gt=0, le=300,
                                description="seconds until an unacknowledged send is info (message.timeout.ms); "
                                            "keep it below the scenario's op_timeout")
    final_read_timeout: float = Field(8.0, gt=0, le=600,
                                      description="seconds one final read may take; below the scenario's op_timeout")
    # In a group, partitions move between consumers at each rebalance and a consumer that gets
    # one back resumes at the group's committed offset: each poll records the rebalances it
    # saw, and the checkers judge positions by them and by the commits (checkers.consumer_groups).
    group: str | None = Field(None, min_length=1,
                              description="consumer group to subscribe with (subscribe, poll, commit ops); "
                                          "None = assign mode, explicit offsets")
    group_protocol: Literal["classic", "consumer"] = Field(
        "classic", description="group.protocol: classic (eager rebalances) or consumer (KIP-848, Kafka 4.x brokers)")
    commit_fraction: float = Field(0.2, ge=0, le=1, description="share of a group consumer's ops that are commits")
    # Concurrent processes' sends share the producer (workloads.producer); waiting 10 ms lets
    # them share ProduceRequests too, which on a 2-core machine roughly doubled the
    # acknowledged sends/s of bench/workload.py (brokers spend their CPU per request).
    linger_ms: float = Field(10.0, ge=0, le=1000, description="producer linger.ms")

    @model_validator(mode="after")
    def _protocol_needs_a_group(self) -> "KafkaLogOptions":
        if self.group is None and self.group_protocol != "classic":
            raise ValueError(f"group_protocol = {self.group_protocol!r} needs a group to subscribe with (group = ...)")
        return self


class Unassigned:
    """Consumers whose process has no assignment: a retired process's successor opens a
    fresh consumer under the same name ("c<thread>"). Its first poll fails (nothing read)
    and marks it here; the generator's next op for that consumer is then an assign, which
    the checkers take as a new start of that consumer."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._names: set[str] = set()

    def mark(self, consumer: str) -> None:
        with self._lock:
            self._names.add(consumer)

    def take(self, consumer: str) -> bool:
        with self._lock:
            if consumer in self._names:
                self._names.discard(consumer)
                return True
            return False


@dataclass(frozen=True)
class KafkaLogState:
    """What one workload instance's generators and clients share."""

    topics: TopicSet
    client: KafkaClient = field(default_factory=KafkaClient)
    unassigned: Unassigned = field(default_factory=Unassigned)
    finals: FinalReports = field(default_factory=FinalReports)


class KafkaLogOps:
    """The main phase's endless ops. A send goes to a random topic and key; each consumer op
    belongs to the consumer of the asking worker thread ("c<thread>"), whose first op is an
    assign from the beginning (so is the first of each new process of the thread, whose
    consumer is a new one: Context.process; and the first after a client that could not
    open, see Unassigned)."""

    def __init__(self, opts: KafkaLogOptions, state: KafkaLogState, rng: random.Random):
        self.opts, self.topics, self.unassigned, self.rng = opts, state.topics, state.unassigned, rng
        # Generators run under the runner's generator lock: plain counters are unique.
        self.values = {t: itertools.count() for t in self.topics.names}
        self.assigned: set[int | str] = set()

    def op(self, ctx: Context) -> Answer:
        r, o = self.rng, self.opts
        # The same draws whatever thread asks, so the op sequence depends only on the seed.
        pick, topic, partition = r.random(), r.choice(self.topics.names), r.randrange(o.partitions)
        if pick < o.send_fraction:
            return {"f": "send", "value": {"topic": topic, "key": f"k{partition}", "value": next(self.values[topic])}}
        reassign, seek = r.random() < o.reassign_probability, r.choice(("beginning", None))
        tps = self.topics.partitions_of()
        chosen = sorted(r.sample(tps, r.randint(1, len(tps))))
        consumer = f"c{ctx.thread}"
        # A fresh consumer (a new process's: the thread's first, or its successor after an
        # indeterminate op, or one whose client could not open) has no positions to keep.
        fresh = ctx.client_process not in self.assigned or self.unassigned.take(consumer)
        if o.group is not None:
            self.assigned.add(ctx.client_process)
            if fresh:
                return {"f": "subscribe", "value": {"consumer": consumer, "topics": list(self.topics.names)}}
            if r.random() < o.commit_fraction:
                return {"f": "commit", "value": {"consumer": consumer}}
            return {"f": "poll", "value": {"consumer": consumer}}
        if fresh or reassign:
            self.assigned.add(ctx.client_process)
            return {"f": "assign", "value": {"consumer": consumer, "partitions": [list(tp) for tp in chosen],
                                             "seek": "beginning" if fresh else seek}}
        return {"f": "poll", "value": {"consumer": consumer}}


class KafkaLogClient:
    """One process's consumer (made on its first assign), its final reads and its sends through
    the workload's shared producer (see workloads.producer)."""

    def __init__(self, opts: KafkaLogOptions, state: KafkaLogState, cluster: ClusterView | None = None,
                 process: int | None = None, producer: SharedProducer | None = None):
        self.opts, self.state, self.cluster, self.process = opts, state, cluster, process
        self.producer = producer
        self.consumer: Consumer | None = None
        self.member: GroupConsumer | None = None  # group mode's consumer
        self.positions: dict[tuple[str, int], int] = {}  # next offset to record, per assigned partition
        self._closed = threading.Event()
        # Used by the unopened client only: one shared producer per cluster run.
        self._shared: dict[str, SharedProducer] = {}
        self._lock = threading.Lock()

    def open(self, cluster: ClusterView, process: int) -> "KafkaLogClient":
        self.state.topics.ensure(cluster)
        with self._lock:
            if cluster.run not in self._shared:
                self._shared[cluster.run] = SharedProducer(self._producer_config(cluster),
                                                               self.state.client.producer)
            producer = self._shared[cluster.run]
        producer.acquire()
        return KafkaLogClient(self.opts, self.state, cluster, process, producer)

    def _producer_config(self, cluster: ClusterView) -> dict[str, Any]:
        p = cluster.variant.producer
        return {
            "bootstrap.servers": cluster.bootstrap_servers(),
            "acks": p.acks, "enable.idempotence": p.enable_idempotence, "retries": p.retries,
            # librdkafka gives up on a message (_MSG_TIMED_OUT) after message.timeout.ms,
            # retries included; the op answers info then, before the runner's op timeout.
            "message.timeout.ms": int(self.opts.send_timeout * 1000),
            "request.timeout.ms": max(1000, int(self.opts.send_timeout * 1000) // 2),
            "linger.ms": self.opts.linger_ms,
        }

    def invoke(self, op: Op) -> Op:
        f, value = op["f"], op["value"]
        if f == "send":
            return self.send(value)
        if f == "assign":
            return self.assign(value)
        if f == "subscribe":
            return self.subscribe(value)
        if f == "poll":
            return self.group_poll(value) if self.opts.group is not None else self.poll(value)
        if f == "commit":
            return self.commit(value)
        if f == "final-read":
            return self.state.finals.answer(value, self.final_read)
        return {"type": FAIL, "value": value, "error": f"unknown-f:{f}"}

    # -- send ---------------------------------------------------------------------
    # Sends may be started asynchronously (ground.client.AsyncClient): the worker records the
    # invoke, the record is handed to the shared producer, and the delivery report completes it.
    async_fs = frozenset({"send"})

    def send(self, value: dict[str, Any]) -> Op:
        topic, key, v = value["topic"], value["key"], value["value"]
        # The key names the partition ("k2" -> 2), so sends cover every partition evenly.
        partition = int(key[1:])
        assert self.producer is not None
        try:
            # A little past message.timeout.ms: librdkafka reports every message by then.
            report = self.producer.send(topic, key.encode(), str(v).encode(), partition, self.opts.send_timeout + 1.0)
        except BufferError:  # the local queue is full: never handed to a broker
            return {"type": FAIL, "value": value, "error": "queue-full"}
        except KafkaException as exc:  # refused by the client before sending (unknown partition, size)
            return {"type": FAIL, "value": value, "error": error_code(exc.args[0].code())}
        if report is None:
            return {"type": INFO, "value": value, "error": "no-delivery-report"}
        return self._reported(value, *report)

    def invoke_async(self, op: Op, done: Callable[[Op], None]) -> None:
        """Hand a send to the producer and return; `done` gets its completion at the delivery
        report (on the producer's poller thread), or at once when produce() refuses it."""
        value = op["value"]
        topic, key, v = value["topic"], value["key"], value["value"]
        assert self.producer is not None and op["f"] == "send"
        try:
            self.producer.send_async(topic, key.encode(), str(v).encode(), int(key[1:]),
                                     lambda err, msg: done(self._reported(value, err, msg)))
        except BufferError:  # the local queue is full: never handed to a broker
            done({"type": FAIL, "value": value, "error": "queue-full"})
        except KafkaException as exc:  # refused by the client before sending (unknown partition, size)
            done({"type": FAIL, "value": value, "error": error_code(exc.args[0].code())})

    def _reported(self, value: dict[str, Any], err: Any, msg: Any) -> Op:
        """A send's completion from its delivery report."""
        if err is None:
            # With acks=0 the broker answers nothing, so librdkafka reports no offset (-1).
            offset = msg.offset() if msg.offset() >= 0 else None
            return {"type": OK, "value": {**value, "partition": msg.partition(), "offset": offset}}
        return {"type": send_outcome(err.code(), self.cluster.variant.producer.retries), "value": value,
                "error": error_code(err.code())}

    # -- consume ------------------------------------------------------------------
    def _new_consumer(self, group: str, **extra: Any) -> Consumer:
        return self.state.client.consumer({
            "bootstrap.servers": self.cluster.bootstrap_servers(),
            "group.id": group,  # librdkafka requires one; assign mode never joins it
            "enable.auto.commit": False, "enable.auto.offset.store": False,
            # After an unclean election truncates the log below a consumer's position it
            # restarts from the earliest offset: the checkers see that as nonmonotonic-poll.
            "auto.offset.reset": "earliest",
            **extra,
        })

    # -- consumer group -----------------------------------------------------------
    def subscribe(self, value: dict[str, Any]) -> Op:
        """Join the group as this process's member (one per process: a retired process's
        member left the group when it closed)."""
        assert self.opts.group is not None
        if self.member is None:
            try:
                consumer = self._new_consumer(self.opts.group, **GroupConsumer.settings(self.opts.group_protocol))
                self.member = GroupConsumer(consumer, value["topics"], incremental=self.opts.group_protocol == "consumer")
            except KafkaException as exc:
                return {"type": FAIL, "value": value, "error": error_code(exc.args[0].code())}
        return {"type": OK, "value": value}

    def group_poll(self, value: dict[str, Any]) -> Op:
        if self.member is None:
            self.state.unassigned.mark(value["consumer"])
            return {"type": FAIL, "value": value, "error": "unsubscribed"}
        try:
            events, messages, error = self.member.poll(self.opts.poll_batch, self.opts.poll_timeout)
        except KafkaException as exc:
            # A rebalance callback failed (the committed offsets did not come): the member's
            # assignment is unknown, so the process is retired and its member closed.
            return {"type": INFO, "value": value, "error": error_code(exc.args[0].code())}
        done = {"consumer": value["consumer"], "records": [record(m) for m in messages],
                **({"rebalances": events} if events else {})}
        if error is not None and not messages and not events:
            return {"type": FAIL, "value": done, "error": error_code(error.code())}
        return {"type": OK, "value": done}

    def commit(self, value: dict[str, Any]) -> Op:
        if self.member is None:
            self.state.unassigned.mark(value["consumer"])
            return {"type": FAIL, "value": value, "error": "unsubscribed"}
        offsets = [{"topic": t, "partition": p, "offset": o}
                   for (t, p), o in sorted(self.member.positions.items()) if o is not None]
        try:
            return {"type": OK, "value": {**value, "offsets": self.member.commit()}}
        except KafkaException as exc:
            code = exc.args[0].code()
            return {"type": commit_outcome(code), "value": {**value, "offsets": offsets}, "error": error_code(code)}

    # -- assign mode --------------------------------------------------------------
    def assign(self, value: dict[str, Any]) -> Op:
        if self.consumer is None:
            self.consumer = self._new_consumer(f"ordeal-{value['consumer']}")
        wanted = [(t, p) for t, p in value["partitions"]]
        # seek "beginning": every partition from its first offset; null: partitions this
        # consumer already reads keep their position (the next offset not yet recorded,
        # whatever librdkafka fetched ahead), new ones start at the beginning. The checkers
        # judge positions across assigns by this rule (checkers.kafka.kept_positions).
        keep = {} if value.get("seek") == "beginning" else self.positions
        self.positions = {tp: keep.get(tp, OFFSET_BEGINNING) for tp in wanted}
        self._assign_positions()
        return {"type": OK, "value": value}

    def _assign_positions(self) -> None:
        assert self.consumer is not None
        # assign() (unlike seek) also drops records already prefetched for these partitions.
        self.consumer.assign([TopicPartition(t, p, o) for (t, p), o in self.positions.items()])

    def poll(self, value: dict[str, Any]) -> Op:
        if self.consumer is None:
            self.state.unassigned.mark(value["consumer"])
            return {"type": FAIL, "value": value, "error": "unassigned"}
        try:
            messages = self._consume()
        except KafkaException as exc:
            return self._poll_failed(value, error_code(exc.args[0].code()))
        errors = [m.error() for m in messages if m.error() is not None]
        if errors:
            return self._poll_failed(value, error_code(errors[0].code()))
        records = [record(m) for m in messages]
        for rec in records:
            self.positions[(rec["topic"], rec["partition"])] = rec["offset"] + 1
        return {"type": OK, "value": {"consumer": value["consumer"], "records": records}}

    def _consume(self) -> list[Any]:
        """Up to poll_batch records: what is fetched already, at once; else the first to come
        within poll_timeout and what else is there then. consume(n, timeout) alone waits out
        the timeout unless n records come, and the thread's sends wait behind its polls."""
        assert self.consumer is not None
        n = self.opts.poll_batch
        messages = self.consumer.consume(num_messages=n, timeout=0)
        if not messages:
            messages = self.consumer.consume(num_messages=1, timeout=self.opts.poll_timeout)
            if messages and n > 1:
                messages += self.consumer.consume(num_messages=n - 1, timeout=0)
        return messages

    def _poll_failed(self, value: dict[str, Any], error: str) -> Op:
        """A poll that met an error records nothing, so the consumer goes back to where that
        poll began: the next poll reads those records again and no offset is skipped. Where
        it cannot the process is retired."""
        try:
            self._assign_positions()
            return {"type": FAIL, "value": value, "error": error}
        except KafkaException:
            return {"type": INFO, "value": value, "error": error}

    # -- final read ---------------------------------------------------------------
    def final_read(self, value: dict[str, Any]) -> Op:
        """Every record of the partition from the beginning up to the high watermark, read by a
        fresh consumer, again until the high watermark stops growing; info "incomplete" if
        final_read_timeout ends first."""
        consumer = self._new_consumer(f"ordeal-final-{self.process}")
        try:
            records, high, complete = read_partition(consumer, value["topic"], value["partition"],
                                                     time.monotonic() + self.opts.final_read_timeout,
                                                     self._closed.is_set)
        finally:
            consumer.close()
        done = {**value, "records": records, "high_watermark": high}
        return {"type": OK, "value": done} if complete else {"type": INFO, "value": done, "error": "incomplete"}

    def close(self) -> None:
        self._closed.set()
        if self.producer is not None:
            self.producer.release()
            self.producer = None
        if self.consumer is not None:
            try:
                self.consumer.close()
            except RuntimeError:  # closed already
                pass
        if self.member is not None:
            self.member.close()


def kafka_log_workload(options: dict[str, Any], variant: Any = None) -> Workload:
    opts = KafkaLogOptions.model_validate(options)
    check_protocol(opts.group_protocol, variant)
    # Topic names carry a token of this workload instance: a run on a kept cluster must not
    # read an earlier run's records (its values would collide with this run's).
    token = uuid.uuid4().hex[:6]
    topics = TopicSet([f"t{i}-{token}" for i in range(opts.topics)], opts.partitions)
    state = KafkaLogState(topics, KafkaClient.of(variant))

    def generator(rng: random.Random) -> KafkaLogOps:
        return KafkaLogOps(opts, state, rng)

    def setup(cluster: ClusterView) -> None:
        state.topics.ensure(cluster)
        state.client.prepare()

    def final_generator() -> UntilOk:
        return state.finals.start([{"f": "final-read", "value": {"topic": t, "partition": p}}
                                   for t, p in topics.partitions_of()], stale_after=opts.final_read_timeout + 5)

    return Workload(name="kafka-log", client=KafkaLogClient(opts, state), generator=generator,
                    final_generator=final_generator, setup=setup)
