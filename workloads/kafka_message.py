"""A consumed or delivered record with confluent-kafka's Message accessors, for the clients that
stand in for confluent-kafka's own (the Java client, a librdkafka release in its own process):
confluent-kafka's Message cannot be made outside the binding."""
from __future__ import annotations

from confluent_kafka import KafkaError


class Message:
    """A consumed record or a delivered one, with confluent-kafka's Message accessors."""

    __slots__ = ("_topic", "_partition", "_offset", "_key", "_value", "_error")

    def __init__(self, topic: str, partition: int, offset: int, key: bytes | None, value: bytes | None,
                 error: KafkaError | None = None):
        self._topic, self._partition, self._offset = topic, partition, offset
        self._key, self._value, self._error = key, value, error

    def topic(self) -> str:
        return self._topic

    def partition(self) -> int:
        return self._partition

    def offset(self) -> int:
        return self._offset

    def key(self) -> bytes | None:
        return self._key

    def value(self) -> bytes | None:
        return self._value

    def error(self) -> KafkaError | None:
        return self._error
