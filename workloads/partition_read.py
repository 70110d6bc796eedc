"""What the Kafka workloads read: a record as the history holds it, and a final read of one
partition, as kafka-log and kafka-txn both do it.

A final read follows the consumer's position rather than the offsets of the records it
returns: in a plain log the two agree, and in a transactional one the position also passes
commit and abort markers and (read_committed) aborted records, which are never returned.

A read_committed consumer's own view of the log's end is the last stable offset, which stops
at the first offset of a txn whose markers are not written yet (a commit is answered before
its markers land). Taken for the end, it let a final read end ok short of records committed a
moment later, and the checker called them lost (docs/findings.md); so a read_committed final
read asks a read_uncommitted consumer for the high watermark and is complete only there.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaException, Message, TopicPartition


def record(msg: Message) -> dict[str, Any]:
    """A consumed message as a history record: its value as the workloads wrote it (an int)."""
    raw = msg.value()
    try:
        value: Any = int(raw)
    except (TypeError, ValueError):  # not ours (or empty): recorded as text, the checkers skip it
        value = raw.decode(errors="replace") if raw is not None else None
    return {"topic": msg.topic(), "partition": msg.partition(), "offset": msg.offset(), "value": value}


def read_partition(consumer: Consumer, topic: str, partition: int, deadline: float,
                   stopped: Callable[[], bool] = lambda: False,
                   ends: Consumer | None = None) -> tuple[list[dict[str, Any]], int | None, bool]:
    """Every record `consumer` (fresh, its own) returns of the partition from the beginning,
    until its position reaches a high watermark that did not grow since the last look.

    Returns the records, the last high watermark seen and whether the read got there before
    `deadline` (time.monotonic()) or `stopped()`. The high watermark is asked of `ends` (a
    read_uncommitted consumer) when given, else of `consumer`; read_committed, the position
    stops at the first offset of a txn still open, so such a read is incomplete until the txn
    ends and its markers are written.
    """
    tp = TopicPartition(topic, partition)
    records: list[dict[str, Any]] = []
    position, high = 0, None
    consumer.assign([TopicPartition(topic, partition, OFFSET_BEGINNING)])
    while time.monotonic() < deadline and not stopped():
        try:
            _, latest = (ends or consumer).get_watermark_offsets(
                tp, timeout=max(0.1, min(2.0, deadline - time.monotonic())))
        except KafkaException:
            time.sleep(0.1)
            continue
        if high is not None and latest == high and position >= high:
            return records, high, True
        high = latest
        while position < high and time.monotonic() < deadline:
            for msg in consumer.consume(num_messages=min(1000, high - position), timeout=0.5):
                # Errors are transient (the consumer retries on its own); a record below the
                # position is one read already (a fetch repeated after a leader change).
                if msg.error() is None and msg.offset() >= position:
                    records.append(record(msg))
                    position = msg.offset() + 1
            at = consumer.position([tp])[0].offset
            position = max(position, at if at >= 0 else 0)
    return records, high, False
