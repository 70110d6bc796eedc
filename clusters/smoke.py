"""A quick proof that a booted cluster works end to end: create a topic, produce through
the proxies with the variant's acks, read everything back in order, survive one SIGKILLed
broker. `make run` uses it until the harness runs the default scenario."""
from __future__ import annotations

import time
from dataclasses import dataclass

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import NewTopic

from clusters.cluster import Cluster
from clusters.health import QUIET
from clusters.kafka_topics import create_topics


@dataclass
class SmokeResult:
    topic: str
    produced: int
    acknowledged: int
    read_back: int
    in_order: bool
    killed: str | None
    seconds: float

    def summary(self) -> str:
        return (f"topic {self.topic}: {self.acknowledged}/{self.produced} acknowledged, "
                f"{self.read_back} read back, {'in order' if self.in_order else 'OUT OF ORDER'}"
                + (f", after SIGKILL of {self.killed}" if self.killed else "") + f" ({self.seconds:.1f} s)")


def create_topic(cluster: Cluster, topic: str, partitions: int = 1) -> None:
    k = cluster.variant.kafka
    create_topics(cluster.bootstrap_servers(),
                  [NewTopic(topic, num_partitions=partitions, replication_factor=k.replication_factor,
                            config={"min.insync.replicas": str(k.min_insync_replicas)})])


def produce(cluster: Cluster, topic: str, values: list[int], timeout: float = 60.0) -> list[tuple[int, int]]:
    """Send each value (key = value) and return the (partition, offset) of every acknowledged one."""
    p = cluster.variant.producer
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers(), "acks": p.acks,
                         "enable.idempotence": p.enable_idempotence, "retries": p.retries,
                         "message.timeout.ms": int(timeout * 1000), "linger.ms": 5}, logger=QUIET)
    acked: list[tuple[int, int]] = []

    def on_delivery(err, msg):  # noqa: ANN001 - librdkafka callback
        if err is None:
            acked.append((msg.partition(), msg.offset()))

    for v in values:
        producer.produce(topic, key=str(v).encode(), value=str(v).encode(), on_delivery=on_delivery)
        producer.poll(0)
    producer.flush(timeout)
    return acked


def read_partition(cluster: Cluster, topic: str, partition: int, expected: int, timeout: float = 60.0) -> list[int]:
    """Every value of the partition from the beginning, in offset order."""
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap_servers(), "group.id": f"smoke-{topic}",
                         "enable.auto.commit": False, "auto.offset.reset": "earliest"}, logger=QUIET)
    consumer.assign([TopicPartition(topic, partition, 0)])
    values: list[int] = []
    deadline = time.monotonic() + timeout
    try:
        while len(values) < expected and time.monotonic() < deadline:
            for msg in consumer.consume(num_messages=500, timeout=1.0):
                if msg.error():
                    if msg.error().fatal():
                        raise KafkaException(msg.error())
                    continue
                values.append(int(msg.value()))
    finally:
        consumer.close()
    return values


def smoke(cluster: Cluster, messages: int = 1000, kill_one: bool = True) -> SmokeResult:
    started = time.monotonic()
    topic = f"smoke-{int(time.time())}"
    create_topic(cluster, topic)
    first = list(range(messages))
    acked = produce(cluster, topic, first)
    killed = None
    if kill_one:
        victim = cluster.leader_of(topic, 0) or cluster.brokers[-1]
        victim.kill()
        killed = victim.name
        second = list(range(messages, 2 * messages))
        acked += produce(cluster, topic, second)
        first += second
    values = read_partition(cluster, topic, 0, len(acked))
    return SmokeResult(topic=topic, produced=len(first), acknowledged=len(acked), read_back=len(values),
                       in_order=values == sorted(values), killed=killed, seconds=time.monotonic() - started)
