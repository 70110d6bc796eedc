"""Liveness as a finding: a partition none of whose final reads completed, a channel whose
chain refused a strict read, and a system that answered nothing after the final heal are
anomalies with their ops as evidence; they fail the verdict only where the variant promises
availability under the run's fault kind, and a run that served again has none."""
from __future__ import annotations

import pytest

from checkers.liveness import halted_channels, hangs, unavailable_partitions
from tests.histories import HistoryBuilder


def _healed(h: HistoryBuilder) -> int:
    h.send(0, "t0", 1, offset=0)
    h.nemesis("kill", {"fault": "kill-broker", "nodes": ["kafka2"]})
    h.nemesis("start", {"fault": "kill-broker", "nodes": ["kafka2"]})
    return h.nemesis("heal", {"all": True, "faults": ["kill-broker"]})


def _leaderless() -> tuple[HistoryBuilder, list[int], int]:
    """t0/0 served again; t0/1, which acknowledged a send, never did (every final read timed out)."""
    h = HistoryBuilder()
    h.send(1, "t0", 2, partition=1, offset=0)
    heal = _healed(h)
    h.final_read(9, "t0", 0, [(0, 1)])
    failed = [h.call(8, "final-read", {"topic": "t0", "partition": 1}, {"topic": "t0", "partition": 1},
                     type="info", error="timeout")[1] for _ in range(3)]
    return h, failed, heal


def test_a_partition_never_read_again_is_unavailable_with_its_failed_reads(ops_of, found):
    h, failed, _ = _leaderless()
    assert found(unavailable_partitions(ops_of(h).ops)) == [
        {"anomaly": "unavailable-partition", "evidence": failed,
         "example": {"topic": "t0", "partition": 1, "attempts": 3}}]


def test_a_partition_read_again_after_failures_is_available(ops_of, found):
    h, _, _ = _leaderless()
    h.final_read(8, "t0", 1, [])
    assert found(unavailable_partitions(ops_of(h).ops)) == []


def test_a_chain_that_refused_a_strict_read_is_a_halted_channel(ops_of, found):
    h = HistoryBuilder()
    _healed(h)
    h.deliver(7, "ch1", "osn1", [], final=True)
    refused = h.op(6, "invoke", "deliver", {"channel": "ch1", "osn": "osn2", "from": 0, "final": True})
    done = h.op(6, "info", "deliver", {"channel": "ch1", "osn": "osn2", "from": 0, "errored": True},
                error="SERVICE_UNAVAILABLE")
    assert found(halted_channels(ops_of(h).ops)) == [
        {"anomaly": "halted-channel", "evidence": [done], "example": {"channel": "ch1", "osn": "osn2", "refusals": 1}}]
    assert refused == done - 1


def test_no_ok_op_after_the_final_heal_is_a_hang_and_one_ok_op_is_not(ops_of, found):
    h = HistoryBuilder()
    heal = _healed(h)
    first = h.call(9, "final-read", {"topic": "t0", "partition": 0}, {"topic": "t0", "partition": 0},
                   type="info", error="timeout")[1]
    assert found(hangs(ops_of(h).ops)) == [{"anomaly": "hang", "evidence": [heal, first],
                                             "example": {"ops_after_heal": 1}}]
    h.final_read(9, "t0", 0, [(0, 1)])
    assert found(hangs(ops_of(h).ops)) == []


def _run_json(available: bool) -> dict:
    return {"scenario": {"name": "kill-broker"},
            "variant": {"name": "v", "available": {"kill-broker": available}, "producer": {}}}


def _served_again() -> HistoryBuilder:
    h = HistoryBuilder()
    _healed(h)
    h.final_read(9, "t0", 0, [(0, 1)])
    return h


@pytest.fixture(scope="module")
def judged(check_together) -> dict[str, dict]:
    """The leaderless run with availability promised and not, and a run that served again (promised),
    checked as one batch."""
    return check_together({"promised": _leaderless()[0], "not-promised": _leaderless()[0],
                           "served-again": _served_again()},
                          runs={"promised": _run_json(True), "not-promised": _run_json(False),
                                "served-again": _run_json(True)})


def test_liveness_fails_the_verdict_only_where_availability_is_promised(judged):
    results = {True: judged["promised"], False: judged["not-promised"]}
    assert results[True]["valid"] is False and results[True]["checkers"]["liveness"]["valid"] is False
    assert "unavailable-partition" in results[True]["anomalies"] and results[True]["available"] is True
    # Not promised: reported, and the partition never read makes the data checks unknown, as before.
    assert results[False]["valid"] == "unknown" and results[False]["checkers"]["liveness"]["valid"] is True
    assert "unavailable-partition" in results[False]["anomalies"]


def test_a_run_that_served_again_has_no_liveness_anomaly(judged):
    results = judged["served-again"]
    assert (results["valid"], results["anomalies"], results["checkers"]["liveness"]["valid"]) == (True, {}, True)
