"""The Kafka client a workload's producers and consumers are made with: librdkafka through
confluent-kafka, or Kafka's own Java client (workloads/java/) in the same shape, as the
variant's (or the scenario's) [client] says. Workloads make every producer and consumer
here, so the choice is made in one place and both clients run the same workload code.

librdkafka without a version is ordeal's own confluent-kafka, in this process. A pinned
release other than that one runs in a process of its own (workloads/librdkafka/), one per
release, from an environment built once under ordeal's cache: a process holds one
librdkafka, and ordeal's own is loaded here already."""
from __future__ import annotations

from typing import Any

import confluent_kafka

from clusters.health import QUIET
from workloads.librdkafka.environments import ClientUnavailable

__all__ = ["ClientUnavailable", "KafkaClient"]


def release_of(version: tuple[str, int] | str) -> str:
    """confluent_kafka.version()'s release string: a (string, int) pair in older
    releases (2.3.0), a string in newer ones (2.16.2)."""
    return version[0] if isinstance(version, tuple) else version


OWN_RELEASE = release_of(confluent_kafka.version())  # ordeal's own confluent-kafka (.venv's)


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

    @property
    def isolated(self) -> bool:
        """A librdkafka release other than ordeal's own: it runs in a process of its own."""
        return (self.implementation == "librdkafka" and self.version is not None
                and self.version != OWN_RELEASE)

    def describe(self) -> dict[str, str]:
        """What the history's run.json and the report say ran. For a librdkafka release of its
        own process, what that process loaded (it is started here, if it was not)."""
        if self.java:
            return {"implementation": "java", "version": str(self.version)}
        if self.isolated:
            from workloads.librdkafka.process import release

            loaded = release(str(self.version)).versions
            return {"implementation": "librdkafka", "version": loaded["libversion"],
                    "confluent_kafka": loaded["version"], "process": "own"}
        return {"implementation": "librdkafka", "version": confluent_kafka.libversion()[0],
                "confluent_kafka": OWN_RELEASE}

    def prepare(self) -> None:
        """What the first producer or consumer would otherwise wait for inside the main phase:
        the Java client's jars (Maven, the first time), the JVM and the release's class loader;
        a librdkafka release's environment (the first time) and process. ClientUnavailable (one
        line) when a librdkafka release cannot be installed."""
        if self.java:
            from workloads.java.libs import release

            release(str(self.version))
        elif self.isolated:
            from workloads.librdkafka.process import release as librdkafka_release

            librdkafka_release(str(self.version))

    def producer(self, config: dict[str, Any]) -> Any:
        if self.java:
            from workloads.java.kafka import Producer

            return Producer(config, str(self.version))
        if self.isolated:
            from workloads.librdkafka.kafka import Producer as IsolatedProducer

            return IsolatedProducer(config, str(self.version))
        return confluent_kafka.Producer(config, logger=QUIET)

    def consumer(self, config: dict[str, Any]) -> Any:
        if self.java:
            from workloads.java.kafka import Consumer

            return Consumer(config, str(self.version))
        if self.isolated:
            from workloads.librdkafka.kafka import Consumer as IsolatedConsumer

            return IsolatedConsumer(config, str(self.version))
        return confluent_kafka.Consumer(config, logger=QUIET)
