"""Liveness as a finding: a partition none of whose final reads completed, a channel whose
chain refused a strict read, and a system that answered nothing after the final heal are
anomalies with their ops as evidence; they fail the verdict only where the variant promises
availability under the run's fault kind, and a run that served again has none.

The histories are built at import (CASES) and found as one batch by the registered checkers
(`found`, tests/conftest.py find_together): the liveness checker's rows come from the history
alone (run.json only decides whether they fail the verdict, which `judged` tests through
check_together)."""
from __future__ import annotations

import pytest

from checkers.registry import CHECKS
from tests.histories import HistoryBuilder, make_chain


def _healed(h: HistoryBuilder) -> int:
    h.send(0, "t0", 1, offset=0)
    h.nemesis("kill", {"fault": "kill-broker", "nodes": ["kafka2"]})
    h.nemesis("start", {"fault": "kill-broker", "nodes": ["kafka2"]})
    return h.nemesis("heal", {"all": True, "faults": ["kill-broker"]})


def _leaderless(read_again: bool = False) -> tuple[HistoryBuilder, list[int], int]:
    """t0/0 served again; t0/1, which acknowledged a send, never did (every final read timed out),
    unless `read_again` at last."""
    h = HistoryBuilder()
    h.send(1, "t0", 2, partition=1, offset=0)
    heal = _healed(h)
    h.final_read(9, "t0", 0, [(0, 1)])
    failed = [h.call(8, "final-read", {"topic": "t0", "partition": 1}, {"topic": "t0", "partition": 1},
                     type="info", error="timeout")[1] for _ in range(3)]
    if read_again:
        h.final_read(8, "t0", 1, [])
    return h, failed, heal


def _halted() -> tuple[HistoryBuilder, tuple[int, int]]:
    h = HistoryBuilder()
    _healed(h)
    h.deliver(7, "ch1", "osn1", [], final=True)
    refused = h.op(6, "invoke", "deliver", {"channel": "ch1", "osn": "osn2", "from": 0, "final": True})
    done = h.op(6, "info", "deliver", {"channel": "ch1", "osn": "osn2", "from": 0, "errored": True},
                error="SERVICE_UNAVAILABLE")
    return h, (refused, done)


def _hung(served_at_last: bool) -> tuple[HistoryBuilder, tuple[int, int]]:
    """After the heal, a final read that timed out; then, `served_at_last`, one that completed ok."""
    h = HistoryBuilder()
    heal = _healed(h)
    first = h.call(9, "final-read", {"topic": "t0", "partition": 0}, {"topic": "t0", "partition": 0},
                   type="info", error="timeout")[1]
    if served_at_last:
        h.final_read(9, "t0", 0, [(0, 1)])
    return h, (heal, first)


def _chains(stuck_after_heal: bool) -> tuple[HistoryBuilder, int]:
    """ch1 on three OSNs: osn1 and osn2 grow from 2 to 6 blocks after the heal; osn3 had 2
    blocks before it and, `stuck_after_heal`, delivers nothing new after it (else it moves
    on to 4 blocks: behind at the end, but still moving)."""
    chain = make_chain([["tx-a"], ["tx-b"], ["tx-c"], ["tx-d"], ["tx-e"], ["tx-f"]])
    h = HistoryBuilder()
    for osn in ("osn1", "osn2", "osn3"):
        h.deliver(5, "ch1", osn, chain[:2])
    h.nemesis("start", {"fault": "kill-osn", "nodes": ["osn3"]})
    h.nemesis("heal", {"all": True, "faults": ["kill-osn"]})
    for osn in ("osn1", "osn2"):
        h.deliver(6, "ch1", osn, chain, final=True)
    last = h.deliver(7, "ch1", "osn3", chain[:2] if stuck_after_heal else chain[:4], final=True)[1]
    return h, last


def _refusing(served_at_last: bool) -> tuple[HistoryBuilder, list[int]]:
    """After the heal osn2 refuses 3 broadcasts of ch0 while osn1 takes one; then,
    `served_at_last`, osn2 answers one SUCCESS after all."""
    h = HistoryBuilder()
    h.nemesis("heal", {"all": True, "faults": ["kill-osn"]})
    refusals = [h.call(3, "broadcast", {"channel": "ch0", "osn": "osn2", "tx": f"tx-{i}"},
                       {"channel": "ch0", "osn": "osn2", "tx": f"tx-{i}", "status": "SERVICE_UNAVAILABLE"},
                       "fail", "service-unavailable")[1] for i in range(3)]
    h.broadcast(4, "ch0", "osn1", "tx-ok")
    h.deliver(5, "ch0", "osn1", make_chain([["tx-ok"]]), final=True)
    if served_at_last:
        h.broadcast(3, "ch0", "osn2", "tx-late")
    return h, refusals


# Each case may hold other checkers' anomalies too, which the tests do not ask for: the
# read-again's empty final read of t0/1 loses the send acknowledged there (lost-write), the
# hung one's final read never completed (unavailable-partition), and tx-late, broadcast after
# the last final deliver, is in no block (lost-tx).
CASES = {
    "leaderless": _leaderless()[:2],
    "read-again": _leaderless(read_again=True)[:2],
    "halted": _halted(),
    "hung": _hung(served_at_last=False),
    "served-after-hang": _hung(served_at_last=True),
    "stuck": _chains(stuck_after_heal=True),
    "still-moving": _chains(stuck_after_heal=False),
    "refusing": _refusing(served_at_last=False),
    "refusing-then-served": _refusing(served_at_last=True),
}


@pytest.fixture(scope="module")
def found(find_together):
    """What the registered checkers found in CASES, as one batch (tests/support.Found)."""
    return find_together(CASES)


def test_a_partition_never_read_again_is_unavailable_with_its_failed_reads(found):
    rows, failed = found("leaderless", "unavailable-partition")
    assert rows == [{"anomaly": "unavailable-partition", "evidence": failed,
                     "example": {"topic": "t0", "partition": 1, "attempts": 3}}]


def test_a_partition_read_again_after_failures_is_available(found):
    assert found("read-again", "unavailable-partition")[0] == []


def test_a_chain_that_refused_a_strict_read_is_a_halted_channel(found):
    rows, (refused, done) = found("halted", "halted-channel")
    assert rows == [
        {"anomaly": "halted-channel", "evidence": [done], "example": {"channel": "ch1", "osn": "osn2", "refusals": 1}}]
    assert refused == done - 1


def test_no_ok_op_after_the_final_heal_is_a_hang_and_one_ok_op_is_not(found):
    rows, (heal, first) = found("hung", "hang")
    assert rows == [{"anomaly": "hang", "evidence": [heal, first], "example": {"ops_after_heal": 1}}]
    assert found("served-after-hang", "hang")[0] == []


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


def test_an_osn_that_delivers_nothing_new_after_the_heal_while_the_others_grow_is_stalled(found):
    rows, last = found("stuck", "stalled-osn")
    assert rows == [
        {"anomaly": "stalled-osn", "evidence": [last],
         "example": {"channel": "ch1", "osn": "osn3", "height": 2, "channel_height": 6, "refused_broadcasts": 0}}]
    assert found("stuck", *CHECKS["ordering"].anomalies)[0] == []  # not lagging-osn as well


def test_an_osn_still_moving_after_the_heal_is_lagging_not_stalled(found):
    assert found("still-moving", "stalled-osn")[0] == []
    assert [(r["anomaly"], r["example"]["osn"]) for r in found("still-moving", *CHECKS["ordering"].anomalies)[0]] == [
        ("lagging-osn", "osn3")]


def test_an_osn_that_refuses_every_broadcast_after_the_heal_while_another_takes_them_is_stalled(found):
    rows, refusals = found("refusing", "stalled-osn")
    assert [(r["example"]["osn"], r["example"]["refused_broadcasts"], r["evidence"]) for r in rows] == [
        ("osn2", 3, refusals)]
    assert found("refusing-then-served", "stalled-osn")[0] == []  # one SUCCESS after all: it served again
