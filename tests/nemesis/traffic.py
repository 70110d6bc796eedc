"""Test traffic: a producer that keeps writing unique integers and remembers which were
acknowledged, and a final read of a whole partition up to its high watermark."""
from __future__ import annotations

import itertools
import threading
import time

from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import NewTopic

from clusters.health import QUIET as _QUIET
from clusters.kafka_topics import create_topics
from nemesis.targets import partition_state
from tests.support import until


def create_topic(cluster, topic: str, config: dict[str, str] | None = None) -> None:
    k = cluster.variant.kafka
    create_topics(cluster.bootstrap_servers(),
                  [NewTopic(topic, 1, k.replication_factor,
                            config={"min.insync.replicas": str(k.min_insync_replicas), **(config or {})})])


class Writer:
    """Sends 0, 1, 2, ... to partition 0 of `topic` (acks=all unless told, no idempotence,
    like the variants' producer) at about `rate` per second until stopped; `acked` holds the values
    Kafka acknowledged, with their offsets."""

    def __init__(self, cluster, topic: str, rate: float = 50.0, acks: str = "all"):
        self.topic, self.rate = topic, rate
        self.producer = Producer({"bootstrap.servers": cluster.bootstrap_servers(), "acks": acks,
                                  "enable.idempotence": False, "retries": 3, "linger.ms": 0,
                                  "request.timeout.ms": 30000, "message.timeout.ms": 60000,
                                  "topic.metadata.refresh.interval.ms": 1000}, logger=_QUIET)
        self.acked: dict[int, int] = {}
        self.failed = 0
        self.sent = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._lock = threading.Lock()

    def _delivered(self, err, msg) -> None:  # noqa: ANN001 - librdkafka callback
        with self._lock:
            if err is None:
                self.acked[int(msg.value())] = msg.offset()
            else:
                self.failed += 1

    def _run(self) -> None:
        for value in itertools.count():
            if self._stop.is_set():
                return
            self.producer.produce(self.topic, value=str(value).encode(), partition=0, on_delivery=self._delivered)
            self.sent += 1
            self.producer.poll(0)
            time.sleep(1.0 / self.rate)

    def start(self) -> "Writer":
        self._thread.start()
        return self

    def acked_count(self) -> int:
        with self._lock:
            return len(self.acked)

    def stop(self, drain: float = 5.0) -> dict[int, int]:
        """Stop sending; whatever is not acknowledged within `drain` seconds is given up."""
        self._stop.set()
        self._thread.join(timeout=10)
        self.producer.flush(drain)
        self.producer.purge()
        self.producer.flush(5)
        with self._lock:
            return dict(self.acked)


def wait_leader(cluster, topic: str, timeout: float = 90.0) -> str:
    """The partition's leader, once it has one (restarted brokers take a while; metadata
    asked meanwhile may fail, which counts as none yet)."""
    return until(lambda: partition_state(cluster, topic, 0).leader, timeout, step=0.5, what=f"a leader of {topic}/0")


def read_all(cluster, topic: str, timeout: float = 60.0) -> list[int]:
    """Every value of partition 0, from the beginning to the high watermark."""
    wait_leader(cluster, topic)

    def fresh() -> Consumer:
        return Consumer({"bootstrap.servers": cluster.bootstrap_servers(), "group.id": f"final-{topic}",
                         "enable.auto.commit": False, "auto.offset.reset": "earliest"}, logger=_QUIET)

    consumer = fresh()
    deadline = time.monotonic() + timeout
    tp = TopicPartition(topic, 0)
    try:
        while True:
            try:
                _, high = consumer.get_watermark_offsets(tp, timeout=5)
                break
            except Exception:  # noqa: BLE001 - no leader yet, or a broker just restarted answered from an empty cache
                if time.monotonic() > deadline:
                    raise
                consumer.close()  # a new client asks for metadata afresh; librdkafka may keep a stale answer
                consumer = fresh()
                time.sleep(0.5)
        consumer.assign([TopicPartition(topic, 0, 0)])
        values: list[int] = []
        position = 0
        while position < high and time.monotonic() < deadline:
            for msg in consumer.consume(num_messages=500, timeout=1.0):
                if msg.error():
                    if msg.error().code() != KafkaError._PARTITION_EOF and msg.error().fatal():
                        raise RuntimeError(msg.error())
                    continue
                values.append(int(msg.value()))
                position = msg.offset() + 1
        if position < high:
            raise TimeoutError(f"read {position} of {high} offsets of {topic}")
        return values
    finally:
        consumer.close()
