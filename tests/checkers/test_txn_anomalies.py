"""Each transaction anomaly (history format 2) on a tiny history that has it, and on its clean twin.

The histories are built at import (CASES) and found as one batch by the registered checkers
(`found`, tests/conftest.py find_together), as `ordeal check` runs them. The tests of one
transform's own output build their tables alone (`ops_of`)."""
from __future__ import annotations

import pytest

from checkers import kafka, txn
from checkers.txn_cycles import CYCLES, find_cycles
from tests.histories import HistoryBuilder, poll_mop, send_mop


def _finish(h: HistoryBuilder, logs: dict[tuple[str, int], list[tuple[int, int]]]) -> dict[tuple[str, int], int]:
    """A heal and a final read of each partition in `logs` ((offset, value) lists); their indices."""
    h.nemesis("heal", {})
    return {tp: h.final_read(9, tp[0], tp[1], log)[1] for tp, log in logs.items()}


# -- the histories ----------------------------------------------------------------------

def _aborted_then_polled(isolation: str | None) -> tuple[HistoryBuilder, tuple[int, int]]:
    h = HistoryBuilder()
    _, aborted = h.txn(1, [send_mop("t0", 5, 0, 1)], type="fail")
    _, reader = h.txn(2, [poll_mop("c2", [("t0", 0, 0, 4), ("t0", 0, 1, 5)], isolation)])
    _finish(h, {("t0", 0): [(0, 4)]})
    return h, (aborted, reader)


def _aborted_in_final() -> tuple[HistoryBuilder, tuple[int, int]]:
    h = HistoryBuilder()
    _, aborted = h.txn(1, [send_mop("t0", 5, 0, 0)], type="fail")
    finals = _finish(h, {("t0", 0): [(0, 5)]})
    return h, (aborted, finals[("t0", 0)])


def _two_partition_txn(type_: str, final_p1: list[tuple[int, int]]) -> tuple[HistoryBuilder, tuple[int, dict]]:
    h = HistoryBuilder()
    _, t = h.txn(1, [send_mop("t0", 1, 0, 0 if type_ == "ok" else None),
                     send_mop("t0", 2, 1, 0 if type_ == "ok" else None)], type=type_)
    finals = _finish(h, {("t0", 0): [(0, 1)], ("t0", 1): final_p1})
    return h, (t, finals)


def _info_seen_nowhere() -> tuple[HistoryBuilder, None]:
    h = HistoryBuilder()
    h.txn(1, [send_mop("t0", 1, 0), send_mop("t0", 2, 1)], type="info")
    _finish(h, {("t0", 0): [], ("t0", 1): []})
    return h, None


def _undrained() -> tuple[HistoryBuilder, None]:
    h = HistoryBuilder()
    h.txn(1, [send_mop("t0", 1, 0, 0), send_mop("t0", 2, 1, 0)])
    _finish(h, {("t0", 0): [(0, 1)]})
    return h, None


def _polls_own_send() -> tuple[HistoryBuilder, int]:
    h = HistoryBuilder()
    _, t = h.txn(1, [send_mop("t0", 7, 0, 0), poll_mop("c1", [("t0", 0, 0, 7)])])
    _finish(h, {("t0", 0): [(0, 7)]})
    return h, t


def _polls_anothers_send() -> tuple[HistoryBuilder, None]:
    h = HistoryBuilder()
    h.txn(1, [send_mop("t0", 7, 0, 0)])
    h.txn(2, [send_mop("t0", 8, 0, 1), poll_mop("c2", [("t0", 0, 0, 7)])])
    _finish(h, {("t0", 0): [(0, 7), (1, 8)]})
    return h, None


_SEND_OFFSETS = {"backwards": (5, 3), "forwards": (3, 5)}


def _two_sends(offsets: tuple[int, int]) -> tuple[HistoryBuilder, int]:
    h = HistoryBuilder()
    _, t = h.txn(1, [send_mop("t0", 1, 0, offsets[0]), send_mop("t0", 2, 0, offsets[1])])
    return h, t


def _two_polls(second: int, final: list[tuple[int, int]]) -> tuple[HistoryBuilder, int]:
    h = HistoryBuilder()
    _, t = h.txn(1, [poll_mop("c1", [("t0", 0, 0, 10)]), poll_mop("c1", [("t0", 0, second, 10 + second)])])
    _finish(h, {("t0", 0): final})
    return h, t


def _gappy_poll(polled: list[int], final: list[int]) -> tuple[HistoryBuilder, int]:
    """One txn's poll of t0/0 at `polled` offsets; the final read holds `final` (the other
    offsets: markers and aborted records, as in a transactional log)."""
    h = HistoryBuilder()
    _, t = h.txn(1, [poll_mop("c1", [("t0", 0, o, 10 + o) for o in polled])])
    _finish(h, {("t0", 0): [(o, 10 + o) for o in final]})
    return h, t


# (polled, final, anomaly): a poll over marker gaps with a skip or a rewind inside
_GAPPY = [
    ([0, 2, 5], [0, 2, 4, 5], "int-poll-skip"),  # offset 4 held, jumped over
    ([0, 4, 2], [0, 2, 4], "int-nonmonotonic-poll"),  # steps 1, 3, 2
    ([0, 1, 3], [0, 2, 3], "int-poll-skip"),  # offset 1 polled, not held: 2 jumped over
]


def _gappy(polled: list[int], final: list[int]) -> str:
    return f"gappy-poll-{polled}-{final}"


def _txns_polling_on(final: list[int]) -> tuple[HistoryBuilder, tuple[int, int]]:
    h = HistoryBuilder()
    _, t1 = h.txn(1, [poll_mop("c1", [("t0", 0, 0, 10)])])
    _, t2 = h.txn(1, [poll_mop("c1", [("t0", 0, 2, 12)])])
    _finish(h, {("t0", 0): [(o, 10 + o) for o in final]})
    return h, (t1, t2)


def _crossed_writes(p1_order: str) -> tuple[HistoryBuilder, tuple[int, int]]:
    """T1 writes a to p0 and d to p1, T2 b to p0 and c to p1; p0 holds a, b; p1 in `p1_order`."""
    h = HistoryBuilder()
    a_first = p1_order == "d,c"
    _, t1 = h.txn(1, [send_mop("t0", 1, 0, 0), send_mop("t0", 4, 1, 0 if a_first else 1)])
    _, t2 = h.txn(2, [send_mop("t0", 2, 0, 1), send_mop("t0", 3, 1, 1 if a_first else 0)])
    _finish(h, {("t0", 0): [(0, 1), (1, 2)], ("t0", 1): [(0, 4), (1, 3)] if a_first else [(0, 3), (1, 4)]})
    return h, (t1, t2)


def _read_against_order(t2_first_on_p1: bool) -> tuple[HistoryBuilder, tuple[int, int]]:
    """T2 polls T1's p0 value while T1 is open; on p1, T2's value lands before T1's or after."""
    h = HistoryBuilder()
    t1_invoke = h.op(1, "invoke", "txn", [["send", {"topic": "t0", "value": 1, "partition": 0}],
                                           ["send", {"topic": "t0", "value": 3, "partition": 1}]])
    _, t2 = h.txn(2, [poll_mop("c2", [("t0", 0, 0, 1)]), send_mop("t0", 2, 1, 0 if t2_first_on_p1 else 1)])
    t1 = h.op(1, "ok", "txn", [["send", {"topic": "t0", "value": 1, "partition": 0, "offset": 0}],
                               ["send", {"topic": "t0", "value": 3, "partition": 1,
                                         "offset": 1 if t2_first_on_p1 else 0}]])
    assert t1 > t1_invoke
    _finish(h, {("t0", 0): [(0, 1)], ("t0", 1): [(0, 2), (1, 3)] if t2_first_on_p1 else [(0, 3), (1, 2)]})
    return h, (t1, t2)


CASES = {
    "aborted-polled": _aborted_then_polled(None),
    "aborted-polled-uncommitted": _aborted_then_polled("read_uncommitted"),
    "aborted-in-final": _aborted_in_final(),
    "committed-torn": _two_partition_txn("ok", []),
    "committed-whole": _two_partition_txn("ok", [(0, 2)]),
    "info-torn": _two_partition_txn("info", []),
    "info-seen-nowhere": _info_seen_nowhere(),
    "undrained": _undrained(),
    "polls-own-send": _polls_own_send(),
    "polls-anothers-send": _polls_anothers_send(),
    **{f"sends-{way}": _two_sends(offsets) for way, offsets in _SEND_OFFSETS.items()},
    "polls-over-held": _two_polls(2, [(0, 10), (1, 11), (2, 12)]),
    "polls-over-unheld": _two_polls(2, [(0, 10), (2, 12)]),  # offset 1: an aborted record or a commit marker
    "polls-back": _two_polls(0, [(0, 10)]),
    "gappy-poll": _gappy_poll([0, 2, 4], [0, 2, 4]),
    **{_gappy(polled, final): _gappy_poll(polled, final) for polled, final, _ in _GAPPY},
    "txns-over-marker-gap": _txns_polling_on([0, 2]),
    "txns-over-held-offset": _txns_polling_on([0, 1, 2]),
    "crossed-c,d": _crossed_writes("c,d"),
    "crossed-d,c": _crossed_writes("d,c"),
    "read-against-order-cycle": _read_against_order(True),
    "read-against-order-twin": _read_against_order(False),
}


@pytest.fixture(scope="module")
def found(find_together):
    """What the registered checkers found in CASES, as one batch (tests/support.Found)."""
    return find_together(CASES)


# -- aborted-read ---------------------------------------------------------------------

def test_aborted_txn_value_seen_by_read_committed_poll_is_aborted_read(found):
    rows, (aborted, reader) = found("aborted-polled", "aborted-read")
    assert [(r["evidence"], r["example"]["value"]) for r in rows] == [([aborted, reader], 5)]


def test_aborted_txn_value_seen_by_read_uncommitted_poll_is_no_anomaly(found):
    assert found("aborted-polled-uncommitted", "aborted-read")[0] == []


def test_aborted_txn_value_in_the_final_read_is_aborted_read(found):
    rows, evidence = found("aborted-in-final", "aborted-read")
    assert [r["evidence"] for r in rows] == [list(evidence)]


# -- lost-write and torn-txn ----------------------------------------------------------

def test_committed_txn_send_missing_from_final_read_is_lost_write_and_torn(found):
    lost, (t, finals) = found("committed-torn", "lost-write")
    assert [(r["evidence"], r["example"]["value"]) for r in lost] == [([t, finals[("t0", 1)]], 2)]
    torn, _ = found("committed-torn", "torn-txn")
    assert [r["example"]["missing"] for r in torn] == [[{"topic": "t0", "partition": 1, "value": 2}]]
    assert torn[0]["evidence"][0] == t


def test_committed_txn_whose_sends_are_all_in_the_final_reads_is_neither_lost_nor_torn(found):
    assert found("committed-whole", "lost-write")[0] == [] and found("committed-whole", "torn-txn")[0] == []


def test_indeterminate_txn_seen_in_part_is_torn_not_lost(found):
    torn, (t, _) = found("info-torn", "torn-txn")
    assert [r["evidence"][0] for r in torn] == [t]
    assert found("info-torn", "lost-write")[0] == []


def test_indeterminate_txn_seen_nowhere_is_not_torn(found):
    assert found("info-seen-nowhere", "torn-txn")[0] == []


def test_a_send_to_a_partition_without_final_read_is_not_judged(ops_of, found):
    assert found("undrained", "lost-write", "torn-txn")[0] == []
    # The partitions whose losses cannot be judged: the txn checks' own output.
    tables = ops_of(CASES["undrained"][0])
    undrained = txn.undrained_partitions(txn.txn_sends(tables.mops), txn.drained_partitions(tables.ops))
    assert [tuple(r) for r in undrained.collect()] == [(0, "t0", 1)]  # (history, topic, partition)


# -- precommitted-read ----------------------------------------------------------------

def test_txn_polling_its_own_send_is_precommitted_read(found):
    rows, t = found("polls-own-send", "precommitted-read")
    assert [r["evidence"] for r in rows] == [[t]]


def test_txn_polling_another_txns_send_is_no_precommitted_read(found):
    assert found("polls-anothers-send", "precommitted-read")[0] == []


# -- internal orders ------------------------------------------------------------------

@pytest.mark.parametrize("offsets, flagged", [((5, 3), True), ((3, 5), False)], ids=["backwards", "forwards"])
def test_txn_sends_to_one_partition_must_land_in_their_order(found, offsets, flagged):
    way = next(way for way, at in _SEND_OFFSETS.items() if at == offsets)
    rows, t = found(f"sends-{way}", "int-nonmonotonic-send")
    assert [r["evidence"] for r in rows] == ([[t]] if flagged else [])


def test_txn_polls_jumping_over_a_finally_read_offset_are_int_poll_skip(found):
    rows, t = found("polls-over-held", "int-poll-skip")
    assert [(r["evidence"], r["example"]["skipped"]) for r in rows] == [([t], 1)]


def test_txn_polls_jumping_over_an_offset_no_committed_read_holds_are_no_skip(found):
    assert found("polls-over-unheld", "int-poll-skip")[0] == []


def test_txn_polls_going_back_are_int_nonmonotonic_poll(found):
    rows, t = found("polls-back", "int-nonmonotonic-poll")
    assert [r["evidence"] for r in rows] == [[t]]


def _runs(tables) -> list[bool]:
    polls = kafka.poll_records(tables.records)
    offsets = kafka.offset_summary(kafka.observations(kafka.acks(tables.sends), polls,
                                                      kafka.final_records(tables.records)))
    return [r["run"] for r in kafka.poll_runs(kafka.final_steps(polls, offsets)).collect()]


def test_a_poll_over_marker_gaps_is_one_run_without_anomaly(ops_of, found):
    assert _runs(ops_of(CASES["gappy-poll"][0])) == [True]  # judged whole: no record-by-record look
    assert found.all("gappy-poll") == []


@pytest.mark.parametrize("polled, final, anomaly", _GAPPY)
def test_a_skip_or_rewind_inside_a_poll_over_marker_gaps_is_flagged(ops_of, found, polled, final, anomaly):
    assert _runs(ops_of(CASES[_gappy(polled, final)][0])) == [False]
    rows, t = found(_gappy(polled, final), anomaly)
    assert [r["evidence"] for r in rows] == [[t]]


def test_txns_polling_on_over_a_marker_gap_do_not_skip_and_over_a_held_offset_do(found):
    for case, skipped in (("txns-over-marker-gap", []), ("txns-over-held-offset", [1])):
        rows, (t1, t2) = found(case, "poll-skip")
        assert [(r["evidence"], r["example"]["skipped"]) for r in rows] == [([t1, t2], n) for n in skipped]


# -- cycles ---------------------------------------------------------------------------

def test_txns_ordered_both_ways_on_two_partitions_are_g0(found):
    rows, (t1, t2) = found("crossed-c,d", "G0")
    assert [r["evidence"] for r in rows] == [sorted([t1, t2])]
    assert all(e.startswith("ww") for e in rows[0]["example"]["edges"])
    # T1 completed before T2 began: the same cycle breaks realtime order too.
    assert [r["evidence"] for r in found("crossed-c,d", "G0-realtime")[0]] == [sorted([t1, t2])]


def test_txns_ordered_alike_on_both_partitions_make_no_cycle(found):
    assert found("crossed-d,c", *CYCLES)[0] == []


@pytest.mark.parametrize("t2_first_on_p1, cyclic", [(True, True), (False, False)], ids=["cycle", "twin"])
def test_a_read_against_the_write_order_is_g1c(found, t2_first_on_p1, cyclic):
    rows, (t1, t2) = found(f"read-against-order-{'cycle' if t2_first_on_p1 else 'twin'}", "G1c")
    assert [r["evidence"] for r in rows] == ([sorted([t1, t2])] if cyclic else [])
    if cyclic:
        assert any(e.startswith("wr") for e in rows[0]["example"]["edges"])


def test_realtime_cycle_needs_the_completion_before_the_invoke():
    # T1 -ww-> T2, and T2 completed before T1 was invoked: only realtime closes the cycle.
    edges = [(1, 2, "ww", "t0/0")]
    assert find_cycles(edges, {1: (10, 20), 2: (30, 40)}) == []
    cycles = find_cycles(edges, {1: (50, 60), 2: (30, 40)})
    assert [(c["anomaly"], c["cycle"], c["edges"]) for c in cycles] == [("G0-realtime", [1, 2, 1], ["ww t0/0", "rt"])]
