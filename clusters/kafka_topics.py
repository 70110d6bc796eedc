"""Creating and deleting topics on a cluster that may be slow or between controllers.

Both requests are idempotent for us (a topic that already exists, or is already gone, is
fine), so a request that timed out or reached a broker that is no longer the controller is simply sent again, until
one deadline. Each attempt uses a new admin client: the one librdkafka had keeps sending to
the controller its metadata named, and answers NOT_CONTROLLER for minutes after that
broker was paused or killed. The broker is not asked to wait for the topic to propagate: on a loaded
machine that wait can outlast the client's own request timeout, and the client then
reports a timeout for a topic that was created. Readiness is instead what a client needs:
every partition named with a leader in the metadata a broker serves.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future, TimeoutError as FutureTimeout

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, NewTopic

from clusters.health import QUIET, admin_client

READY_TIMEOUT = 90.0  # seconds until every partition of new topics has a leader
_REQUEST_TIMEOUT = 15.0
# Worth asking again. INVALID_REPLICATION_FACTOR means fewer live brokers than the RF: the
# variant has enough brokers, so one is away (killed, or paused past its ZooKeeper session).
# UNKNOWN is what a controller that was paused answers as it resigns.
_AGAIN = frozenset({KafkaError._TIMED_OUT, KafkaError._TRANSPORT, KafkaError._ALL_BROKERS_DOWN,
                    KafkaError.REQUEST_TIMED_OUT, KafkaError.NOT_CONTROLLER, KafkaError.INVALID_REPLICATION_FACTOR,
                    KafkaError.UNKNOWN})


class TopicsNotReady(RuntimeError):
    """The topics could not be created, or some partition had no leader, before the deadline."""


def create_topics(bootstrap_servers: str, topics: list[NewTopic], timeout: float = READY_TIMEOUT) -> None:
    """Create `topics` (existing ones are kept) and return once each partition has a leader,
    as every broker that answers tells it."""
    deadline = time.monotonic() + timeout
    _until_answered(bootstrap_servers, lambda admin, names: admin.create_topics(
                        [t for t in topics if t.topic in names], request_timeout=_REQUEST_TIMEOUT),
                    [t.topic for t in topics], KafkaError.TOPIC_ALREADY_EXISTS, "created", deadline)
    wait_for_leaders(bootstrap_servers, [(t.topic, p) for t in topics for p in range(t.num_partitions)], deadline)


def delete_topics(bootstrap_servers: str, names: list[str], timeout: float = READY_TIMEOUT) -> None:
    """Delete `names` (ones already gone are fine)."""
    _until_answered(bootstrap_servers, lambda admin, left: admin.delete_topics(
                        sorted(left), request_timeout=_REQUEST_TIMEOUT),
                    names, KafkaError.UNKNOWN_TOPIC_OR_PART, "deleted", time.monotonic() + timeout)


def _until_answered(bootstrap_servers: str, request: Callable[[AdminClient, set[str]], dict[str, Future]],
                    names: list[str], done_already: int, verb: str, deadline: float) -> None:
    """Send `request` for the topics not yet answered until each is answered, or raise at `deadline`."""
    pending, last = set(names), ""
    while pending:
        admin = admin_client(bootstrap_servers)  # held until its futures are done, or librdkafka drops them
        for name, future in request(admin, pending).items():
            try:
                future.result(timeout=_REQUEST_TIMEOUT + 5)
            except FutureTimeout:
                last = "no answer"
                continue
            except KafkaException as exc:
                error: KafkaError = exc.args[0]
                if error.code() in _AGAIN:
                    last = error.name()
                    continue
                if error.code() != done_already:
                    raise
            pending.discard(name)
        if pending and time.monotonic() > deadline:
            raise TopicsNotReady(f"topic {min(pending)} not {verb} in time ({last})")
        if pending:
            time.sleep(1.0)


def wait_for_leaders(bootstrap_servers: str, partitions: list[tuple[str, int]], deadline: float) -> None:
    """Return once the metadata each broker serves names a leader for each of `partitions`.
    The controller creates a topic and the other brokers hear of it a moment later, and the
    next client may ask any of them (a fault's target, right after the topic is made, was not
    found so). A broker that does not answer (down) is not waited for; one must answer."""
    admins = {server: admin_client(server) for server in bootstrap_servers.split(",")}
    lagging: list[tuple[str, tuple[str, int]]] = []
    while True:
        complete, lagging = 0, []
        for server, admin in admins.items():
            try:
                metadata = admin.list_topics(timeout=5)
            except KafkaException:
                continue  # no answer from this broker this time
            missing = [(t, p) for t, p in partitions
                       if t not in metadata.topics or p not in metadata.topics[t].partitions
                       or metadata.topics[t].partitions[p].leader < 0]
            if missing:
                lagging.append((server, missing[0]))
            else:
                complete += 1
        if complete and not lagging:
            return
        if time.monotonic() > deadline:
            raise TopicsNotReady(f"no leader for {lagging[0][1][0]}/{lagging[0][1][1]} as {lagging[0][0]} tells it"
                                 if lagging else "no broker answered for the topics' metadata")
        time.sleep(0.2)


def log_offsets(bootstrap_servers: str, partitions: list[tuple[str, int]],
                timeout: float = 10.0) -> dict[tuple[str, int], tuple[int, int] | None]:
    """Each partition's log start and log end offsets as its leader says now (a consumer's low
    and high watermarks); None for one no leader answered in time."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap_servers, "group.id": "ordeal-offsets",
                         "enable.auto.commit": False, "socket.timeout.ms": 5000}, logger=QUIET)
    try:
        found: dict[tuple[str, int], tuple[int, int] | None] = {}
        for topic, partition in partitions:
            try:
                low, high = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=timeout)
                found[(topic, partition)] = (low, high)
            except KafkaException:
                found[(topic, partition)] = None
        return found
    finally:
        consumer.close()
