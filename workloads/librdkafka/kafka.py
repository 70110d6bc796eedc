"""A librdkafka release other than ordeal's own, in confluent-kafka's Producer and Consumer shape
as far as the workloads use them, each call made in the release's own process
(workloads/librdkafka/process.py), so that the workloads' code is the same for every release.

What crosses, and how:
- Configuration: plain values only. Callables (logger, error_cb) cannot cross; the child logs
  nowhere, as ordeal's own clients do (clusters.health.QUIET), and nothing here sets an error_cb.
- Errors are the child's KafkaError codes and flags rebuilt in this process's confluent-kafka
  (librdkafka's codes are one list across releases), so workloads.kafka_errors judges them as
  in-process; a builtin exception (BufferError for a full queue, RuntimeError for a closed
  consumer) is raised as the same class.
- Delivery reports are served in the child by the call that serves them there (poll, flush,
  commit_transaction) and run here on the thread that made that call, before it returns.
- Rebalance callbacks (subscribe's on_assign / on_revoke / on_lost) run here on the polling
  thread inside its consume (or close), and the calls they make (committed, assign,
  incremental_assign...) run in the child inside librdkafka's callback, as in-process.
- A consumer's group metadata stays in the child: here it is a handle that the release's
  producers accept in send_offsets_to_transaction.
"""
from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

from confluent_kafka import KafkaError, TopicPartition

from workloads.kafka_message import Message
from workloads.librdkafka.process import Release, kafka_error, release


class _Refused(TopicPartition):
    """A partition the child returned with an error (a sync commit's), with `error` set."""

    def __init__(self, topic: str, partition: int, offset: int, error: KafkaError):
        super().__init__(topic, partition, offset)
        self._refusal = error

    @property
    def error(self) -> KafkaError:  # type: ignore[override]
        return self._refusal


def _rows(tps: list[TopicPartition]) -> list[tuple[str, int, int]]:
    return [(tp.topic, tp.partition, tp.offset) for tp in tps]


def _partitions(rows: list[tuple] | None) -> list[TopicPartition] | None:
    if rows is None:
        return None
    return [TopicPartition(t, p, o) if err is None else _Refused(t, p, o, kafka_error(err)) for t, p, o, err in rows]


def _config(config: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in config.items() if not callable(v) and k != "logger"}


class _Client:
    def __init__(self, kind: str, config: dict[str, Any], version: str):
        self._release: Release = release(version)
        self._id = self._release.new(kind, _config(config))
        weakref.finalize(self, self._release.drop, self._id)

    def _call(self, method: str, *args: Any, timeout: float | None = None,
              on_callback: Callable[[str, list[tuple]], None] | None = None) -> Any:
        return self._release.call(self._id, method, args, timeout, on_callback)


class GroupMetadata:
    """A consumer's group metadata, which stays in its release's process."""

    def __init__(self, owner: Release, handle: int):
        self.release, self.handle = owner, handle
        weakref.finalize(self, owner.drop, handle)


class Producer(_Client):
    """confluent_kafka.Producer of confluent-kafka `version`, in that release's process."""

    def __init__(self, config: dict[str, Any], version: str):
        super().__init__("producer", config, version)

    def produce(self, topic: str, value: Any = None, key: Any = None, partition: int = -1,
                on_delivery: Callable[[KafkaError | None, Message], None] | None = None) -> None:
        mid = None
        if on_delivery is not None:
            def deliver(err: KafkaError | None, at: int, offset: int) -> None:
                on_delivery(err, Message(topic, at, offset, key, value, err))

            mid = self._release.expect_report(deliver)
        try:
            self._call("produce", mid, topic, value, key, partition)
        except BaseException:
            self._release.forget_report(mid)
            raise

    def poll(self, timeout: float | None = None) -> int:
        return self._call("poll", timeout, timeout=timeout)

    def flush(self, timeout: float | None = None) -> int:
        return self._call("flush", timeout, timeout=timeout)

    def init_transactions(self, timeout: float | None = None) -> None:
        self._call("init_transactions", timeout, timeout=timeout)

    def begin_transaction(self) -> None:
        self._call("begin_transaction")

    def send_offsets_to_transaction(self, positions: list[TopicPartition], group_metadata: GroupMetadata,
                                    timeout: float | None = None) -> None:
        if group_metadata.release is not self._release:
            raise ValueError("group metadata of another confluent-kafka release's consumer")
        self._call("send_offsets_to_transaction", _rows(positions), group_metadata.handle, timeout, timeout=timeout)

    def commit_transaction(self, timeout: float | None = None) -> None:
        self._call("commit_transaction", timeout, timeout=timeout)

    def abort_transaction(self, timeout: float | None = None) -> None:
        self._call("abort_transaction", timeout, timeout=timeout)


class Consumer(_Client):
    """confluent_kafka.Consumer of confluent-kafka `version`, in that release's process."""

    def __init__(self, config: dict[str, Any], version: str):
        super().__init__("consumer", config, version)
        self._callbacks: dict[str, Callable[[Any, list[TopicPartition]], None]] = {}

    def _rebalance(self, name: str, rows: list[tuple]) -> None:
        callback = self._callbacks.get(name)
        if callback is not None:
            callback(self, _partitions(rows) or [])

    def _polling(self, method: str, *args: Any, timeout: float | None = None) -> Any:
        """A call during which librdkafka may run a rebalance callback."""
        return self._call(method, *args, timeout=timeout, on_callback=self._rebalance)

    def subscribe(self, topics: list[str], on_assign: Callable | None = None, on_revoke: Callable | None = None,
                  on_lost: Callable | None = None) -> None:
        given = {"on_assign": on_assign, "on_revoke": on_revoke, "on_lost": on_lost}
        self._callbacks = {name: fn for name, fn in given.items() if fn is not None}
        self._call("subscribe", self._id, list(topics), list(self._callbacks))

    def assign(self, partitions: list[TopicPartition]) -> None:
        self._call("assign", _rows(partitions))

    def incremental_assign(self, partitions: list[TopicPartition]) -> None:
        self._call("incremental_assign", _rows(partitions))

    def unassign(self) -> None:
        self._call("unassign")

    def incremental_unassign(self, partitions: list[TopicPartition]) -> None:
        self._call("incremental_unassign", _rows(partitions))

    def committed(self, partitions: list[TopicPartition], timeout: float | None = None) -> list[TopicPartition]:
        return _partitions(self._call("committed", _rows(partitions), timeout, timeout=timeout)) or []

    def consume(self, num_messages: int = 1, timeout: float = -1) -> list[Message]:
        rows = self._polling("consume", num_messages, timeout, timeout=timeout if timeout >= 0 else None)
        return [Message(t, p, o, k, v, kafka_error(err) if err is not None else None) for t, p, o, k, v, err in rows]

    def position(self, partitions: list[TopicPartition]) -> list[TopicPartition]:
        return _partitions(self._call("position", _rows(partitions))) or []

    def get_watermark_offsets(self, partition: TopicPartition, timeout: float | None = None,
                              cached: bool = False) -> tuple[int, int]:
        low, high = self._call("get_watermark_offsets", (partition.topic, partition.partition), timeout, cached,
                               timeout=timeout)
        return low, high

    def consumer_group_metadata(self) -> GroupMetadata:
        handle = self._release.handle()
        self._call("consumer_group_metadata", handle)
        return GroupMetadata(self._release, handle)

    def commit(self, offsets: list[TopicPartition] | None = None, asynchronous: bool = True) -> list[TopicPartition] | None:
        return _partitions(self._polling("commit", _rows(offsets) if offsets is not None else None, asynchronous))

    def close(self) -> None:
        self._polling("close")
