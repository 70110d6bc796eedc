"""The real partition log: a channel's topic in Kafka, partition 0, records keyed "0".

One producer serves every chain and every Broadcast stream of the OSN; each append waits
for its own delivery report, so Broadcast answers SUCCESS only after Kafka's acknowledgement
with the variant's acks. As in Fabric, retries without idempotence may append a retried
envelope twice; the peers, not the orderer, drop duplicate tx ids.
"""
from __future__ import annotations

import logging
import threading
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, Message, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from osn.partition_log import LogLost, LogRecord, LogUnavailable
from osn.settings import OsnSettings

log = logging.getLogger(__name__)

PARTITION = 0
KEY = b"0"
ADMIN_TIMEOUT_S = 15.0
# librdkafka's answers that mean the reader's position is gone (an unclean election truncated
# the log under it; with auto.offset.reset=error librdkafka reports instead of skipping, and
# _LOG_TRUNCATION comes from its leader-epoch validation). Fabric stops consuming on
# ErrOffsetOutOfRange.
_POSITION_LOST = {KafkaError._AUTO_OFFSET_RESET, KafkaError.OFFSET_OUT_OF_RANGE, KafkaError._LOG_TRUNCATION}


class KafkaLogs:
    """The OSN's Kafka clients; `partition(channel)` gives one chain's PartitionLog."""

    def __init__(self, settings: OsnSettings) -> None:
        self._settings = settings
        p = settings.producer
        self._producer = Producer({
            **settings.kafka_client_config(),
            "client.id": f"ordeal-{settings.name}",
            "acks": p.acks,
            "retries": p.retries,
            "enable.idempotence": p.enable_idempotence,
            "delivery.timeout.ms": p.delivery_timeout_ms,
            "linger.ms": 1,
            # As Fabric's sarama (Net.MaxOpenRequests, its default 5; Fabric 1.4 leaves it): at
            # most 5 Produce requests open per broker, so what comes meanwhile goes into the next
            # batch. librdkafka's default (1,000,000) sent about one request per envelope, and the
            # brokers spent 10.2 ms of CPU per acknowledged tx against 2.1 under Fabric's orderer
            # (bench/orderers.py, docs/orderers.md).
            "max.in.flight.requests.per.connection": 5,
            # Above the default 1 MB so a message up to AbsoluteMaxBytes can be produced.
            "message.max.bytes": settings.batch.absolute_max_bytes + 64 * 1024,
        })
        self._admin = AdminClient({**settings.kafka_client_config(), "client.id": f"ordeal-{settings.name}-admin"})
        self._stopping = threading.Event()
        self._poller = threading.Thread(target=self._poll_delivery_reports, name="producer-poll", daemon=True)
        self._poller.start()

    def _poll_delivery_reports(self) -> None:
        while not self._stopping.is_set():
            self._producer.poll(0.1)

    def partition(self, channel: str) -> "KafkaPartitionLog":
        return KafkaPartitionLog(self, channel)

    def close(self) -> None:
        self._producer.flush(5)
        self._stopping.set()
        self._poller.join()


class KafkaPartitionLog:
    def __init__(self, logs: KafkaLogs, channel: str) -> None:
        self._logs = logs
        self.topic = channel  # Fabric: topic name = channel id

    def ensure_topic(self) -> None:
        # Ask the metadata first: a restarted OSN finds its topic there, and need not reach
        # the controller at all (librdkafka's admin client can keep answering NOT_CONTROLLER
        # for minutes after the controller it knew was killed).
        try:
            meta = self._logs._admin.list_topics(topic=self.topic, timeout=ADMIN_TIMEOUT_S)
            known = meta.topics.get(self.topic)
            if known is not None and known.error is None and known.partitions:
                return
        except KafkaException:
            pass  # fall through to creating it; its error says what is wrong
        topic = self._logs._settings.topic
        new = NewTopic(self.topic, num_partitions=1, replication_factor=topic.replication_factor,
                       config={"min.insync.replicas": str(topic.min_insync_replicas)})
        future = self._logs._admin.create_topics([new], request_timeout=ADMIN_TIMEOUT_S)[self.topic]
        try:
            future.result(timeout=ADMIN_TIMEOUT_S + 5)
        except KafkaException as exc:
            error: KafkaError = exc.args[0]
            if error.code() != KafkaError.TOPIC_ALREADY_EXISTS:
                raise LogUnavailable(error.name()) from None
        except FutureTimeout:
            raise LogUnavailable("TIMED_OUT") from None

    def append(self, value: bytes) -> int:
        done: Future[int] = Future()

        def delivered(err: KafkaError | None, msg: Message) -> None:
            if err is not None:
                # Reported after sending: with retries and no idempotence an earlier attempt
                # may have been appended even though the last one failed.
                done.set_exception(LogUnavailable(err.name(), maybe_appended=True))
            else:
                done.set_result(msg.offset())

        try:
            self._logs._producer.produce(self.topic, value, key=KEY, partition=PARTITION, on_delivery=delivered)
        except BufferError:
            raise LogUnavailable("QUEUE_FULL") from None
        except KafkaException as exc:
            raise LogUnavailable(exc.args[0].name()) from None
        try:
            # librdkafka reports every message by delivery.timeout.ms; the margin covers the poll.
            return done.result(timeout=self._logs._settings.producer.delivery_timeout_ms / 1000 + 5)
        except FutureTimeout:
            raise LogUnavailable("TIMED_OUT", maybe_appended=True) from None

    def reader(self, start: int | None) -> "KafkaReader":
        settings = self._logs._settings
        fetch_max = max(52_428_800, settings.batch.absolute_max_bytes + 64 * 1024)
        consumer = Consumer({
            **settings.kafka_client_config(),
            "client.id": f"ordeal-{settings.name}-{self.topic}",
            "group.id": f"ordeal-{settings.name}-{self.topic}",  # never joined: partitions are assigned
            "enable.auto.commit": False,
            "auto.offset.reset": "error",
            "fetch.max.bytes": fetch_max,
            # librdkafka requires room for a whole fetch response above fetch.max.bytes.
            "receive.message.max.bytes": max(100_000_000, fetch_max + 512),
        })
        offset = OFFSET_BEGINNING if start is None else start
        consumer.assign([TopicPartition(self.topic, PARTITION, offset)])
        return KafkaReader(consumer, self.topic)


class KafkaReader:
    def __init__(self, consumer: Consumer, topic: str) -> None:
        self._consumer = consumer
        self._topic = topic

    def poll(self, timeout: float) -> LogRecord | None:
        msg = self._consumer.poll(timeout)
        if msg is None:
            return None
        error = msg.error()
        if error is not None:
            if error.code() in _POSITION_LOST:
                raise LogLost(f"{self._topic}: {error.name()}: {error.str()}")
            log.warning("[channel %s] consumer: %s", self._topic, error.str())
            return None
        return LogRecord(msg.offset(), msg.value() or b"")

    def close(self) -> None:
        self._consumer.close()
