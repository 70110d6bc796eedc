"""Each Kafka anomaly on a tiny history that has exactly it, and on its clean twin.

The histories are built at import (CASES) and found as one batch by the registered checkers
(`found`, tests/conftest.py find_together): a batch judges each as if alone
(tests/checkers/test_batch.py) and costs about what one costs. The tests of one transform's
own output build their history alone."""
from __future__ import annotations

import pytest

from checkers import kafka
from tests.histories import HistoryBuilder


def _two_sends(final: list[tuple[int, int]]) -> tuple[HistoryBuilder, dict[str, int]]:
    h = HistoryBuilder()
    _, s1 = h.send(0, "t0", 1, offset=0)
    _, s2 = h.send(0, "t0", 2, offset=1)
    h.nemesis("heal", {})
    _, fr = h.final_read(9, "t0", 0, final)
    return h, {"s1": s1, "s2": s2, "final": fr}


def _another_partition() -> tuple[HistoryBuilder, dict[str, int]]:
    h, at = _two_sends([(0, 1)])
    h.final_read(9, "t0", 1, [(1, 2)])
    return h, at


def _acknowledged_twice() -> tuple[HistoryBuilder, int]:
    h = HistoryBuilder()
    h.send(0, "t0", 1, partition=0, offset=0)
    _, again = h.send(0, "t0", 1, partition=1, offset=0)  # a retry, acknowledged elsewhere
    h.final_read(9, "t0", 0, [(0, 1)])
    h.final_read(9, "t0", 1, [])
    return h, again


def _info_send(polled: bool) -> tuple[HistoryBuilder, None]:
    h = HistoryBuilder()
    h.send(0, "t0", 7 if polled else 1, type="info")
    if polled:
        h.poll(7, "c1", [("t0", 0, 0, 7)])
    else:
        h.final_read(9, "t0", 0, [])
    return h, None


def _sequential_sends(second_offset: int) -> tuple[HistoryBuilder, tuple[int, int, int]]:
    h = HistoryBuilder()
    _, a = h.send(0, "t0", 1, offset=5)
    b_invoke, b = h.send(1, "t0", 2, offset=second_offset)
    return h, (a, b_invoke, b)


def _concurrent_sends() -> tuple[HistoryBuilder, None]:
    h = HistoryBuilder()
    a = {"topic": "t0", "value": 1}
    b = {"topic": "t0", "value": 2}
    h.op(0, "invoke", "send", a)
    h.op(1, "invoke", "send", b)
    h.op(0, "ok", "send", dict(a, partition=0, offset=5))
    h.op(1, "ok", "send", dict(b, partition=0, offset=3))
    return h, None


def _process_sends(second_offset: int) -> tuple[HistoryBuilder, tuple[int, int]]:
    h = HistoryBuilder()
    _, first = h.send(0, "t0", 1, offset=4)
    _, second = h.send(0, "t0", 2, offset=second_offset)
    return h, (first, second)


def _polls(reassign: bool) -> tuple[HistoryBuilder, tuple[int, int]]:
    h = HistoryBuilder()
    h.assign(7, "c1", [("t0", 0)])
    _, p1 = h.poll(7, "c1", [("t0", 0, 0, 10), ("t0", 0, 1, 11)])
    if reassign:
        h.assign(7, "c1", [("t0", 0)])
    _, p2 = h.poll(7, "c1", [("t0", 0, 1, 11), ("t0", 0, 2, 12)])
    return h, (p1, p2)


def _skip(second_poll: list[int], final: list[int]) -> tuple[HistoryBuilder, tuple[int, int]]:
    h = HistoryBuilder()
    h.assign(7, "c1", [("t0", 0)])
    _, p1 = h.poll(7, "c1", [("t0", 0, 0, 10), ("t0", 0, 1, 11)])
    _, p2 = h.poll(7, "c1", [("t0", 0, o, 10 + o) for o in second_poll])
    h.final_read(9, "t0", 0, [(o, 10 + o) for o in final])
    return h, (p1, p2)


def _failed_send_polled() -> tuple[HistoryBuilder, tuple[int, int]]:
    h = HistoryBuilder()
    _, failed = h.send(0, "t0", 7, type="fail")
    _, poll = h.poll(7, "c1", [("t0", 0, 0, 7)])
    return h, (failed, poll)


def _polled(values: list[int]) -> tuple[HistoryBuilder, int]:
    """Acknowledged sends of `values` at offsets 0, 1, ...; a poll of the first only."""
    h = HistoryBuilder()
    sent = [h.send(0, "t0", v, offset=o)[1] for o, v in enumerate(values)]
    h.poll(7, "c1", [("t0", 0, 0, values[0])])
    return h, sent[-1]


def _overtakes() -> tuple[HistoryBuilder, list[tuple[float, float, int, int]]]:
    """60 sends by 4 processes at few offsets: many overtakes, some offsets shared; each ack as
    (invoke time, completion time, offset, completion index)."""
    import random
    rng = random.Random(7)
    h = HistoryBuilder()
    open_sends: dict[int, tuple[int, int]] = {}  # process -> (value, invoke index)
    acks = []
    for value in range(60):
        process = rng.randrange(4)
        if process in open_sends:
            sent, invoked = open_sends.pop(process)
            offset = rng.randrange(12)
            done = h.op(process, "ok", "send", {"topic": "t0", "value": sent, "partition": 0, "offset": offset})
            acks.append((h.ops[invoked]["time"], h.ops[done]["time"], offset, done))
        else:
            open_sends[process] = (value, h.op(process, "invoke", "send", {"topic": "t0", "value": value}))
    return h, acks


# Positions across re-assigns: an assign that names a partition without seeking keeps its
# position (as the kafka-log workload's consumer does); one that drops or seeks it resets it.
_REASSIGNS = {
    "keeps": ([("t0", 0), ("t0", 1)], None),
    "keeps-fewer": ([("t0", 0)], None),
    "drops": ([("t0", 1)], None),
    "beginning": ([("t0", 0)], "beginning"),
    "committed": ([("t0", 0)], "committed"),
}


def _across(reassign: str, second_poll: list[int]) -> tuple[HistoryBuilder, tuple[int, int]]:
    """Offsets 0 and 1 of t0/0 polled, a re-assign, then `second_poll`'s offsets; the final read
    holds offsets 0 to 4."""
    h = HistoryBuilder()
    h.assign(7, "c1", [("t0", 0), ("t0", 1)])
    _, p1 = h.poll(7, "c1", [("t0", 0, 0, 10), ("t0", 0, 1, 11)])
    partitions, seek = _REASSIGNS[reassign]
    h.assign(7, "c1", partitions, seek=seek)
    _, p2 = h.poll(7, "c1", [("t0", 0, o, 10 + o) for o in second_poll])
    h.final_read(9, "t0", 0, [(o, 10 + o) for o in range(5)])
    return h, (p1, p2)


def _per_partition() -> tuple[HistoryBuilder, tuple[int, int]]:
    h = HistoryBuilder()
    h.assign(7, "c1", [("t0", 0), ("t0", 1)])
    _, p1 = h.poll(7, "c1", [("t0", 0, 0, 10), ("t0", 0, 1, 11), ("t0", 1, 0, 20), ("t0", 1, 1, 21)])
    h.assign(7, "c1", [("t0", 0)], seek=None)  # keeps t0/0, drops t0/1
    h.assign(7, "c1", [("t0", 0), ("t0", 1)], seek=None)  # keeps t0/0, t0/1 starts over
    _, p2 = h.poll(7, "c1", [("t0", 0, 0, 10), ("t0", 1, 0, 20)])
    return h, (p1, p2)


def _another_consumer() -> tuple[HistoryBuilder, tuple[int, int]]:
    h = HistoryBuilder()
    h.assign(7, "c1", [("t0", 0)])
    _, p1 = h.poll(7, "c1", [("t0", 0, 0, 10), ("t0", 0, 1, 11)])
    h.assign(8, "c2", [("t0", 0)])  # c2 seeks; c1 does not
    _, p2 = h.poll(7, "c1", [("t0", 0, 0, 10)])
    return h, (p1, p2)


def _unreadable_assign() -> tuple[HistoryBuilder, None]:
    h, _ = _across("keeps", [0, 1, 2])
    for op in h.ops:
        if op["f"] == "assign" and op["index"] > 1:
            op["value"].pop("partitions", None)  # names nothing the checker can read: it may have dropped t0/0
    return h, None


CASES = {
    "lost": _two_sends([(0, 1)]),
    "all-read": _two_sends([(0, 1), (1, 2)]),
    "moved": _two_sends([(0, 1), (2, 2)]),
    "overwritten": _two_sends([(0, 1), (1, 9), (2, 2)]),
    "another-partition": _another_partition(),
    "acknowledged-twice": _acknowledged_twice(),
    "info-unread": _info_send(polled=False),
    "info-polled": _info_send(polled=True),
    "two-at-one-offset": _two_sends([(0, 1), (1, 3)]),
    "one-at-two-offsets": _two_sends([(0, 1), (1, 2), (2, 2)]),
    "overtaken": _sequential_sends(3),
    "in-order": _sequential_sends(6),
    "concurrent": _concurrent_sends(),
    "process-backward": _process_sends(2),
    "process-forward": _process_sends(5),
    "repeat": _polls(reassign=False),
    "repeat-after-assign": _polls(reassign=True),
    "skip": _skip([4], [0, 1, 2, 3, 4]),
    "no-gap": _skip([2, 3, 4], [0, 1, 2, 3, 4]),
    "skip-over-absent": _skip([4], [0, 1, 4]),
    "failed-polled": _failed_send_polled(),
    "unseen": _polled([1, 2]),
    "all-seen": _polled([1]),
    "overtakes": _overtakes(),
    "per-partition": _per_partition(),
    "another-consumer": _another_consumer(),
    "unreadable-assign": _unreadable_assign(),
    **{f"{reassign}-{what}": _across(reassign, second_poll) for reassign in _REASSIGNS
       for what, second_poll in (("skip", [4]), ("rewind", [0, 1, 2]))},
}


@pytest.fixture(scope="module")
def found(find_together):
    """What the registered checkers found in CASES, as one batch (tests/support.Found)."""
    return find_together(CASES)


def test_acknowledged_send_missing_from_final_read_is_lost_write(found):
    rows, at = found("lost", "lost-write")
    assert [(r["evidence"], r["example"]["value"]) for r in rows] == [([at["s2"], at["final"]], 2)]


def test_final_read_with_every_acknowledged_value_has_no_lost_write(found):
    assert found("all-read", "lost-write")[0] == []


@pytest.mark.parametrize("case", ["moved", "overwritten"])
def test_a_value_the_final_read_holds_elsewhere_in_its_partition_is_not_lost(found, case):
    assert found(case, "lost-write")[0] == []


def test_a_value_the_final_read_holds_only_in_another_partition_is_lost(found):
    rows, at = found("another-partition", "lost-write")
    assert [(r["evidence"][0], r["example"]["value"]) for r in rows] == [(at["s2"], 2)]


def test_a_value_acknowledged_twice_is_lost_where_a_final_read_lacks_it(found):
    rows, again = found("acknowledged-twice", "lost-write")
    assert [(r["evidence"][0], r["example"]["partition"]) for r in rows] == [(again, 1)]


def test_info_send_missing_from_final_read_is_not_lost(found):
    assert found("info-unread", "lost-write")[0] == []


def test_partition_without_final_read_is_undrained(ops_of):
    h = HistoryBuilder()
    h.send(0, "t0", 1, offset=0)
    h.send(0, "t1", 1, offset=0)
    h.final_read(9, "t0", 0, [(0, 1)])
    tables = ops_of(h)
    undrained = kafka.undrained_partitions(kafka.acks(kafka.send_completions(tables.sends)),
                                           kafka.final_partitions(tables.ops))
    assert [(r["topic"], r["partition"]) for r in undrained.collect()] == [("t1", 0)]


def test_two_values_at_one_offset_are_inconsistent_offsets(found):
    rows, at = found("two-at-one-offset", "inconsistent-offsets")
    assert [(r["evidence"], r["example"]["values"]) for r in rows] == [([at["s2"], at["final"]], [2, 3])]


def test_agreeing_acks_and_reads_are_not_inconsistent(found):
    assert found("all-read", "inconsistent-offsets")[0] == []


def test_value_at_two_offsets_is_duplicate(found):
    rows, at = found("one-at-two-offsets", "duplicate")
    assert [(r["evidence"], r["example"]["value"]) for r in rows] == [([at["s2"], at["final"]], 2)]


def test_distinct_values_are_not_duplicates(found):
    assert found("all-read", "duplicate")[0] == []


def test_later_send_landing_before_completed_one_is_realtime_order(found):
    rows, evidence = found("overtaken", "realtime-order")
    assert [r["evidence"] for r in rows] == [list(evidence)]


def test_later_send_landing_after_completed_one_is_in_realtime_order(found):
    assert found("in-order", "realtime-order")[0] == []


def test_concurrent_sends_may_land_in_either_order(found):
    assert found("concurrent", "realtime-order")[0] == []


def test_process_send_landing_before_its_previous_is_nonmonotonic_send(found):
    rows, evidence = found("process-backward", "nonmonotonic-send")
    assert [r["evidence"] for r in rows] == [list(evidence)]


def test_process_sends_in_increasing_offsets_are_monotonic(found):
    assert found("process-forward", "nonmonotonic-send")[0] == []


def test_poll_repeating_an_offset_without_assign_is_nonmonotonic_poll(found):
    rows, polls = found("repeat", "nonmonotonic-poll")
    assert [(r["evidence"], r["example"]["offset"]) for r in rows] == [(list(polls), 1)]


def test_poll_repeating_an_offset_after_assign_is_allowed(found):
    assert found("repeat-after-assign", "nonmonotonic-poll")[0] == []


def test_polls_jumping_over_final_read_offsets_are_poll_skip(found):
    rows, polls = found("skip", "poll-skip")
    assert [(r["evidence"], r["example"]["skipped"]) for r in rows] == [(list(polls), 2)]


def test_polls_reading_on_without_gap_do_not_skip(found):
    assert found("no-gap", "poll-skip")[0] == []


def test_polls_jumping_over_offsets_absent_from_final_read_do_not_skip(found):
    assert found("skip-over-absent", "poll-skip")[0] == []


def test_failed_send_seen_by_a_poll_is_aborted_read(found):
    rows, evidence = found("failed-polled", "aborted-read")
    assert [(r["evidence"], r["example"]["value"]) for r in rows] == [(list(evidence), 7)]


def test_info_send_seen_by_a_poll_is_not_aborted_read(found):
    assert found("info-polled", "aborted-read")[0] == []


def test_info_send_seen_by_a_poll_counts_as_indeterminate_seen(ops_of):
    h = HistoryBuilder()
    h.send(0, "t0", 7, type="info")
    h.send(0, "t0", 8, type="info")
    h.poll(7, "c1", [("t0", 0, 0, 7)])
    tables = ops_of(h)
    sends = kafka.send_completions(tables.sends)
    seen = kafka.observations(kafka.acks(sends), kafka.poll_records(tables.records),
                              kafka.final_records(tables.records))
    assert kafka.indeterminate_seen(sends, kafka.value_summary(kafka.cells(seen, kafka.offset_summary(seen)), sends)).count() == 1


def test_acknowledged_value_no_poll_returned_is_unseen(found):
    rows, s2 = found("unseen", "unseen")
    assert [(r["evidence"], r["example"]["value"]) for r in rows] == [([s2], 2)]


def test_every_acknowledged_value_polled_leaves_nothing_unseen(found):
    assert found("all-seen", "unseen")[0] == []


def test_cells_are_the_distinct_observations_with_the_sources_that_saw_each(ops_of):
    h = HistoryBuilder()
    h.send(0, "t0", 1, offset=0)
    h.send(0, "t0", 2, offset=1)
    h.send(0, "t0", 3, offset=2)
    h.poll(7, "c1", [("t0", 0, 0, 1), ("t0", 0, 1, 9), ("t0", 0, None, 4)])
    h.final_read(9, "t0", 0, [(0, 1), (1, 2), (2, None)])
    tables = ops_of(h)
    seen = kafka.observations(kafka.acks(kafka.send_completions(tables.sends)), kafka.poll_records(tables.records),
                              kafka.final_records(tables.records))
    got = [tuple(r) for r in kafka.cells(seen, kafka.offset_summary(seen)).collect()]
    # (history, topic, partition, offset, value, acked, polled, final): the one history is 0
    assert sorted(got, key=str) == sorted([
        (0, "t0", 0, 0, 1, True, True, True),
        (0, "t0", 0, 1, 2, True, False, True), (0, "t0", 0, 1, 9, False, True, False),
        (0, "t0", 0, 2, 3, True, False, False), (0, "t0", 0, 2, None, False, False, True),
        (0, "t0", 0, None, 4, False, True, False),
    ], key=str)


def test_realtime_order_flags_exactly_the_sends_an_earlier_completed_send_overtakes(found):
    rows, acks = found("overtakes", "realtime-order")
    h = CASES["overtakes"][0]
    want = sorted(b_done for b_invoked, _, b_offset, b_done in acks
                  if any(a_time < b_invoked and a_offset > b_offset for _, a_time, a_offset, _ in acks))
    assert want and sorted(r["evidence"][2] for r in rows) == want
    by_index = {done: (time, offset) for _, time, offset, done in acks}
    for r in rows:  # each names an A that completed before its B was invoked, at a higher offset
        a_time, a_offset = by_index[r["evidence"][0]]
        assert a_time < h.ops[r["evidence"][1]]["time"] and a_offset > r["example"]["later"]["offset"]


@pytest.mark.parametrize("reassign", ["keeps", "keeps-fewer"])
def test_a_skip_across_an_assign_that_keeps_the_partition_is_poll_skip(found, reassign):
    rows, polls = found(f"{reassign}-skip", "poll-skip")
    assert [(r["evidence"], r["example"]["skipped"]) for r in rows] == [(list(polls), 2)]


@pytest.mark.parametrize("reassign", ["keeps", "keeps-fewer"])
def test_a_rewind_across_an_assign_that_keeps_the_partition_is_nonmonotonic_poll(found, reassign):
    rows, polls = found(f"{reassign}-rewind", "nonmonotonic-poll")
    assert [(r["evidence"], r["example"]["prev_offset"], r["example"]["offset"]) for r in rows] == [
        (list(polls), 1, 0)]


@pytest.mark.parametrize("reassign", ["drops", "beginning", "committed"])
def test_a_skip_or_rewind_across_an_assign_that_drops_or_seeks_the_partition_is_allowed(found, reassign):
    assert (found(f"{reassign}-skip", "poll-skip")[0], found(f"{reassign}-rewind", "nonmonotonic-poll")[0]) == (
        [], [])


def test_positions_are_judged_per_partition_across_one_assign(found):
    rows, polls = found("per-partition", "nonmonotonic-poll")
    assert [(r["evidence"], r["example"]["partition"]) for r in rows] == [(list(polls), 0)]


def test_an_assign_of_another_consumer_leaves_positions_as_they_were(found):
    rows, polls = found("another-consumer", "nonmonotonic-poll")
    assert [r["evidence"] for r in rows] == [list(polls)]


def test_an_assign_whose_partitions_cannot_be_read_resets_every_position(found):
    assert found("unreadable-assign", "nonmonotonic-poll")[0] == []


def test_partitions_polled_without_a_final_read_are_where_poll_skip_is_not_judged(ops_of):
    h = HistoryBuilder()
    h.poll(7, "c1", [("t0", 0, 0, 10), ("t0", 1, 4, 14)])
    h.final_read(9, "t0", 0, [(0, 10)])
    tables = ops_of(h)
    polls, finals = kafka.poll_records(tables.records), kafka.final_records(tables.records)
    offsets = kafka.offset_summary(kafka.observations(kafka.acks(tables.sends), polls, finals))
    unread = kafka.unread_polled_partitions(kafka.poll_runs(kafka.final_steps(polls, offsets)),
                                            kafka.final_partitions(tables.ops))
    assert [(r["topic"], r["partition"]) for r in unread.collect()] == [("t0", 1)]


@pytest.fixture(params=["1", "4"], ids=["small: one sort", "large: arithmetic where dense"])
def shuffle_partitions(request, spark):
    """The session shuffling into one partition (a small history's setting) or several."""
    before = spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set("spark.sql.shuffle.partitions", request.param)
    yield request.param
    spark.conf.set("spark.sql.shuffle.partitions", before)


def test_final_steps_count_the_held_offsets_whether_a_partition_is_dense_sparse_or_unread(ops_of, shuffle_partitions):
    """A dense partition's steps are arithmetic, a sparse one's counted, an unread one's null
    (for a large history; a small one's are all counted); every way gives a polled offset the
    final reads do not hold (or lie beyond) no step."""
    h = HistoryBuilder()
    polled = {("t0", 0): [3, 5, 6, 8, 9], ("t0", 1): [0, 2, 3, 4, 7], ("t0", 2): [0, 1]}
    h.poll(0, "c1", [(t, p, o, f"{t}/{p}/{o}") for (t, p), offsets in polled.items() for o in offsets])
    held = {("t0", 0): [4, 5, 6, 7, 8], ("t0", 1): [0, 2, 3, 5]}  # dense 4..8; sparse
    for (t, p), offsets in held.items():
        h.final_read(9, t, p, [(o, f"{t}/{p}/{o}") for o in offsets])
    tables = ops_of(h)
    polls = kafka.poll_records(tables.records)
    offsets = kafka.offset_summary(kafka.observations(kafka.acks(tables.sends), polls,
                                                      kafka.final_records(tables.records)))
    steps = {(r["topic"], r["partition"], r["offset"]): r["step"]
             for r in kafka.final_steps(polls, offsets).collect()}
    expected = {}
    for (t, p), offsets_polled in polled.items():
        marks = sorted(held.get((t, p), []))
        for o in offsets_polled:
            expected[(t, p, o)] = marks.index(o) + 1 if o in marks else None
    assert steps == expected
    assert steps[("t0", 0, 5)] == 2 and steps[("t0", 1, 3)] == 3 and steps[("t0", 0, 9)] is None
