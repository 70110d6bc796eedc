"""Consumer positions in a consumer group: skips and rewinds that the recorded rebalances and
commits explain pass; those they do not explain are anomalies (checkers.consumer_groups).

The histories are built at import (CASES) and found as one batch by the registered checkers
(`found`, tests/conftest.py find_together), as `ordeal check` runs them. The test of the
group table (the tables' own content) builds its tables alone (`ops_of`)."""
from __future__ import annotations

import pytest

from tests.histories import HistoryBuilder

T = "t0"
POSITION_ANOMALIES = ("nonmonotonic-poll", "poll-skip", "group-rewind", "group-skip")


def _recs(*offsets: int, partition: int = 0):
    return [(T, partition, o, 100 * partition + o) for o in offsets]


# -- the histories ----------------------------------------------------------------------

def _group(commit: int, start: int | None, after: list[int], *, commit_type: str = "ok",
           second_commit: tuple[int, str] | None = None) -> tuple[HistoryBuilder, dict[str, int]]:
    """c1 subscribes, is assigned t0/0 from the beginning and reads offsets 0-4, commits
    `commit`, then a rebalance revokes t0/0 and assigns it again at `start`, and it reads
    `after`. The final read holds offsets 0-7."""
    h = HistoryBuilder()
    h.subscribe(7, "c1", [T])
    _, p1 = h.group_poll(7, "c1", _recs(0, 1, 2, 3, 4), assigned=[(T, 0, None)])
    _, c1 = h.commit(7, "c1", [(T, 0, commit)], type=commit_type)
    if second_commit is not None:
        h.commit(7, "c1", [(T, 0, second_commit[0])], type=second_commit[1])
    _, p2 = h.group_poll(7, "c1", _recs(*after), revoked=[(T, 0)], assigned=[(T, 0, start)])
    h.nemesis("heal", {})
    h.final_read(9, T, 0, [(o, o) for o in range(8)])
    return h, {"p1": p1, "commit": c1, "p2": p2}


def _rewind_without_rebalance() -> tuple[HistoryBuilder, dict[str, int]]:
    h = HistoryBuilder()
    h.subscribe(7, "c1", [T])
    _, p1 = h.group_poll(7, "c1", _recs(0, 1, 2, 3), assigned=[(T, 0, None)])
    h.commit(7, "c1", [(T, 0, 4)])
    _, p2 = h.group_poll(7, "c1", _recs(2, 3))
    h.final_read(9, T, 0, [(o, o) for o in range(4)])
    return h, {"p1": p1, "p2": p2}


def _rebalance_of_another_partition() -> tuple[HistoryBuilder, dict[str, int]]:
    h = HistoryBuilder()
    h.subscribe(7, "c1", [T])
    _, p1 = h.group_poll(7, "c1", _recs(0, 1, 2) + _recs(0, partition=1),
                         assigned=[(T, 0, None), (T, 1, None)])
    # A cooperative rebalance: only t0/1 moves; t0/0 rewinds with nothing to explain it.
    _, p2 = h.group_poll(7, "c1", _recs(1, 2), revoked=[(T, 1)])
    h.final_read(9, T, 0, [(o, o) for o in range(3)])
    h.final_read(9, T, 1, [(0, 100)])
    return h, {"p1": p1, "p2": p2}


def _new_subscription() -> tuple[HistoryBuilder, None]:
    h = HistoryBuilder()
    h.subscribe(7, "c1", [T])
    h.group_poll(7, "c1", _recs(0, 1, 2), assigned=[(T, 0, None)])
    h.subscribe(7, "c1", [T])  # a new consumer under the same name: the old one's positions are gone
    h.group_poll(7, "c1", _recs(0, 1), assigned=[(T, 0, None)])
    h.final_read(9, T, 0, [(o, o) for o in range(3)])
    return h, None


def _txn_group(commit_type: str, start: int) -> tuple[HistoryBuilder, dict[str, int]]:
    """kafka-txn in a group: c1's txn polls offsets 0-4 of t0/0 (assigned from the beginning)
    and commits 5 inside the txn, which ends `commit_type`; then a rebalance hands t0/0 back at
    `start` and the next txn reads from there."""
    h = HistoryBuilder()
    h.subscribe(7, "c1", [T])
    poll = {"consumer": "c1", "records": [{"topic": T, "partition": 0, "offset": o, "value": o} for o in range(5)],
            "rebalances": [{"event": "assigned", "topic": T, "partition": 0, "position": None}]}
    commit = {"consumer": "c1", "offsets": [{"topic": T, "partition": 0, "offset": 5}]}
    _, t1 = h.txn(7, [("poll", poll), ("commit", commit)], type=commit_type,
                  error=None if commit_type == "ok" else "aborted-on-purpose")
    again = {"consumer": "c1", "records": [{"topic": T, "partition": 0, "offset": o, "value": o} for o in range(start, 6)],
             "rebalances": [{"event": "revoked", "topic": T, "partition": 0},
                            {"event": "assigned", "topic": T, "partition": 0, "position": start}]}
    _, t2 = h.txn(7, [("poll", again)])
    h.final_read(9, T, 0, [(o, o) for o in range(6)])
    return h, {"t1": t1, "t2": t2}


def _after_abort(rewinds: bool) -> tuple[HistoryBuilder, dict[str, int]]:
    """A txn polls offsets 0-2 and is aborted; the next txn polls 3-4 (no rewind) or 0-4
    (rewound to the group's commit, nothing yet) and commits 5."""
    h = HistoryBuilder()
    h.subscribe(7, "c1", [T])
    first = {"consumer": "c1", "records": [{"topic": T, "partition": 0, "offset": o, "value": o} for o in range(3)],
             "rebalances": [{"event": "assigned", "topic": T, "partition": 0, "position": None}]}
    h.txn(7, [("poll", first), ("commit", {"consumer": "c1", "offsets": [{"topic": T, "partition": 0, "offset": 3}]})],
          type="fail", error="aborted-on-purpose")
    again = range(0 if rewinds else 3, 5)
    second = {"consumer": "c1", "records": [{"topic": T, "partition": 0, "offset": o, "value": o} for o in again]}
    if rewinds:  # a seek back is a new start: recorded as the group handing the partition over again
        second["rebalances"] = [{"event": "revoked", "topic": T, "partition": 0},
                                {"event": "assigned", "topic": T, "partition": 0, "position": None}]
    _, t2 = h.txn(7, [("poll", second),
                      ("commit", {"consumer": "c1", "offsets": [{"topic": T, "partition": 0, "offset": 5}]})])
    h.final_read(9, T, 0, [(o, o) for o in range(5)])
    return h, {"t2": t2}


CASES = {
    "rewind-to-commit": _group(commit=3, start=3, after=[3, 4, 5]),
    "start-below-commit": _group(commit=5, start=3, after=[3, 4, 5]),
    "start-above-commits": _group(commit=3, start=6, after=[6, 7]),
    "indeterminate-commit": _group(commit=3, start=5, after=[5, 6], second_commit=(5, "info")),
    "failed-commit": _group(commit=3, start=5, after=[5, 6], second_commit=(5, "fail")),
    "skip-past-start": _group(commit=3, start=3, after=[5, 6]),
    "rewind-without-rebalance": _rewind_without_rebalance(),
    "rebalance-of-another-partition": _rebalance_of_another_partition(),
    "new-subscription": _new_subscription(),
    "txn-aborted-commit": _txn_group("fail", start=0),
    "txn-committed-commit": _txn_group("ok", start=0),
    "after-abort-reads-on": _after_abort(rewinds=False),
    "after-abort-rewinds": _after_abort(rewinds=True),
}


@pytest.fixture(scope="module")
def found(find_together):
    """What the registered checkers found in CASES, as one batch (tests/support.Found); the
    position anomalies unless a test names others."""
    return find_together(CASES, default=POSITION_ANOMALIES)


# -- positions ------------------------------------------------------------------------

def test_a_rewind_to_the_last_acknowledged_commit_after_a_rebalance_is_valid(found):
    assert found("rewind-to-commit")[0] == []


def test_a_rebalance_that_starts_below_the_last_acknowledged_commit_is_group_rewind(found):
    rows, at = found("start-below-commit")
    assert [(r["anomaly"], r["evidence"], r["example"]["position"], r["example"]["committed"]) for r in rows] == [
        ("group-rewind", [at["commit"], at["p2"]], 3, 5)]


def test_a_rebalance_that_starts_above_every_commit_is_group_skip(found):
    rows, at = found("start-above-commits")
    assert [(r["anomaly"], r["evidence"]) for r in rows] == [("group-skip", [at["commit"], at["p2"]])]


def test_an_indeterminate_commit_may_explain_the_start_position(found):
    assert found("indeterminate-commit")[0] == []


def test_a_failed_commit_explains_nothing(found):
    assert [r["anomaly"] for r in found("failed-commit")[0]] == ["group-skip"]


def test_a_first_record_past_the_start_position_over_held_offsets_is_poll_skip(found):
    rows, at = found("skip-past-start")
    assert [(r["anomaly"], r["evidence"], r["example"]["skipped"]) for r in rows] == [
        ("poll-skip", [at["p2"]], 2)]


def test_a_rewind_without_a_rebalance_between_is_nonmonotonic_poll(found):
    rows, at = found("rewind-without-rebalance")
    assert [(r["anomaly"], r["evidence"]) for r in rows] == [("nonmonotonic-poll", [at["p1"], at["p2"]])]


def test_a_rebalance_of_another_partition_leaves_this_ones_position(found):
    rows, at = found("rebalance-of-another-partition")
    assert [(r["anomaly"], r["evidence"], r["example"]["partition"]) for r in rows] == [
        ("nonmonotonic-poll", [at["p1"], at["p2"]], 0)]


def test_a_new_subscription_resets_the_consumers_positions(found):
    assert found("new-subscription")[0] == []


def test_a_group_history_reads_its_rebalances_and_commits_into_the_group_table(ops_of):
    h, at = _group(commit=3, start=3, after=[3], second_commit=(4, "info"))
    rows = sorted(tuple(r) for r in ops_of(h).group.select("index", "type", "f", "topic", "partition",
                                                            "offset").collect())
    assert rows == sorted([(at["p1"], "ok", "assigned", T, 0, None), (at["commit"], "ok", "commit", T, 0, 3),
                           (at["commit"] + 2, "info", "commit", T, 0, 4), (at["p2"], "ok", "revoked", T, 0, None),
                           (at["p2"], "ok", "assigned", T, 0, 3)])


# -- in transactions --------------------------------------------------------------------

def test_a_txn_that_aborted_its_commit_explains_a_start_at_the_old_commit(found):
    assert found("txn-aborted-commit")[0] == []


def test_a_start_below_what_a_committed_txn_committed_is_group_rewind(found):
    rows, at = found("txn-committed-commit")
    assert [(r["anomaly"], r["evidence"]) for r in rows] == [("group-rewind", [at["t1"], at["t2"]])]


def test_committing_past_what_only_an_aborted_txn_polled_is_unprocessed_input(found):
    rows, at = found("after-abort-reads-on", "unprocessed-input")
    assert [(r["evidence"], r["example"]["n"], r["example"]["offsets"]) for r in rows] == [([at["t2"]], 3, [0, 1, 2])]


def test_a_consumer_that_polls_again_what_an_aborted_txn_polled_leaves_no_unprocessed_input(found):
    assert found("after-abort-rewinds", "unprocessed-input")[0] == []
