"""workloads.group_consumer against a stand-in for the client's consumer: what its rebalance
callbacks ask the coordinator, and when. No cluster."""
from __future__ import annotations

from typing import Any

from confluent_kafka import KafkaError, KafkaException, TopicPartition

from workloads.group_consumer import GroupConsumer


class RebalancingConsumer:
    """Runs a rebalance that assigns `partitions` inside close(), as librdkafka may; its
    committed() lookup times out, as it does when the coordinator is away."""

    def __init__(self, partitions: list[TopicPartition]):
        self.partitions, self.lookups, self.closed = partitions, 0, False

    def subscribe(self, topics: list[str], on_assign: Any, on_revoke: Any, on_lost: Any) -> None:
        self.on_assign = on_assign

    def committed(self, partitions: list[TopicPartition], timeout: float) -> list[TopicPartition]:
        self.lookups += 1
        raise KafkaException(KafkaError(KafkaError._TIMED_OUT, "Failed to get committed offsets"))

    def assign(self, partitions: list[TopicPartition]) -> None:
        pass

    def close(self) -> None:
        self.on_assign(self, self.partitions)
        self.closed = True


def test_a_rebalance_during_close_asks_nothing_of_the_coordinator_and_close_ends():
    consumer = RebalancingConsumer([TopicPartition("t", 0)])
    member = GroupConsumer(consumer, ["t"], incremental=False)
    member.close()
    assert consumer.closed and consumer.lookups == 0 and member.positions == {}


def test_a_rebalance_before_close_asks_for_the_committed_offsets():
    consumer = RebalancingConsumer([TopicPartition("t", 0)])
    GroupConsumer(consumer, ["t"], incremental=False)
    try:
        consumer.on_assign(consumer, consumer.partitions)
    except KafkaException:
        pass
    assert consumer.lookups == 1
