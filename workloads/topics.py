"""The kafka-log workload's topics: created once per cluster, before the first op uses them.

Every client process opens on its own thread, so creation is guarded by a lock and
idempotent (a topic that already exists is fine); the first open waits until every
partition has a leader, so the first send does not race the controller.

On a reused cluster the topics of earlier runs are deleted first: nobody writes them any
more, and a fault that picks a partition (its leader, its ISR) among idle ones would
test nothing.
"""
from __future__ import annotations

import re
import threading
import time
from typing import Any

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import NewTopic

from clusters.health import admin_client

CREATE_TIMEOUT = 30.0  # seconds for CreateTopics and for every partition to get a leader
RUN_TOPIC = re.compile(r"t\d+-[0-9a-f]{6}")  # kafka-log topic names: t<i>-<token of the run>


class TopicSet:
    """Topics of one workload, each with the same number of partitions, RF and min ISR of
    the variant the cluster runs."""

    def __init__(self, names: list[str], partitions: int):
        self.names, self.partitions = names, partitions
        self._lock = threading.Lock()
        self._ready: set[str] = set()  # cluster runs whose topics exist with leaders

    def partitions_of(self) -> list[tuple[str, int]]:
        return [(t, p) for t in self.names for p in range(self.partitions)]

    def ensure(self, cluster: Any) -> None:
        """Create the topics on `cluster` unless this set already did; raise when they cannot
        be made ready within CREATE_TIMEOUT (the client's open then fails, nothing was sent)."""
        with self._lock:
            if cluster.run in self._ready:
                return
            k = cluster.variant.kafka
            admin = admin_client(cluster.bootstrap_servers())
            self._drop_earlier_runs(admin)
            new = [NewTopic(t, num_partitions=self.partitions, replication_factor=k.replication_factor,
                            config={"min.insync.replicas": str(k.min_insync_replicas)}) for t in self.names]
            futures = admin.create_topics(new, operation_timeout=CREATE_TIMEOUT, request_timeout=CREATE_TIMEOUT)
            for topic, future in futures.items():
                try:
                    future.result(timeout=CREATE_TIMEOUT + 5)
                except KafkaException as exc:
                    if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                        raise
            self._wait_for_leaders(admin)
            self._ready.add(cluster.run)

    def _drop_earlier_runs(self, admin: Any) -> None:
        stale = [t for t in admin.list_topics(timeout=10).topics
                 if RUN_TOPIC.fullmatch(t) and t not in self.names]
        if not stale:
            return
        for topic, future in admin.delete_topics(stale, operation_timeout=CREATE_TIMEOUT,
                                                 request_timeout=CREATE_TIMEOUT).items():
            try:
                future.result(timeout=CREATE_TIMEOUT + 5)
            except KafkaException as exc:
                if exc.args[0].code() != KafkaError.UNKNOWN_TOPIC_OR_PART:
                    raise

    def _wait_for_leaders(self, admin: Any) -> None:
        deadline = time.monotonic() + CREATE_TIMEOUT
        while True:
            metadata = admin.list_topics(timeout=5)
            missing = [(t, p) for t, p in self.partitions_of()
                       if t not in metadata.topics or p not in metadata.topics[t].partitions
                       or metadata.topics[t].partitions[p].leader < 0]
            if not missing:
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"no leader for {len(missing)} partitions, e.g. {missing[0]}")
            time.sleep(0.2)
