"""The kafka-log workload's topics: created once per cluster, before the first op uses them.

Every client process opens on its own thread, so creation is guarded by a lock and
idempotent (a topic that already exists is fine); the first open waits until every
partition has a leader, so the first send does not race the controller.

On a reused cluster the topics of earlier runs are deleted first: nobody writes them any
more, and a fault that picks a partition (its leader, its ISR) among idle ones would
test nothing. The topics of every workload alive in this process are not earlier runs':
kafka-log and kafka-txn in one run each have their own.
"""
from __future__ import annotations

import re
import threading
import weakref

from confluent_kafka.admin import NewTopic

from ground.cluster_view import ClusterView
from clusters.health import admin_client
from clusters.kafka_topics import create_topics, delete_topics

RUN_TOPIC = re.compile(r"t\d+-[0-9a-f]{6}")  # kafka-log topic names: t<i>-<token of the run>


_LIVE: "weakref.WeakSet[TopicSet]" = weakref.WeakSet()  # every TopicSet of this process's workloads


class TopicSet:
    """Topics of one workload, each with the same number of partitions, RF and min ISR of
    the variant the cluster runs."""

    def __init__(self, names: list[str], partitions: int):
        self.names, self.partitions = names, partitions
        self._lock = threading.Lock()
        self._ready: set[str] = set()  # cluster runs whose topics exist with leaders
        _LIVE.add(self)

    def partitions_of(self) -> list[tuple[str, int]]:
        return [(t, p) for t in self.names for p in range(self.partitions)]

    def ensure(self, cluster: ClusterView) -> None:
        """Create the topics on `cluster` unless this set already did; raise when they cannot
        be made ready within READY_TIMEOUT (the client's open then fails, nothing was sent)."""
        with self._lock:
            if cluster.run in self._ready:
                return
            k = cluster.variant.kafka
            servers = cluster.bootstrap_servers()
            live = {name for topic_set in list(_LIVE) for name in topic_set.names}
            stale = [t for t in admin_client(servers).list_topics(timeout=10).topics
                     if RUN_TOPIC.fullmatch(t) and t not in live]
            if stale:
                delete_topics(servers, stale)
            create_topics(servers, [NewTopic(t, num_partitions=self.partitions, replication_factor=k.replication_factor,
                                           config={"min.insync.replicas": str(k.min_insync_replicas)})
                                  for t in self.names])
            self._ready.add(cluster.run)
