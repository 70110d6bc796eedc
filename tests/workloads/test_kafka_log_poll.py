"""kafka-log's poll returns as soon as records are there (issue 39: polls keep up with many
sends in flight), without a cluster: a stand-in consumer says what it was asked."""
from __future__ import annotations

from workloads.kafka_log import KafkaLogClient, KafkaLogOptions, KafkaLogState
from workloads.topics import TopicSet


class Message:
    def __init__(self, offset):
        self._offset = offset

    def error(self):
        return None

    def topic(self):
        return "t0"

    def partition(self):
        return 0

    def offset(self):
        return self._offset

    def value(self):
        return str(self._offset).encode()


class Consumer:
    """Holds `ready` records; a consume with a timeout gets `arriving` more if none are ready."""

    def __init__(self, ready, arriving=0):
        self.ready, self.arriving, self.calls, self.next = ready, arriving, [], 0

    def consume(self, num_messages, timeout):
        self.calls.append((num_messages, timeout))
        if not self.ready and timeout > 0:
            self.ready, self.arriving = self.arriving, 0
        take = min(num_messages, self.ready)
        self.ready -= take
        out = [Message(self.next + i) for i in range(take)]
        self.next += take
        return out


def client(consumer):
    c = KafkaLogClient(KafkaLogOptions(poll_batch=100, poll_timeout=0.2), KafkaLogState(TopicSet(["t0"], 1)))
    c.consumer = consumer
    return c


def test_a_poll_takes_what_is_fetched_without_waiting_for_a_full_batch():
    consumer = Consumer(ready=7)
    answer = client(consumer).poll({"consumer": "c0"})
    assert [r["offset"] for r in answer["value"]["records"]] == list(range(7))
    assert consumer.calls == [(100, 0)]  # never the 0.2 s wait for 100 records


def test_a_poll_with_nothing_fetched_waits_for_the_first_record_then_takes_the_rest():
    consumer = Consumer(ready=0, arriving=5)
    answer = client(consumer).poll({"consumer": "c0"})
    assert len(answer["value"]["records"]) == 5
    assert consumer.calls == [(100, 0), (1, 0.2), (99, 0)]
