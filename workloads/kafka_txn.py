"""The kafka-txn workload: Kafka transactions of up to N send and poll micro-ops (history
format 2, Jepsen's jepsen.tests.kafka shape), some aborted on purpose, read by
read_committed consumers, then drained by read_committed final reads.

Each logical process has its own transactional producer. Its `transactional.id` comes from a
pool: a process that ended a txn indeterminate (info) leaves its id to its successor, whose
init_transactions fences the old producer (bumps the epoch, aborts what it left open), as a
restarted application instance does in production. Each worker thread's consumer ("c<thread>")
reads every partition by explicit assignment (format-1 assign ops, as kafka-log), with
isolation.level read_committed unless told otherwise; with `send_offsets` a txn that polled
also commits its consumer's positions inside the txn (consume-transform-produce,
send_offsets_to_transaction), which brings the group coordinator into every such commit.
With `group` set, consumers are members of that consumer group instead (subscribe ops,
workloads.group_consumer): a txn then polls once, first, and sends after (consume-transform-
produce), its poll records the rebalances it saw, and with `send_offsets` a commit micro-op
names the offsets committed in the txn (history format 2).

Outcomes: ok when commit_transaction returned; fail only when nothing can become visible
(nothing was begun, or abort_transaction returned: the coordinator took the abort); info
otherwise (a commit or abort that timed out or met a fatal error: KAFKA-17754's ground). A
txn's completion repeats every micro-op with what is known of its result.
"""
from __future__ import annotations

import itertools
import random
import threading
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Literal

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, Producer, TopicPartition
from pydantic import BaseModel, ConfigDict, Field, model_validator

from ground import kafka_versions
from ground.cluster_view import ClusterView
from ground.generator import Answer, Context
from ground.kafka_names import GROUP_PREFIX, TRANSACTIONAL_ID_PREFIX
from ground.op import FAIL, INFO, OK, Op
from ground.workload import Workload
from workloads.final_reads import FinalReports, UntilOk
from workloads.group_consumer import GroupConsumer, check_protocol
from workloads.kafka_clients import KafkaClient
from workloads.kafka_errors import error_code
from workloads.kafka_log import Unassigned
from workloads.partition_read import read_partition, record
from workloads.topics import TopicSet

READ_COMMITTED, READ_UNCOMMITTED = "read_committed", "read_uncommitted"


class KafkaTxnOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    topics: int = Field(2, ge=1, le=100)
    partitions: int = Field(3, ge=1, le=100)
    max_micro_ops: int = Field(4, ge=1, le=32, description="micro-ops per txn, at most (at least one)")
    send_fraction: float = Field(0.5, ge=0, le=1, description="share of micro-ops that are sends; the rest polls")
    abort_rate: float = Field(0.1, ge=0, le=1, description="share of txns aborted on purpose after their micro-ops")
    reassign_probability: float = Field(0.02, ge=0, le=1, description="chance a consumer op is a fresh assign")
    isolation: str = Field(READ_COMMITTED, pattern=f"^({READ_COMMITTED}|{READ_UNCOMMITTED})$",
                           description="isolation.level of the consumers (final reads: read_committed always)")
    send_offsets: bool = Field(False, description="consume-transform-produce: a txn that polled commits its "
                                                  "consumer's positions in the txn (send_offsets_to_transaction)")
    poll_batch: int = Field(20, ge=1, le=10_000, description="records one poll micro-op returns at most")
    poll_timeout: float = Field(0.1, gt=0, le=10, description="seconds one poll micro-op waits for records")
    txn_timeout: float = Field(6.0, gt=0, le=300, description="seconds a txn's calls (sends, commit, abort) may take; "
                                                           "keep it below the scenario's op_timeout")
    transaction_timeout_ms: int = Field(10_000, ge=1000, le=900_000,
                                        description="transaction.timeout.ms: how long the coordinator lets a txn "
                                                    "stay open before aborting it (a fenced or dead producer's)")
    final_read_timeout: float = Field(8.0, gt=0, le=600,
                                      description="seconds one final read may take; below the scenario's op_timeout")
    # How long librdkafka waits for one Produce's answer, and what it does after. By default a
    # message's own timeout is the txn's (message.timeout.ms = txn_timeout), and a request waits
    # as long as librdkafka's default socket.timeout.ms (60 s): a send whose answer is lost then
    # races the txn's abort against librdkafka's own message timeout, which bumps the epoch.
    # Set, these give the other path its room: a Produce given up after socket_timeout_ms, its
    # message waiting retry_backoff_ms for its retry, and the abort coming before its own timeout
    # (docs/findings.md, librdkafka's lost commit).
    socket_timeout_ms: int | None = Field(None, ge=10, le=300_000,
                                          description="socket.timeout.ms: how long a request waits for its answer")
    message_timeout_ms: int | None = Field(None, ge=1000, le=900_000,
                                           description="message.timeout.ms (default: txn_timeout)")
    retry_backoff_ms: int | None = Field(None, ge=1, le=300_000,
                                         description="retry.backoff.ms and retry.backoff.max.ms: the wait before "
                                                     "a request is tried again")
    group: str | None = Field(None, min_length=1,
                              description="consumer group to subscribe with; None = assign mode, explicit offsets")
    group_protocol: Literal["classic", "consumer"] = Field(
        "classic", description="group.protocol: classic (eager rebalances) or consumer (KIP-848, Kafka 4.x brokers)")

    @model_validator(mode="after")
    def _protocol_needs_a_group(self) -> "KafkaTxnOptions":
        if self.group is None and self.group_protocol != "classic":
            raise ValueError(f"group_protocol = {self.group_protocol!r} needs a group to subscribe with (group = ...)")
        return self


@dataclass
class TransactionalIds:
    """transactional.id values of one workload instance, reused first-in first-out: a process
    that is retired or closed gives its id back, and the next process opened (on a retired
    process's thread, its successor) takes it and fences whatever producer still holds it."""

    prefix: str
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _free: deque = field(default_factory=deque)
    _count: itertools.count = field(default_factory=itertools.count)

    def take(self) -> str:
        with self._lock:
            return self._free.popleft() if self._free else f"{self.prefix}-{next(self._count)}"

    def give_back(self, tid: str) -> None:
        with self._lock:
            self._free.append(tid)


@dataclass(frozen=True)
class KafkaTxnState:
    topics: TopicSet
    ids: TransactionalIds
    group_prefix: str
    client: KafkaClient = field(default_factory=KafkaClient)
    unassigned: Unassigned = field(default_factory=Unassigned)
    finals: FinalReports = field(default_factory=FinalReports)


class KafkaTxnOps:
    """The main phase's ops: a txn of 1..max_micro_ops sends (unique values, random partitions)
    and polls of the asking thread's consumer, marked `abort` at abort_rate; a thread's first op,
    and its first after its process was replaced, is an assign of every partition."""

    def __init__(self, opts: KafkaTxnOptions, state: KafkaTxnState, rng: random.Random):
        self.opts, self.state, self.rng = opts, state, rng
        self.values = {t: itertools.count() for t in state.topics.names}
        self.assigned: set[int | str] = set()

    def op(self, ctx: Context) -> Answer:
        r, o = self.rng, self.opts
        consumer = f"c{ctx.thread}"
        n = r.randint(1, o.max_micro_ops)
        kinds = [r.random() < o.send_fraction for _ in range(n)]
        targets = [(r.choice(self.state.topics.names), r.randrange(o.partitions)) for _ in range(n)]
        abort = r.random() < o.abort_rate
        reassign = r.random() < o.reassign_probability
        fresh = ctx.client_process not in self.assigned or self.state.unassigned.take(consumer)
        if o.group is not None:
            return self._group_op(ctx, consumer, fresh, kinds, targets, abort)
        if fresh or reassign:
            self.assigned.add(ctx.client_process)
            tps = self.state.topics.partitions_of()
            return {"f": "assign", "value": {"consumer": consumer, "partitions": [list(tp) for tp in tps],
                                             "seek": "beginning" if fresh else None}}
        mops: list[list[Any]] = []
        for send, (topic, partition) in zip(kinds, targets):
            if send:
                mops.append(["send", {"topic": topic, "key": f"k{partition}", "value": next(self.values[topic]),
                                      "partition": partition}])
            else:
                poll: dict[str, Any] = {"consumer": consumer}
                if o.isolation == READ_UNCOMMITTED:
                    poll["isolation"] = READ_UNCOMMITTED
                mops.append(["poll", poll])
        op: Op = {"f": "txn", "value": mops}
        if abort:
            op["abort"] = True
        return op

    def _group_op(self, ctx: Context, consumer: str, fresh: bool, kinds: list[bool],
                  targets: list[tuple[str, int]], abort: bool) -> Answer:
        """Group mode: a fresh consumer subscribes; else a txn of one poll first (when any of its
        micro-ops is one), the sends after it, and with send_offsets a commit micro-op last."""
        o = self.opts
        self.assigned.add(ctx.client_process)
        if fresh:
            return {"f": "subscribe", "value": {"consumer": consumer, "topics": list(self.state.topics.names)}}
        polls = not all(kinds)
        mops: list[list[Any]] = []
        if polls:
            poll: dict[str, Any] = {"consumer": consumer}
            if o.isolation == READ_UNCOMMITTED:
                poll["isolation"] = READ_UNCOMMITTED
            mops.append(["poll", poll])
        for send, (topic, partition) in zip(kinds, targets):
            if send:
                mops.append(["send", {"topic": topic, "key": f"k{partition}", "value": next(self.values[topic]),
                                      "partition": partition}])
        if polls and o.send_offsets:
            mops.append(["commit", {"consumer": consumer}])
        op: Op = {"f": "txn", "value": mops}
        if abort:
            op["abort"] = True
        return op


class _Aborted(Exception):
    """The txn had to be aborted (a send failed): `error` says why."""

    def __init__(self, error: str):
        super().__init__(error)
        self.error = error


class KafkaTxnClient:
    """One process: its transactional producer (made on first use), its thread's consumer, and
    final reads (kafka-log's, read_committed)."""

    def __init__(self, opts: KafkaTxnOptions, state: KafkaTxnState, cluster: ClusterView | None = None,
                 process: int | None = None):
        self.opts, self.state, self.cluster, self.process = opts, state, cluster, process
        self.tid: str | None = None
        self.producer: Producer | None = None
        self.consumer: Consumer | None = None
        self.positions: dict[tuple[str, int], int] = {}
        self.member: GroupConsumer | None = None  # group mode's consumer

    def open(self, cluster: ClusterView, process: int) -> "KafkaTxnClient":
        self.state.topics.ensure(cluster)
        return KafkaTxnClient(self.opts, self.state, cluster, process)

    def invoke(self, op: Op) -> Op:
        f, value = op["f"], op["value"]
        if f == "txn":
            return self.txn(value, bool(op.get("abort")))
        if f == "assign":
            return self.assign(value)
        if f == "subscribe":
            return self.subscribe(value)
        if f == "final-read":
            return self.state.finals.answer(value, self.final_read)
        return {"type": FAIL, "value": value, "error": f"unknown-f:{f}"}

    # -- set-up -------------------------------------------------------------------
    def _producer(self) -> Producer:
        if self.producer is None:
            self.tid = self.state.ids.take()
            p = self.cluster.variant.producer
            producer = self.state.client.producer({
                "bootstrap.servers": self.cluster.bootstrap_servers(),
                "transactional.id": self.tid, "acks": "all", "enable.idempotence": True,
                "transaction.timeout.ms": self.opts.transaction_timeout_ms,
                "message.timeout.ms": self.opts.message_timeout_ms or int(self.opts.txn_timeout * 1000),
                "request.timeout.ms": max(1000, int(self.opts.txn_timeout * 500)),
                "retries": max(p.retries, 1), "linger.ms": 0,
                **self._request_timing(),
            })
            # Fences any producer that held this id before (a retired process's): its open txn is aborted.
            producer.init_transactions(self.opts.txn_timeout)
            self.producer = producer
        return self.producer

    def _request_timing(self) -> dict[str, int]:
        """The options' request timing settings, as librdkafka names them. The Java client has
        retry.backoff(.max).ms too, and no socket.timeout.ms: it logs that name as unknown and
        goes on (its Produce is bounded by request.timeout.ms)."""
        o = self.opts
        timing = {"socket.timeout.ms": o.socket_timeout_ms} if o.socket_timeout_ms else {}
        if o.retry_backoff_ms:
            timing["retry.backoff.ms"] = o.retry_backoff_ms
            # librdkafka 2.3 added exponential backoff, capped by retry.backoff.max.ms (1 s by
            # default, and retry.backoff.ms may not exceed it); earlier releases refuse the name.
            if self.state.client.java or kafka_versions.parse(self.state.client.describe()["version"]) >= (2, 3, 0):
                timing["retry.backoff.max.ms"] = o.retry_backoff_ms
        return timing

    def _new_consumer(self, name: str, group: str | None = None, **extra: Any) -> Consumer:
        return self.state.client.consumer({
            "bootstrap.servers": self.cluster.bootstrap_servers(),
            # assign mode: a group of the consumer's own, which holds send_offsets' commits
            "group.id": group or f"{self.state.group_prefix}-{name}",
            "enable.auto.commit": False, "enable.auto.offset.store": False,
            "auto.offset.reset": "earliest", "isolation.level": self.opts.isolation,
            **extra,
        })

    def subscribe(self, value: dict[str, Any]) -> Op:
        """Join the group as this process's member (group mode)."""
        assert self.opts.group is not None
        if self.member is None:
            try:
                consumer = self._new_consumer(value["consumer"], self.opts.group,
                                              **GroupConsumer.settings(self.opts.group_protocol))
                self.member = GroupConsumer(consumer, value["topics"], self.opts.group_protocol == "consumer")
            except KafkaException as exc:
                return {"type": FAIL, "value": value, "error": error_code(exc.args[0].code())}
        return {"type": OK, "value": value}

    def assign(self, value: dict[str, Any]) -> Op:
        if self.consumer is None:
            self.consumer = self._new_consumer(value["consumer"])
        wanted = [(t, p) for t, p in value["partitions"]]
        keep = {} if value.get("seek") == "beginning" else self.positions
        self.positions = {tp: keep.get(tp, OFFSET_BEGINNING) for tp in wanted}
        self._assign_positions()
        return {"type": OK, "value": value}

    def _assign_positions(self) -> None:
        assert self.consumer is not None
        self.consumer.assign([TopicPartition(t, p, o) for (t, p), o in self.positions.items()])

    # -- the txn ------------------------------------------------------------------
    def txn(self, mops: list[list[Any]], abort: bool) -> Op:
        done = [[f, dict(m)] for f, m in mops]
        if any(f == "poll" for f, _ in mops) and (self.member if self.opts.group is not None else self.consumer) is None:
            self.state.unassigned.mark(mops[[f for f, _ in mops].index("poll")][1]["consumer"])
            return {"type": FAIL, "value": done, "error": "unassigned"}
        try:
            producer = self._producer()
            producer.begin_transaction()
        except KafkaException as exc:  # nothing was sent in this txn
            return self._lost_producer(done, FAIL, exc)
        deadline = time.monotonic() + self.opts.txn_timeout
        polled = False
        try:
            for f, m in done:
                if f == "send":
                    self._send(producer, m, deadline)
                elif f == "poll":
                    m["records"] = self._poll(m)
                    polled = True
                else:  # commit (group mode): the member's positions, committed with the txn
                    assert self.member is not None
                    m["offsets"] = [{"topic": t, "partition": p, "offset": o}
                                    for (t, p), o in sorted(self.member.positions.items()) if o is not None]
                    if m["offsets"]:
                        offsets = [TopicPartition(c["topic"], c["partition"], c["offset"]) for c in m["offsets"]]
                        producer.send_offsets_to_transaction(offsets, self.member.consumer.consumer_group_metadata(),
                                                             max(0.1, deadline - time.monotonic()))
            if self.opts.send_offsets and polled and self.opts.group is None:
                offsets = [TopicPartition(t, p, o) for (t, p), o in self.positions.items() if o >= 0]
                if offsets:
                    producer.send_offsets_to_transaction(offsets, self.consumer.consumer_group_metadata(),
                                                         max(0.1, deadline - time.monotonic()))
        except _Aborted as exc:
            return self._abort(producer, done, exc.error)
        except KafkaException as exc:
            err = exc.args[0]
            if err.fatal():
                return self._lost_producer(done, INFO, exc)
            return self._abort(producer, done, error_code(err.code()))
        if abort:
            return self._abort(producer, done, "aborted-on-purpose")
        return self._commit(producer, done, deadline)

    def _send(self, producer: Producer, m: dict[str, Any], deadline: float) -> None:
        report: list[tuple[KafkaError | None, Any]] = []
        producer.produce(m["topic"], key=m["key"].encode(), value=str(m["value"]).encode(), partition=m["partition"],
                         on_delivery=lambda err, msg: report.append((err, msg)))
        while not report and time.monotonic() < deadline:
            producer.poll(0.05)
        if not report:
            raise _Aborted("send-timed-out")
        err, msg = report[0]
        if err is not None:
            raise _Aborted(error_code(err.code()))
        if msg.offset() >= 0:
            m["offset"] = msg.offset()

    def _poll(self, m: dict[str, Any]) -> list[dict[str, Any]]:
        if self.opts.group is not None:
            return self._group_poll(m)
        assert self.consumer is not None
        messages = self.consumer.consume(num_messages=self.opts.poll_batch, timeout=self.opts.poll_timeout)
        errors = [m.error() for m in messages if m.error() is not None]
        if errors:
            self._assign_positions()  # back to where this poll began: nothing read is recorded
            raise KafkaException(errors[0])
        records = [record(msg) for msg in messages]
        for rec in records:
            self.positions[(rec["topic"], rec["partition"])] = rec["offset"] + 1
        return records

    def _group_poll(self, m: dict[str, Any]) -> list[dict[str, Any]]:
        """One poll of the member; the rebalances it saw go into the micro-op. A rebalance whose
        callback failed leaves the member's assignment unknown: it is closed, its consumer
        subscribes anew, and the txn is aborted."""
        assert self.member is not None
        try:
            events, messages, error = self.member.poll(self.opts.poll_batch, self.opts.poll_timeout)
        except KafkaException:
            self.member.close()
            self.member = None
            self.state.unassigned.mark(m["consumer"])
            raise _Aborted("rebalance-failed") from None
        if events:
            m["rebalances"] = events
        if error is not None and not messages and not events:
            raise _Aborted(error_code(error.code()))
        return [record(msg) for msg in messages]

    def _commit(self, producer: Producer, done: list[list[Any]], deadline: float) -> Op:
        """commit_transaction, again while its error is retriable and time remains; an abort when
        Kafka says the txn must be aborted; info when it is unknown whether it committed."""
        while True:
            try:
                producer.commit_transaction(max(0.1, deadline - time.monotonic()))
                return {"type": OK, "value": done}
            except KafkaException as exc:
                err = exc.args[0]
                if err.txn_requires_abort():
                    return self._abort(producer, done, error_code(err.code()))
                if err.retriable() and time.monotonic() < deadline:
                    continue
                return self._lost_producer(done, INFO, exc)

    def _abort(self, producer: Producer, done: list[list[Any]], error: str) -> Op:
        """abort_transaction: fail once the coordinator took it, info when it did not answer."""
        try:
            producer.abort_transaction(self.opts.txn_timeout)
        except KafkaException as exc:
            return self._lost_producer(done, INFO, exc)
        return {"type": FAIL, "value": done, "error": error}

    def _lost_producer(self, done: list[list[Any]], outcome: str, exc: KafkaException) -> Op:
        """The producer cannot go on (fatal, or its txn's end is unknown): this process is retired
        (info) or the producer remade (fail), and its transactional.id goes to the next one."""
        err = exc.args[0]
        code = error_code(err.code()) if isinstance(err, KafkaError) else "kafka-exception"
        self._drop_producer()
        return {"type": outcome, "value": done, "error": code}

    def _drop_producer(self) -> None:
        if self.tid is not None:
            self.state.ids.give_back(self.tid)
        self.tid, self.producer = None, None

    # -- final read -------------------------------------------------------------------
    def final_read(self, value: dict[str, Any]) -> Op:
        """Every committed record of the partition, read_committed by a fresh consumer whatever
        the workload's isolation, until its position reaches a high watermark (asked of a
        read_uncommitted consumer) that stopped growing (workloads.partition_read). The
        position stops at the first offset of a txn still open or whose markers are not
        written yet: the read is then info "incomplete" once final_read_timeout ends, and asked
        again (the coordinator aborts an open txn after transaction.timeout.ms); a partition
        never read to its end has losses the checker calls unknown, not lost."""
        consumer = self._new_consumer(f"final-{self.process}", **{"isolation.level": READ_COMMITTED})
        ends = self._new_consumer(f"final-ends-{self.process}", **{"isolation.level": READ_UNCOMMITTED})
        try:
            records, high, complete = read_partition(consumer, value["topic"], value["partition"],
                                                     time.monotonic() + self.opts.final_read_timeout, ends=ends)
        finally:
            consumer.close()
            ends.close()
        done = {**value, "records": records, "high_watermark": high}
        return {"type": OK, "value": done} if complete else {"type": INFO, "value": done, "error": "incomplete"}

    def close(self) -> None:
        if self.producer is not None:
            try:
                self.producer.flush(0)
            except Exception:  # noqa: BLE001 - closing a broken producer is best effort
                pass
        self._drop_producer()
        if self.consumer is not None:
            try:
                self.consumer.close()
            except RuntimeError:
                pass
            self.consumer = None
        if self.member is not None:
            self.member.close()
            self.member = None


def kafka_txn_workload(options: dict[str, Any], variant: Any = None) -> Workload:
    opts = KafkaTxnOptions.model_validate(options)
    check_protocol(opts.group_protocol, variant)
    token = uuid.uuid4().hex[:6]
    # Named like kafka-log's topics: a later run on a kept cluster deletes them (workloads.topics).
    topics = TopicSet([f"t{100 + i}-{token}" for i in range(opts.topics)], opts.partitions)
    state = KafkaTxnState(topics, TransactionalIds(TRANSACTIONAL_ID_PREFIX), GROUP_PREFIX, KafkaClient.of(variant))

    def generator(rng: random.Random) -> KafkaTxnOps:
        return KafkaTxnOps(opts, state, rng)

    def setup(cluster: ClusterView) -> None:
        state.topics.ensure(cluster)
        state.client.prepare()

    def final_generator() -> UntilOk:
        return state.finals.start([{"f": "final-read", "value": {"topic": t, "partition": p}}
                                   for t, p in topics.partitions_of()], stale_after=opts.final_read_timeout + 5)

    return Workload(name="kafka-txn", client=KafkaTxnClient(opts, state), generator=generator,
                    final_generator=final_generator, setup=setup)
