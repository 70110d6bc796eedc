"""The Kafka client a workload's producers and consumers are made with: librdkafka through
confluent-kafka, or Kafka's own Java client (workloads/java/) in the same shape, as the
variant's (or the scenario's) [client] says. Workloads make every producer and consumer
here, so the choice is made in one place and both clients run the same workload code."""
from __future__ import annotations

from typing import Any

import confluent_kafka

from clusters.health import QUIET


class KafkaClient:
    """Makes producers and consumers of one client implementation and version."""

    def __init__(self, implementation: str = "librdkafka", version: str | None = None):
        self.implementation, self.version = implementation, version

    @classmethod
    def of(cls, variant: Any) -> "KafkaClient":
        """The client a variant names (librdkafka when there is no variant)."""
        if variant is None:
            return cls()
        return cls(variant.client.implementation, variant.client_version)

    @property
    def java(self) -> bool:
        return self.implementation == "java"

    def describe(self) -> dict[str, str]:
        """What the history's run.json and the report say ran."""
        if self.java:
            return {"implementation": "java", "version": str(self.version)}
        return {"implementation": "librdkafka", "version": confluent_kafka.libversion()[0]}

    def prepare(self) -> None:
        """What the first producer or consumer would otherwise wait for inside the main phase:
        the Java client's jars (Maven, the first time), the JVM and the release's class loader."""
        if self.java:
            from workloads.java.libs import release

            release(str(self.version))

    def producer(self, config: dict[str, Any]) -> Any:
        if self.java:
            from workloads.java.kafka import Producer

            return Producer(config, str(self.version))
        return confluent_kafka.Producer(config, logger=QUIET)

    def consumer(self, config: dict[str, Any]) -> Any:
        if self.java:
            from workloads.java.kafka import Consumer

            return Consumer(config, str(self.version))
        return confluent_kafka.Consumer(config, logger=QUIET)
