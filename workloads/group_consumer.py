"""A consumer in a consumer group as the Kafka workloads drive it: it subscribes, polls, and
commits what it has read; every rebalance a poll sees is recorded in that poll, where the
checkers judge positions by it (checkers.consumer_groups, docs/history-format.md).

Why the rebalance callbacks assign by hand: the position an assigned partition starts from
is what the checkers hold the group's commits to, so it must be known, not guessed. On
assignment the consumer asks the coordinator for the group's committed offsets and starts
each partition there (the beginning where nothing is committed), which is what either
client would do by itself; the history records the offsets it was given.

Why one record per consume call: a rebalance runs inside a consume call (librdkafka serves
it from the same queue as the records, the Java client at the start of its poll), so a
record returned by a call that ran one comes after it. A poll that already holds records
when a rebalance comes ends there, and the rebalance and the record after it open the next
poll: each poll's rebalances precede all of its records, as the history format says.

Both clients (workloads.kafka_clients) are driven through confluent-kafka's interface:
subscribe with on_assign / on_revoke / on_lost, committed, assign / incremental_assign,
consume and commit.
"""
from __future__ import annotations

from typing import Any

from confluent_kafka import OFFSET_BEGINNING, KafkaError, KafkaException, TopicPartition

from ground.op import FAIL, INFO

# A commit the coordinator refused because the member is not of the group's current
# generation (a rebalance is under way or passed it by): it checks that before it writes
# anything, and neither client repeats such a commit, so it certainly did not happen.
# Anything else (a timeout, a lost coordinator) may have been written: indeterminate.
_STALE_MEMBER = frozenset(code for code in (
    KafkaError.ILLEGAL_GENERATION, KafkaError.UNKNOWN_MEMBER_ID, KafkaError.REBALANCE_IN_PROGRESS,
    KafkaError.FENCED_INSTANCE_ID, getattr(KafkaError, "STALE_MEMBER_EPOCH", None)) if code is not None)
# How long a rebalance callback waits for the group's committed offsets.
COMMITTED_TIMEOUT = 10.0


def check_protocol(protocol: str, variant: Any) -> None:
    """Refuse KIP-848's consumer protocol on brokers before Kafka 4, in one line."""
    if protocol == "consumer" and variant is not None and int(variant.kafka.version.split(".")[0]) < 4:
        raise ValueError(f"group_protocol = 'consumer' (KIP-848) needs Kafka 4.x brokers; "
                         f"variant {variant.name} runs {variant.kafka.version}")


def commit_outcome(code: int) -> str:
    """FAIL or INFO for a commit that ended with error `code`."""
    return FAIL if code in _STALE_MEMBER else INFO


class GroupConsumer:
    """One member of a consumer group: `consumer` (either client's), subscribed to `topics`.

    `incremental`: the group's rebalances are incremental (the consumer protocol of KIP-848,
    or a cooperative assignor), so a callback names only the partitions that move; else a
    revocation takes every partition and an assignment gives the whole new set.
    """

    def __init__(self, consumer: Any, topics: list[str], incremental: bool):
        self.consumer, self.incremental = consumer, incremental
        self.positions: dict[tuple[str, int], int | None] = {}  # assigned: next offset to read (None: the beginning)
        self._events: list[dict[str, Any]] = []  # rebalances seen and not yet in a poll
        self._held: list[Any] = []  # a record read after a rebalance that opens the next poll
        self._closing = False
        consumer.subscribe(list(topics), on_assign=self._assigned, on_revoke=self._revoked, on_lost=self._lost)

    @staticmethod
    def settings(protocol: str) -> dict[str, Any]:
        """The consumer settings of a member speaking `protocol`."""
        if protocol == "consumer":
            return {"group.protocol": "consumer"}  # the broker sets session and heartbeat (KIP-848)
        # A member that died is noticed after 10 s rather than 45: rebalances under faults
        # then end within a run.
        return {"session.timeout.ms": 10_000, "heartbeat.interval.ms": 3_000}

    # -- rebalance callbacks (on the polling thread, inside consume) -------------------------
    def _assigned(self, consumer: Any, partitions: list[TopicPartition]) -> None:
        if self._closing:
            # A rebalance that close() runs: nothing more is read, so no start position is
            # asked for (the lookup may time out there, and librdkafka's binding then raises
            # from close() an error no `except Exception` catches); the binding assigns itself.
            return
        committed = consumer.committed(partitions, timeout=COMMITTED_TIMEOUT) if partitions else []
        start = []
        for p in committed:
            position = p.offset if p.offset >= 0 else None
            self.positions[(p.topic, p.partition)] = position
            self._events.append({"event": "assigned", "topic": p.topic, "partition": p.partition,
                                 "position": position})
            start.append(TopicPartition(p.topic, p.partition, OFFSET_BEGINNING if position is None else position))
        if self.incremental:
            consumer.incremental_assign(start)
        else:
            consumer.assign(start)

    def _revoked(self, consumer: Any, partitions: list[TopicPartition], event: str = "revoked") -> None:
        for p in partitions:
            self.positions.pop((p.topic, p.partition), None)
            self._events.append({"event": event, "topic": p.topic, "partition": p.partition})
        if self.incremental:
            consumer.incremental_unassign(partitions)
        else:
            consumer.unassign()

    def _lost(self, consumer: Any, partitions: list[TopicPartition]) -> None:
        self._revoked(consumer, partitions, "lost")

    # -- ops -----------------------------------------------------------------------------
    def poll(self, limit: int, timeout: float) -> tuple[list[dict[str, Any]], list[Any], KafkaError | None]:
        """Up to `limit` records (the first waited for up to `timeout` seconds), the rebalances
        seen before them, and the error that ended the poll early (none: None). A rebalance
        after records of this poll ends it (see the module's docstring)."""
        events, messages = self._events, self._held
        self._events, self._held = [], []
        error = None
        while len(messages) < limit:
            batch = self.consumer.consume(num_messages=1, timeout=0 if messages else timeout)
            if self._events:
                if messages:
                    self._held = batch
                    break
                events, self._events = events + self._events, []
            if not batch:
                break
            msg = batch[0]
            if msg.error() is not None:
                error = msg.error()
                break
            messages.append(msg)
        for msg in messages:
            if (msg.topic(), msg.partition()) in self.positions:
                self.positions[(msg.topic(), msg.partition())] = msg.offset() + 1
        return events, messages, error

    def commit(self) -> list[dict[str, Any]]:
        """Commit the position of every assigned partition that has one, synchronously; returns
        what was committed. Raises KafkaException (the error of the first partition refused)."""
        offsets = [TopicPartition(t, p, o) for (t, p), o in sorted(self.positions.items()) if o is not None]
        if offsets:
            done = self.consumer.commit(offsets=offsets, asynchronous=False)
            for p in done or []:
                if p.error is not None:
                    raise KafkaException(p.error)
        return [{"topic": p.topic, "partition": p.partition, "offset": p.offset} for p in offsets]

    def close(self) -> None:
        self._closing = True
        try:
            self.consumer.close()
        except RuntimeError:  # closed already
            pass
