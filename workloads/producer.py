"""One librdkafka producer shared by all of a workload's processes: a synchronous send, and
an asynchronous one whose delivery report calls back (many sends in flight per thread).

Each send op waits for (or is called back with) its own delivery report, so it keeps its
own partition and offset; sharing the producer lets the sends of concurrent processes
travel in one ProduceRequest. On this project's 2-core machines a
producer per process spent its time in librdkafka threads (32 processes: ~500 acks/s);
one shared producer sustains several times that. A retired process just stops waiting:
its message, if still in flight, may land or not, which its info completion already says.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from confluent_kafka import KafkaError, Message, Producer

from clusters.health import QUIET


class SharedProducer:
    """A producer made on first send and dropped when the last user releases it (or after a
    fatal error, e.g. an idempotent producer's broken sequence, so later sends get a new one).
    A poller thread serves delivery reports while it exists."""

    def __init__(self, config: dict[str, Any], make: Callable[[dict[str, Any]], Any] | None = None):
        """`make(config)` builds the producer (workloads.kafka_clients: librdkafka's or the Java
        client's in the same shape); librdkafka's by default."""
        self.config = config
        self._make = make or (lambda c: Producer(c, logger=QUIET))
        self._lock = threading.Lock()
        self._users = 0
        self._producer: Producer | None = None
        self._stop: threading.Event | None = None

    def acquire(self) -> None:
        with self._lock:
            self._users += 1

    def release(self) -> None:
        with self._lock:
            self._users -= 1
            if self._users <= 0:
                self._users = 0
                self._drop()

    def _drop(self) -> None:
        if self._stop is not None:
            self._stop.set()
        self._producer, self._stop = None, None

    def _current(self) -> Producer:
        with self._lock:
            if self._producer is None:
                self._producer, self._stop = self._make(self.config), threading.Event()
                threading.Thread(target=_serve, args=(self._producer, self._stop, self._last_reports()),
                                 name="producer-poll",
                                 daemon=True).start()
            return self._producer

    def _last_reports(self) -> float:
        return self.config.get("message.timeout.ms", 300_000) / 1000 + 1.0

    def send(self, topic: str, key: bytes, value: bytes, partition: int,
             timeout: float) -> tuple[KafkaError | None, Message] | None:
        """Produce one record and wait for its delivery report: (error or None, message), or
        None when no report came within `timeout`. produce() errors (BufferError,
        KafkaException) propagate: the record was never handed to a broker."""
        producer = self._current()
        # A held lock as a one-shot latch: cheaper than an Event at thousands of sends/s.
        done = threading.Lock()
        done.acquire()
        report: list[tuple[KafkaError | None, Message]] = []

        def delivered(err: KafkaError | None, msg: Message) -> None:
            report.append((err, msg))
            done.release()

        producer.produce(topic, key=key, value=value, partition=partition, on_delivery=delivered)
        if not done.acquire(timeout=timeout):
            return None
        err = report[0][0]
        if err is not None and err.fatal():
            with self._lock:
                if self._producer is producer:
                    self._drop()
        return report[0]


    def send_async(self, topic: str, key: bytes, value: bytes, partition: int,
                   on_report: Callable[[KafkaError | None, Message], None]) -> None:
        """Hand one record to the producer and return; `on_report(error or None, message)` runs
        on the poller thread at its delivery report. produce() errors propagate as in send."""
        producer = self._current()

        def delivered(err: KafkaError | None, msg: Message) -> None:
            if err is not None and err.fatal():
                with self._lock:
                    if self._producer is producer:
                        self._drop()
            on_report(err, msg)

        producer.produce(topic, key=key, value=value, partition=partition, on_delivery=delivered)


def _serve(producer: Producer, stop: threading.Event, last_reports: float) -> None:
    """Delivery reports run on this thread. After the stop, the reports of sends still in
    flight are served for up to `last_reports` seconds (librdkafka reports every message
    within message.timeout.ms): an asynchronous send whose client was closed, as when a
    thread's other op ended info, still completes at its own report."""
    while not stop.is_set():
        producer.poll(0.1)
    producer.flush(last_reports)
