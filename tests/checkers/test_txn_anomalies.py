"""Each transaction anomaly (history format 2) on a tiny history that has it, and on its clean twin."""
from __future__ import annotations

import pytest

from checkers import kafka, txn
from tests.histories import HistoryBuilder, poll_mop, send_mop
from checkers.txn_cycles import cycle_anomalies, find_cycles


def _transform(tables, name: str):
    """Only the transform that finds `name` (the whole txn checker is slower to run per test)."""
    sends = txn.txn_sends(tables.mops)
    finals = txn.committed_finals(tables.records)
    polls = txn.txn_polls(tables.mops, tables.records)
    if name == "aborted-read":
        return txn.aborted_reads(sends, txn.committed_reads(tables.records))
    if name in ("lost-write", "torn-txn"):
        seen = txn.visibility(sends, finals, txn.drained_partitions(tables.ops))
        return txn.lost_writes(seen) if name == "lost-write" else txn.torn_txns(seen)
    if name == "precommitted-read":
        return txn.precommitted_reads(sends, polls)
    if name == "int-nonmonotonic-send":
        return txn.int_nonmonotonic_sends(sends)
    if name in ("int-poll-skip", "int-nonmonotonic-poll"):
        return txn.int_poll_orders(kafka.kafka_findings(tables).rows, tables.txns)
    return cycle_anomalies(sends, polls, finals, tables.txns)


def _found(ops_of, found, h: HistoryBuilder, name: str) -> list[dict]:
    return [r for r in found(_transform(ops_of(h), name)) if r["anomaly"] == name]


def _finish(h: HistoryBuilder, logs: dict[tuple[str, int], list[tuple[int, int]]]) -> dict[tuple[str, int], int]:
    """A heal and a final read of each partition in `logs` ((offset, value) lists); their indices."""
    h.nemesis("heal", {})
    return {tp: h.final_read(9, tp[0], tp[1], log)[1] for tp, log in logs.items()}


# -- aborted-read ---------------------------------------------------------------------

def _aborted_then_polled(isolation: str | None) -> tuple[HistoryBuilder, int, int]:
    h = HistoryBuilder()
    _, aborted = h.txn(1, [send_mop("t0", 5, 0, 1)], type="fail")
    _, reader = h.txn(2, [poll_mop("c2", [("t0", 0, 0, 4), ("t0", 0, 1, 5)], isolation)])
    _finish(h, {("t0", 0): [(0, 4)]})
    return h, aborted, reader


def test_aborted_txn_value_seen_by_read_committed_poll_is_aborted_read(ops_of, found):
    h, aborted, reader = _aborted_then_polled(None)
    rows = _found(ops_of, found, h, "aborted-read")
    assert [(r["evidence"], r["example"]["value"]) for r in rows] == [([aborted, reader], 5)]


def test_aborted_txn_value_seen_by_read_uncommitted_poll_is_no_anomaly(ops_of, found):
    h, _, _ = _aborted_then_polled("read_uncommitted")
    assert _found(ops_of, found, h, "aborted-read") == []


def test_aborted_txn_value_in_the_final_read_is_aborted_read(ops_of, found):
    h = HistoryBuilder()
    _, aborted = h.txn(1, [send_mop("t0", 5, 0, 0)], type="fail")
    finals = _finish(h, {("t0", 0): [(0, 5)]})
    rows = _found(ops_of, found, h, "aborted-read")
    assert [r["evidence"] for r in rows] == [[aborted, finals[("t0", 0)]]]


# -- lost-write and torn-txn ----------------------------------------------------------

def _two_partition_txn(type_: str, final_p1: list[tuple[int, int]]) -> tuple[HistoryBuilder, int, dict]:
    h = HistoryBuilder()
    _, t = h.txn(1, [send_mop("t0", 1, 0, 0 if type_ == "ok" else None),
                     send_mop("t0", 2, 1, 0 if type_ == "ok" else None)], type=type_)
    finals = _finish(h, {("t0", 0): [(0, 1)], ("t0", 1): final_p1})
    return h, t, finals


def test_committed_txn_send_missing_from_final_read_is_lost_write_and_torn(ops_of, found):
    h, t, finals = _two_partition_txn("ok", [])
    lost = _found(ops_of, found, h, "lost-write")
    assert [(r["evidence"], r["example"]["value"]) for r in lost] == [([t, finals[("t0", 1)]], 2)]
    torn = _found(ops_of, found, h, "torn-txn")
    assert [r["example"]["missing"] for r in torn] == [[{"topic": "t0", "partition": 1, "value": 2}]]
    assert torn[0]["evidence"][0] == t


def test_committed_txn_whose_sends_are_all_in_the_final_reads_is_neither_lost_nor_torn(ops_of, found):
    h, _, _ = _two_partition_txn("ok", [(0, 2)])
    assert _found(ops_of, found, h, "lost-write") == [] and _found(ops_of, found, h, "torn-txn") == []


def test_indeterminate_txn_seen_in_part_is_torn_not_lost(ops_of, found):
    h, t, _ = _two_partition_txn("info", [])
    assert [r["evidence"][0] for r in _found(ops_of, found, h, "torn-txn")] == [t]
    assert _found(ops_of, found, h, "lost-write") == []


def test_indeterminate_txn_seen_nowhere_is_not_torn(ops_of, found):
    h = HistoryBuilder()
    h.txn(1, [send_mop("t0", 1, 0), send_mop("t0", 2, 1)], type="info")
    _finish(h, {("t0", 0): [], ("t0", 1): []})
    assert _found(ops_of, found, h, "torn-txn") == []


def test_a_send_to_a_partition_without_final_read_is_not_judged(ops_of, found):
    h = HistoryBuilder()
    h.txn(1, [send_mop("t0", 1, 0, 0), send_mop("t0", 2, 1, 0)])
    _finish(h, {("t0", 0): [(0, 1)]})
    tables = ops_of(h)
    rows, undrained = txn.txn_anomalies(tables, kafka.kafka_findings(tables).rows)
    assert [r for r in found(rows) if r["anomaly"] in ("lost-write", "torn-txn")] == []
    assert [tuple(r) for r in undrained.collect()] == [(0, "t0", 1)]  # (history, topic, partition)


# -- precommitted-read ----------------------------------------------------------------

def test_txn_polling_its_own_send_is_precommitted_read(ops_of, found):
    h = HistoryBuilder()
    _, t = h.txn(1, [send_mop("t0", 7, 0, 0), poll_mop("c1", [("t0", 0, 0, 7)])])
    _finish(h, {("t0", 0): [(0, 7)]})
    assert [r["evidence"] for r in _found(ops_of, found, h, "precommitted-read")] == [[t]]


def test_txn_polling_another_txns_send_is_no_precommitted_read(ops_of, found):
    h = HistoryBuilder()
    h.txn(1, [send_mop("t0", 7, 0, 0)])
    h.txn(2, [send_mop("t0", 8, 0, 1), poll_mop("c2", [("t0", 0, 0, 7)])])
    _finish(h, {("t0", 0): [(0, 7), (1, 8)]})
    assert _found(ops_of, found, h, "precommitted-read") == []


# -- internal orders ------------------------------------------------------------------

@pytest.mark.parametrize("offsets, flagged", [((5, 3), True), ((3, 5), False)], ids=["backwards", "forwards"])
def test_txn_sends_to_one_partition_must_land_in_their_order(ops_of, found, offsets, flagged):
    h = HistoryBuilder()
    _, t = h.txn(1, [send_mop("t0", 1, 0, offsets[0]), send_mop("t0", 2, 0, offsets[1])])
    rows = _found(ops_of, found, h, "int-nonmonotonic-send")
    assert [r["evidence"] for r in rows] == ([[t]] if flagged else [])


def _two_polls(second: int, final: list[tuple[int, int]]) -> tuple[HistoryBuilder, int]:
    h = HistoryBuilder()
    _, t = h.txn(1, [poll_mop("c1", [("t0", 0, 0, 10)]), poll_mop("c1", [("t0", 0, second, 10 + second)])])
    _finish(h, {("t0", 0): final})
    return h, t


def test_txn_polls_jumping_over_a_finally_read_offset_are_int_poll_skip(ops_of, found):
    h, t = _two_polls(2, [(0, 10), (1, 11), (2, 12)])
    rows = _found(ops_of, found, h, "int-poll-skip")
    assert [(r["evidence"], r["example"]["skipped"]) for r in rows] == [([t], 1)]


def test_txn_polls_jumping_over_an_offset_no_committed_read_holds_are_no_skip(ops_of, found):
    h, _ = _two_polls(2, [(0, 10), (2, 12)])  # offset 1: an aborted record or a commit marker
    assert _found(ops_of, found, h, "int-poll-skip") == []


def test_txn_polls_going_back_are_int_nonmonotonic_poll(ops_of, found):
    h, t = _two_polls(0, [(0, 10)])
    assert [r["evidence"] for r in _found(ops_of, found, h, "int-nonmonotonic-poll")] == [[t]]


def _gappy_poll(polled: list[int], final: list[int]) -> tuple[HistoryBuilder, int]:
    """One txn's poll of t0/0 at `polled` offsets; the final read holds `final` (the other
    offsets: markers and aborted records, as in a transactional log)."""
    h = HistoryBuilder()
    _, t = h.txn(1, [poll_mop("c1", [("t0", 0, o, 10 + o) for o in polled])])
    _finish(h, {("t0", 0): [(o, 10 + o) for o in final]})
    return h, t


def _runs(tables) -> list[bool]:
    polls = kafka.poll_records(tables.records)
    offsets = kafka.offset_summary(kafka.observations(kafka.acks(tables.sends), polls,
                                                      kafka.final_records(tables.records)))
    return [r["run"] for r in kafka.poll_runs(kafka.final_steps(polls, offsets)).collect()]


def test_a_poll_over_marker_gaps_is_one_run_without_anomaly(ops_of, found):
    h, _ = _gappy_poll([0, 2, 4], [0, 2, 4])
    assert _runs(ops_of(h)) == [True]  # judged whole: no record-by-record look
    assert [r for r in found(kafka.kafka_findings(ops_of(h)).rows)] == []


@pytest.mark.parametrize("polled, final, anomaly", [
    ([0, 2, 5], [0, 2, 4, 5], "int-poll-skip"),  # offset 4 held, jumped over
    ([0, 4, 2], [0, 2, 4], "int-nonmonotonic-poll"),  # steps 1, 3, 2
    ([0, 1, 3], [0, 2, 3], "int-poll-skip"),  # offset 1 polled, not held: 2 jumped over
])
def test_a_skip_or_rewind_inside_a_poll_over_marker_gaps_is_flagged(ops_of, found, polled, final, anomaly):
    h, t = _gappy_poll(polled, final)
    assert _runs(ops_of(h)) == [False]
    assert [r["evidence"] for r in _found(ops_of, found, h, anomaly)] == [[t]]


def test_txns_polling_on_over_a_marker_gap_do_not_skip_and_over_a_held_offset_do(ops_of, found):
    for final, skipped in (([0, 2], []), ([0, 1, 2], [1])):
        h = HistoryBuilder()
        _, t1 = h.txn(1, [poll_mop("c1", [("t0", 0, 0, 10)])])
        _, t2 = h.txn(1, [poll_mop("c1", [("t0", 0, 2, 12)])])
        _finish(h, {("t0", 0): [(o, 10 + o) for o in final]})
        rows = [r for r in found(kafka.kafka_findings(ops_of(h)).rows) if r["anomaly"] == "poll-skip"]
        assert [(r["evidence"], r["example"]["skipped"]) for r in rows] == [([t1, t2], n) for n in skipped]


# -- cycles ---------------------------------------------------------------------------

def _crossed_writes(p1_order: str) -> tuple[HistoryBuilder, int, int]:
    """T1 writes a to p0 and d to p1, T2 b to p0 and c to p1; p0 holds a, b; p1 in `p1_order`."""
    h = HistoryBuilder()
    a_first = p1_order == "d,c"
    _, t1 = h.txn(1, [send_mop("t0", 1, 0, 0), send_mop("t0", 4, 1, 0 if a_first else 1)])
    _, t2 = h.txn(2, [send_mop("t0", 2, 0, 1), send_mop("t0", 3, 1, 1 if a_first else 0)])
    _finish(h, {("t0", 0): [(0, 1), (1, 2)], ("t0", 1): [(0, 4), (1, 3)] if a_first else [(0, 3), (1, 4)]})
    return h, t1, t2


def test_txns_ordered_both_ways_on_two_partitions_are_g0(ops_of, found):
    h, t1, t2 = _crossed_writes("c,d")
    rows = _found(ops_of, found, h, "G0")
    assert [r["evidence"] for r in rows] == [sorted([t1, t2])]
    assert all(e.startswith("ww") for e in rows[0]["example"]["edges"])
    # T1 completed before T2 began: the same cycle breaks realtime order too.
    assert [r["evidence"] for r in _found(ops_of, found, h, "G0-realtime")] == [sorted([t1, t2])]


def test_txns_ordered_alike_on_both_partitions_make_no_cycle(ops_of, found):
    h, _, _ = _crossed_writes("d,c")
    assert found(_transform(ops_of(h), "G0")) == []


@pytest.mark.parametrize("t2_first_on_p1, cyclic", [(True, True), (False, False)], ids=["cycle", "twin"])
def test_a_read_against_the_write_order_is_g1c(ops_of, found, t2_first_on_p1, cyclic):
    h = HistoryBuilder()
    t1_invoke = h.op(1, "invoke", "txn", [["send", {"topic": "t0", "value": 1, "partition": 0}],
                                           ["send", {"topic": "t0", "value": 3, "partition": 1}]])
    _, t2 = h.txn(2, [poll_mop("c2", [("t0", 0, 0, 1)]), send_mop("t0", 2, 1, 0 if t2_first_on_p1 else 1)])
    t1 = h.op(1, "ok", "txn", [["send", {"topic": "t0", "value": 1, "partition": 0, "offset": 0}],
                               ["send", {"topic": "t0", "value": 3, "partition": 1,
                                         "offset": 1 if t2_first_on_p1 else 0}]])
    assert t1 > t1_invoke
    _finish(h, {("t0", 0): [(0, 1)], ("t0", 1): [(0, 2), (1, 3)] if t2_first_on_p1 else [(0, 3), (1, 2)]})
    rows = _found(ops_of, found, h, "G1c")
    assert [r["evidence"] for r in rows] == ([sorted([t1, t2])] if cyclic else [])
    if cyclic:
        assert any(e.startswith("wr") for e in rows[0]["example"]["edges"])


def test_realtime_cycle_needs_the_completion_before_the_invoke():
    # T1 -ww-> T2, and T2 completed before T1 was invoked: only realtime closes the cycle.
    edges = [(1, 2, "ww", "t0/0")]
    assert find_cycles(edges, {1: (10, 20), 2: (30, 40)}) == []
    cycles = find_cycles(edges, {1: (50, 60), 2: (30, 40)})
    assert [(c["anomaly"], c["cycle"], c["edges"]) for c in cycles] == [("G0-realtime", [1, 2, 1], ["ww t0/0", "rt"])]
