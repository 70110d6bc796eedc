"""Kafka's Java client in the shape of confluent-kafka's Producer and Consumer, as far as the
workloads use them, so that a workload's code is the same for both clients.

What differs underneath, and how it is bridged:
- Configuration names are librdkafka's; the few the Java client names otherwise are
  translated (message.timeout.ms is delivery.timeout.ms; librdkafka-only ones are dropped).
  max.block.ms is the delivery timeout too: the Java producer's send() blocks while it
  waits for a topic's metadata (up to 60 s by default), which would hold a worker thread
  through a partition.
- Errors: the Java client's exceptions become confluent-kafka's KafkaError with Kafka's
  protocol error code (Errors.forException), the code librdkafka reports for the same
  broker error, so workloads.kafka_errors judges both alike. A delivery that expired in
  the Java producer is TimeoutException, REQUEST_TIMED_OUT: indeterminate (info), as
  librdkafka's _MSG_TIMED_OUT is.
- A Java consumer's poll returns up to max.poll.records records at once; consume(n) keeps
  what is past n for the next call, so no record is lost between calls, and assign() drops
  that buffer as librdkafka's assign drops what it prefetched.
- Delivery reports run on the Java producer's I/O thread (librdkafka's on the thread that
  polls); poll() here has nothing to serve.
- Rebalances: subscribe's on_assign / on_revoke / on_lost run inside poll, on the polling
  thread, as confluent-kafka's do. Inside them assign / incremental_assign (which in the Java
  client a subscribed consumer may not call) seek each partition to its given offset, and
  unassign does nothing: the Java client hands the partitions over itself.
- A commit the group refused because the member fell out of its generation is the Java
  client's CommitFailedException, which names no protocol error; it is reported as
  ILLEGAL_GENERATION, what librdkafka reports for the same refusal.
"""
from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, OFFSET_END, OFFSET_INVALID, KafkaError, KafkaException, TopicPartition

from workloads.java.libs import Release, release
from workloads.kafka_message import Message

# librdkafka settings with another name in the Java client.
RENAMED = {"message.timeout.ms": "delivery.timeout.ms"}
# librdkafka settings the Java client has no counterpart for (or that the bridge replaces).
DROPPED = frozenset({"enable.auto.offset.store", "logger", "error_cb"})


_attached = threading.local()


def _daemon() -> None:
    """Attach the calling thread to the JVM as a daemon before its first Java call. JPype
    attaches a thread on its first call as a non-daemon, and at exit the JVM waits for every
    non-daemon thread, so a process whose workers drove the client would never end."""
    if not getattr(_attached, "done", False):
        import jpype

        if not jpype.java.lang.Thread.isAttached():
            jpype.java.lang.Thread.attachAsDaemon()
        _attached.done = True


# Kafka's Java client names these as the ones that leave a (transactional) producer unusable:
# close it and make another. Any other error of a transaction makes it abortable.
FATAL = ("ProducerFencedException", "OutOfOrderSequenceException", "AuthorizationException",
         "UnsupportedVersionException", "InvalidTxnStateException")


def kafka_error(exc: Any, rel: Release) -> KafkaError:
    """A Java exception as confluent-kafka's KafkaError: Kafka's protocol code for it (the code
    librdkafka reports for the same broker error) and librdkafka's flags. Fatal: one of FATAL,
    or anything that is not one of Kafka's errors of a request (ApiException); retriable:
    Kafka's RetriableException (a timed-out commit is tried again); otherwise an open txn
    must be aborted. A KafkaException that wraps another ("... in an error state") is judged
    by what it wraps. `rel`: the release whose client raised it."""
    errors = rel.cls("org.apache.kafka.common.protocol.Errors")
    cause = exc
    while cause.getCause() is not None and cause.getClass().getName() == "org.apache.kafka.common.KafkaException":
        cause = cause.getCause()
    api = rel.cls("org.apache.kafka.common.errors.ApiException")
    retriable = isinstance(cause, rel.cls("org.apache.kafka.common.errors.RetriableException"))
    fatal = not isinstance(cause, api) or any(
        isinstance(cause, rel.cls(f"org.apache.kafka.common.errors.{name}")) for name in FATAL)
    code = int(errors.forException(cause).code())
    return KafkaError(code, f"{cause.getClass().getSimpleName()}: {cause.getMessage()}", fatal=fatal,
                      retriable=retriable and not fatal, txn_requires_abort=not fatal and not retriable)


def _java_config(config: dict[str, Any], **extra: str) -> Any:
    from jpype import JClass

    props = JClass("java.util.Properties")()
    for key, value in config.items():
        if key in DROPPED or callable(value):
            continue
        props.setProperty(RENAMED.get(key, key), str(value).lower() if isinstance(value, bool) else str(value))
    for key, value in extra.items():
        props.setProperty(key, value)
    return props


def _call(rel: Release, fn: Callable[[], Any]) -> Any:
    """A call into `rel`'s Java client from this thread; its Java exception as KafkaException."""
    from jpype import JException

    _daemon()
    try:
        return fn()
    except JException as exc:
        raise KafkaException(kafka_error(exc, rel)) from None


def _offsets_table(rel: Release, offsets: list[TopicPartition] | None) -> Any:
    """confluent-kafka's TopicPartition offsets as the Java client's Map<TopicPartition,
    OffsetAndMetadata> (a commit's, or a transaction's send_offsets')."""
    from jpype import JClass

    _daemon()
    meta = rel.cls("org.apache.kafka.clients.consumer.OffsetAndMetadata")
    table = JClass("java.util.HashMap")()
    for p in offsets or []:
        table.put(_tp(rel, p.topic, p.partition), meta(p.offset))
    return table


def _bytes(value: bytes | str | None) -> Any:
    from jpype import JArray, JByte

    if value is None:
        return None
    return JArray(JByte)(value.encode() if isinstance(value, str) else value)


def _tp(rel: Release, topic: str, partition: int) -> Any:
    return rel.cls("org.apache.kafka.common.TopicPartition")(topic, partition)


class Producer:
    """confluent_kafka.Producer's produce / poll / flush over a Java KafkaProducer."""

    def __init__(self, config: dict[str, Any], version: str, logger: Any = None):
        self._rel = rel = release(version)
        _daemon()
        config = dict(config)
        delivery = int(config.get("message.timeout.ms", 120_000))
        request = int(config.get("request.timeout.ms", 30_000))
        linger = int(float(config.get("linger.ms", 5)))
        # The Java producer refuses delivery.timeout.ms below linger.ms + request.timeout.ms.
        config["message.timeout.ms"] = max(delivery, linger + request)
        config["linger.ms"] = linger
        serializer = "org.apache.kafka.common.serialization.ByteArraySerializer"
        props = _java_config(config, **{"key.serializer": serializer, "value.serializer": serializer,
                                        "max.block.ms": str(delivery)})
        with rel.context():
            self._java = rel.cls("org.apache.kafka.clients.producer.KafkaProducer")(props)
        self._record = rel.cls("org.apache.kafka.clients.producer.ProducerRecord")
        self._closed = threading.Event()

    def produce(self, topic: str, value: bytes | None = None, key: bytes | None = None, partition: int = -1,
                on_delivery: Callable[[KafkaError | None, Message], None] | None = None) -> None:
        """Hand one record to the Java producer; `on_delivery(error or None, message)` runs at
        its report. A refusal before the record was accepted raises KafkaException."""
        _daemon()
        from jpype import JInt

        record = self._record(topic, JInt(partition) if partition >= 0 else None, _bytes(key), _bytes(value))
        report = _proxy(self._rel, "report", _report_class)(self._rel, on_delivery, topic, partition, key, value)
        _call(self._rel, lambda: self._java.send(record, report))

    # Transactions: each call blocks up to max.block.ms (the delivery timeout) in the Java
    # client, which is what the workloads pass as the timeout.
    def init_transactions(self, timeout: float | None = None) -> None:
        _call(self._rel, self._java.initTransactions)

    def begin_transaction(self) -> None:
        _call(self._rel, self._java.beginTransaction)

    def send_offsets_to_transaction(self, offsets: list[TopicPartition], group_metadata: Any,
                                    timeout: float | None = None) -> None:
        table = _offsets_table(self._rel, offsets)
        _call(self._rel, lambda: self._java.sendOffsetsToTransaction(table, group_metadata))

    def commit_transaction(self, timeout: float | None = None) -> None:
        _call(self._rel, self._java.commitTransaction)

    def abort_transaction(self, timeout: float | None = None) -> None:
        _call(self._rel, self._java.abortTransaction)

    def poll(self, timeout: float = 0) -> int:
        """Reports are served by the Java client's own I/O thread: nothing to do but wait."""
        self._closed.wait(max(0.0, timeout))
        return 0

    def flush(self, timeout: float | None = None) -> int:
        """Wait for what is in flight, then close: a shared producer is flushed only when it is
        dropped. Records still unreported after `timeout` are reported as failed by close."""
        _daemon()
        from jpype import JClass

        if not self._closed.is_set():
            self._closed.set()
            seconds = 30.0 if timeout is None else max(0.0, timeout)
            self._java.close(JClass("java.time.Duration").ofMillis(int(seconds * 1000)))
        return 0


def _proxy(rel: Release, name: str, make: Callable[[Release], type]) -> type:
    """The Python class implementing one of `rel`'s interfaces (`make(rel)`), made once per release."""
    if name not in rel.proxies:
        rel.proxies[name] = make(rel)
    return rel.proxies[name]


def _report_class(rel: Release) -> type:
    from jpype import JImplements, JOverride

    @JImplements(rel.cls("org.apache.kafka.clients.producer.Callback"))
    class Report:
        """A delivery report into Python, on the producer's I/O thread."""

        def __init__(self, rel, on_delivery, topic, partition, key, value):
            self.rel, self.on_delivery, self.topic, self.partition = rel, on_delivery, topic, partition
            self.key, self.value = key, value

        @JOverride
        def onCompletion(self, metadata, exception):  # noqa: N802 - the Java interface's name
            if self.on_delivery is None:
                return
            try:
                if exception is not None:
                    self.on_delivery(kafka_error(exception, self.rel), Message(self.topic, self.partition, -1, self.key,
                                                                     self.value))
                else:
                    offset = int(metadata.offset()) if metadata.hasOffset() else -1
                    self.on_delivery(None, Message(self.topic, int(metadata.partition()), offset, self.key,
                                                   self.value))
            except Exception as exc:  # noqa: BLE001 - never into the Java I/O thread
                print(f"ordeal: a delivery report's handler failed: {exc.__class__.__name__}: {exc}", flush=True)

    return Report




class Consumer:
    """confluent_kafka.Consumer's assign / consume / position / get_watermark_offsets /
    commit / subscribe / close over a Java KafkaConsumer."""

    def __init__(self, config: dict[str, Any], version: str, logger: Any = None):
        self._rel = rel = release(version)
        _daemon()
        from jpype import JClass

        deserializer = "org.apache.kafka.common.serialization.ByteArrayDeserializer"
        props = _java_config(config, **{"key.deserializer": deserializer, "value.deserializer": deserializer})
        with rel.context():
            self._java = rel.cls("org.apache.kafka.clients.consumer.KafkaConsumer")(props)
        self._duration = JClass("java.time.Duration")
        self._buffer: deque[Message] = deque()
        self._in_rebalance = False  # inside a rebalance callback (subscribe's listener)

    def _ms(self, seconds: float) -> Any:
        return self._duration.ofMillis(int(max(0.0, seconds) * 1000))

    def assign(self, partitions: list[TopicPartition]) -> None:
        """Assign exactly these partitions, each at its offset (OFFSET_BEGINNING / OFFSET_END,
        an offset, or anything else for the committed or reset position). Inside a rebalance
        callback: seek the partitions the group assigned to these offsets."""
        _daemon()
        from jpype import JClass

        tps = [(_tp(self._rel, p.topic, p.partition), p.offset) for p in partitions]
        if not self._in_rebalance:
            self._buffer.clear()
            _call(self._rel, lambda: self._java.assign(JClass("java.util.ArrayList")([tp for tp, _ in tps])))
        self._seek(tps)

    def incremental_assign(self, partitions: list[TopicPartition]) -> None:
        """Inside a rebalance callback only (the group assigns): seek to the given offsets."""
        self._seek([(_tp(self._rel, p.topic, p.partition), p.offset) for p in partitions])

    def unassign(self) -> None:
        """Inside a rebalance callback the Java client revokes by itself; elsewhere, unassign all."""
        if not self._in_rebalance:
            self._buffer.clear()
            _call(self._rel, self._java.unsubscribe)

    def incremental_unassign(self, partitions: list[TopicPartition]) -> None:
        """Inside a rebalance callback the Java client revokes by itself."""

    def committed(self, partitions: list[TopicPartition], timeout: float | None = None) -> list[TopicPartition]:
        """The group's committed offset of each partition (OFFSET_INVALID where none)."""
        _daemon()
        from jpype import JClass

        wanted = JClass("java.util.HashSet")([_tp(self._rel, p.topic, p.partition) for p in partitions])
        table = _call(self._rel, lambda: self._java.committed(wanted, self._ms(30 if timeout is None else timeout)))
        out = []
        for p in partitions:
            meta = table.get(_tp(self._rel, p.topic, p.partition))
            out.append(TopicPartition(p.topic, p.partition, int(meta.offset()) if meta is not None else OFFSET_INVALID))
        return out

    def _seek(self, tps: list[tuple[Any, int]]) -> None:
        from jpype import JClass

        for tp, offset in tps:
            if offset == OFFSET_BEGINNING:
                _call(self._rel, lambda tp=tp: self._java.seekToBeginning(JClass("java.util.List").of(tp)))
            elif offset == OFFSET_END:
                _call(self._rel, lambda tp=tp: self._java.seekToEnd(JClass("java.util.List").of(tp)))
            elif offset >= 0:
                _call(self._rel, lambda tp=tp, offset=offset: self._java.seek(tp, offset))

    def subscribe(self, topics: list[str], on_assign: Callable | None = None, on_revoke: Callable | None = None,
                  on_lost: Callable | None = None) -> None:
        _daemon()
        from jpype import JClass

        self._buffer.clear()
        listener = _proxy(self._rel, "rebalances", _rebalances_class)(self, on_assign, on_revoke, on_lost or on_revoke)
        _call(self._rel, lambda: self._java.subscribe(JClass("java.util.ArrayList")(list(topics)), listener))

    def consume(self, num_messages: int = 1, timeout: float = -1) -> list[Message]:
        """Up to num_messages records: buffered ones first, else one poll's worth."""
        _daemon()
        if not self._buffer:
            records = _call(self._rel, lambda: self._java.poll(self._ms(timeout if timeout >= 0 else 3600)))
            for r in records:
                value, key = r.value(), r.key()
                self._buffer.append(Message(str(r.topic()), int(r.partition()), int(r.offset()),
                                            bytes(key) if key is not None else None,
                                            bytes(value) if value is not None else None))
        n = min(num_messages, len(self._buffer))
        return [self._buffer.popleft() for _ in range(n)]

    def position(self, partitions: list[TopicPartition]) -> list[TopicPartition]:
        _daemon()
        # Records buffered here are not consumed yet: the position is the first of them.
        first = {}
        for m in self._buffer:
            first.setdefault((m.topic(), m.partition()), m.offset())
        def fetched(p: TopicPartition) -> int:
            return int(_call(self._rel, lambda: self._java.position(_tp(self._rel, p.topic, p.partition), self._ms(5))))

        return [TopicPartition(p.topic, p.partition, first[(p.topic, p.partition)]
                               if (p.topic, p.partition) in first else fetched(p))
                for p in partitions]

    def get_watermark_offsets(self, partition: TopicPartition, timeout: float | None = None,
                              cached: bool = False) -> tuple[int, int]:
        _daemon()
        from jpype import JClass

        tps = JClass("java.util.List").of(_tp(self._rel, partition.topic, partition.partition))
        wait = self._ms(5 if timeout is None else timeout)
        low = _call(self._rel, lambda: self._java.beginningOffsets(tps, wait))
        high = _call(self._rel, lambda: self._java.endOffsets(tps, wait))
        return int(next(iter(low.values()))), int(next(iter(high.values())))

    def consumer_group_metadata(self) -> Any:
        return _call(self._rel, self._java.groupMetadata)

    def commit(self, offsets: list[TopicPartition] | None = None, asynchronous: bool = True) -> None:
        _daemon()
        from jpype import JClass, JException

        table = _offsets_table(self._rel, offsets)
        if asynchronous:
            _call(self._rel, lambda: self._java.commitAsync(table, None))
            return None
        try:
            self._java.commitSync(table)
        except JException as exc:
            if isinstance(exc, self._rel.cls("org.apache.kafka.clients.consumer.CommitFailedException")):
                raise KafkaException(KafkaError(KafkaError.ILLEGAL_GENERATION, str(exc.getMessage()))) from None
            raise KafkaException(kafka_error(exc, self._rel)) from None
        return None

    def close(self) -> None:
        _daemon()
        from jpype import JException

        self._buffer.clear()
        try:
            self._java.close(self._ms(5))
        except JException:  # in use by another thread, or closed already: let it go
            pass



def _rebalances_class(rel: Release) -> type:
    from jpype import JImplements, JOverride

    @JImplements(rel.cls("org.apache.kafka.clients.consumer.ConsumerRebalanceListener"))
    class Rebalances:
        """A subscription's rebalances into confluent-kafka-shaped callbacks (consumer, partitions),
        on the polling thread. An exception of a callback comes out of that poll."""

        def __init__(self, consumer, on_assign, on_revoke, on_lost):
            self.consumer, self.on_assign, self.on_revoke, self.on_lost = consumer, on_assign, on_revoke, on_lost

        def _call(self, callback, partitions):
            if callback is None:
                return
            tps = sorted((str(tp.topic()), int(tp.partition())) for tp in partitions)
            self.consumer._in_rebalance = True
            try:
                callback(self.consumer, [TopicPartition(t, p) for t, p in tps])
            finally:
                self.consumer._in_rebalance = False

        @JOverride
        def onPartitionsAssigned(self, partitions):  # noqa: N802 - the Java interface's names
            self._call(self.on_assign, partitions)

        @JOverride
        def onPartitionsRevoked(self, partitions):  # noqa: N802
            self._call(self.on_revoke, partitions)

        @JOverride
        def onPartitionsLost(self, partitions):  # noqa: N802
            self._call(self.on_lost, partitions)

    return Rebalances

