"""What keeps a cluster from being whole after the faults (health.kafka_gaps), read from the
metadata a broker answers: here the metadata is made by hand, in the client's own shape."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from clusters import health


def _metadata(brokers: int, partitions: dict[str, list[tuple[int, list[int], list[int]]]]) -> SimpleNamespace:
    topics = {name: SimpleNamespace(partitions={i: SimpleNamespace(leader=leader, replicas=replicas, isrs=isr)
                                                for i, (leader, replicas, isr) in enumerate(parts)})
              for name, parts in partitions.items()}
    return SimpleNamespace(brokers={i: object() for i in range(1, brokers + 1)}, topics=topics)


def _answering(monkeypatch: pytest.MonkeyPatch, answer: object) -> None:
    def list_topics(timeout: float) -> object:
        if isinstance(answer, Exception):
            raise answer
        return answer

    monkeypatch.setattr(health, "admin_client", lambda _bootstrap: SimpleNamespace(list_topics=list_topics))


def test_a_whole_cluster_has_no_gaps(monkeypatch: pytest.MonkeyPatch) -> None:
    _answering(monkeypatch, _metadata(4, {"t": [(1, [1, 2, 3], [3, 1, 2])], "__transaction_state": [(2, [2, 3, 4], [2, 3, 4])]}))
    assert health.kafka_gaps("b:1", 4) == []


def test_a_missing_broker_a_leaderless_partition_and_a_short_isr_are_each_a_gap(monkeypatch: pytest.MonkeyPatch) -> None:
    _answering(monkeypatch, _metadata(3, {"t": [(-1, [1, 2, 4], [4]), (1, [1, 2, 3], [1, 2, 3])],
                                          "__transaction_state": [(4, [1, 2, 4], [4])]}))
    assert health.kafka_gaps("b:1", 4) == ["3 of 4 brokers registered",
                                           "__transaction_state-0: ISR [4] of replicas [1, 2, 4]",
                                           "t-0: no leader"]


def test_no_metadata_is_a_gap_and_the_list_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    _answering(monkeypatch, RuntimeError("timed out"))
    assert health.kafka_gaps("b:1", 4) == ["no metadata (RuntimeError)"]
    _answering(monkeypatch, _metadata(4, {"t": [(-1, [1], [])] * 50}))
    assert len(health.kafka_gaps("b:1", 4, most=5)) == 5
