"""Txn histories (format 2) through the paths every history takes: whether they prove anything,
consumer positions across re-assigns (a txn's polls are polls), several histories in one
Spark session, and the report of a history checked elsewhere.

The histories whose results the tests read are checked once, as one batch (`judged`: each
judged as if alone, tests/checkers/test_batch.py)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from checkers import kafka
from checkers.check import NOTHING_PROVEN, check_history
from tests.histories import HistoryBuilder, poll_mop, send_mop
from cli.main import main


def _rows(tables, anomaly: str):
    return kafka.kafka_findings(tables).rows.filter(f"anomaly = '{anomaly}'")


def _committed() -> HistoryBuilder:
    """One committed txn of two sends to t0/0, and t0/0's final read holding both."""
    h = HistoryBuilder()
    h.txn(1, [send_mop("t0", 1, 0, 0), send_mop("t0", 2, 0, 1)])
    h.final_read(9, "t0", 0, [(0, 1), (1, 2)])
    return h


# -- a history that proves nothing ---------------------------------------------------------

def test_txns_that_sent_and_read_nothing_that_counts_prove_nothing_without_spark(tmp_path):
    h = HistoryBuilder()
    h.txn(1, [send_mop("t0", 1, 0, 0)], type="fail")  # aborted: its send proves nothing
    h.txn(2, [send_mop("t0", 2, 0)], type="info")  # may or may not have committed
    h.txn(3, [poll_mop("c1", [])])  # committed, read nothing
    path = h.write(tmp_path / "history.jsonl")
    results = check_history(path, spark=None, spark_master="no Spark may start for this")
    assert (results["valid"], results["checkers"], results["unknown"]) == ("unknown", {}, [NOTHING_PROVEN])


def _unread_txn_send() -> HistoryBuilder:
    h = HistoryBuilder()
    h.txn(1, [send_mop("t0", 1, 3, 0)])
    return h


def _aborted_txn_poll() -> HistoryBuilder:
    h = HistoryBuilder()
    h.txn(1, [poll_mop("c1", [("t0", 0, 0, 7)])], type="fail")  # its reads happened, whatever its end
    return h


def _gaps_unread() -> HistoryBuilder:
    h = HistoryBuilder()
    h.assign(7, "c1", [("t0", 0)])
    h.txn(7, [poll_mop("c1", [("t0", 0, 0, 10), ("t0", 0, 2, 12)])])
    h.txn(7, [poll_mop("c1", [("t0", 0, 4, 14)])])
    return h


@pytest.fixture(scope="module")
def judged(check_together) -> dict[str, dict]:
    """The results of the histories below whose tests only read them, checked as one batch."""
    return check_together({"committed": _committed(), "unread-txn-send": _unread_txn_send(),
                           "aborted-txn-poll": _aborted_txn_poll(), "gaps-unread": _gaps_unread()})


def test_a_committed_txn_send_proves_something_and_is_judged(judged):
    results = judged["committed"]
    assert (results["valid"], results["unknown"], results["checkers"]["kafka"]["valid"]) == (True, [], True)


def test_a_committed_txn_send_without_a_final_read_is_not_judged_where_it_went(judged):
    results = judged["unread-txn-send"]
    assert (results["valid"], results["unknown"], results["checkers"]["kafka"]["not_judged"]) == (
        "unknown", [], {"lost-write": ["no final read of t0/3 which had acknowledged sends"]})


def test_records_polled_by_a_txn_prove_something(judged):
    results = judged["aborted-txn-poll"]
    assert (results["valid"], results["unknown"], results["checkers"]["kafka"]["not_judged"]) == (
        "unknown", [], {"poll-skip": ["no final read of t0/0 which was polled"]})


def test_a_gap_in_the_polls_of_a_partition_no_final_read_completed_is_not_called_a_skip(judged):
    """Read_committed, offset 1 may be an aborted record or a marker, and offset 3 too: only an
    ok final read can say whether polls going 0, 2, 4 skipped anything. A partition whose final
    reads all ended incomplete once had its every gap counted as a skip."""
    results = judged["gaps-unread"]
    kafka_result = results["checkers"]["kafka"]
    assert kafka_result["anomalies"] == [], kafka_result
    assert kafka_result["not_judged"] == {"poll-skip": ["no final read of t0/0 which was polled"]}


# -- positions across re-assigns, through txns' polls ------------------------------------------

def _across(seek: str | None, second: list[int], *, plain_second: bool = False) -> tuple[HistoryBuilder, int, int]:
    """A txn polls offsets 0 and 1 of t0/0, c1 is assigned t0/0 again (`seek`), then a txn (or a
    plain poll) polls `second`; the final read holds offsets 0 to 4."""
    h = HistoryBuilder()
    h.assign(7, "c1", [("t0", 0)])
    _, t1 = h.txn(7, [poll_mop("c1", [("t0", 0, 0, 10), ("t0", 0, 1, 11)])])
    h.assign(7, "c1", [("t0", 0)], seek=seek)
    records = [("t0", 0, o, 10 + o) for o in second]
    _, t2 = h.poll(7, "c1", records) if plain_second else h.txn(7, [poll_mop("c1", records)], type="fail")
    h.final_read(9, "t0", 0, [(o, 10 + o) for o in range(5)])
    return h, t1, t2


@pytest.mark.parametrize("plain_second", [False, True], ids=["txn-then-txn", "txn-then-poll"])
def test_a_skip_or_rewind_of_txn_polls_across_an_assign_that_keeps_the_partition_is_flagged(
        ops_of, found, plain_second):
    h, t1, t2 = _across(None, [4], plain_second=plain_second)
    assert [(r["evidence"], r["example"]["skipped"]) for r in found(_rows(ops_of(h), "poll-skip"))] == [([t1, t2], 2)]
    h, t1, t2 = _across(None, [0, 1, 2], plain_second=plain_second)
    assert [r["evidence"] for r in found(_rows(ops_of(h), "nonmonotonic-poll"))] == [[t1, t2]]


def test_a_skip_or_rewind_of_txn_polls_across_an_assign_that_seeks_is_allowed(ops_of, found):
    for second, anomaly in (([4], "poll-skip"), ([0, 1, 2], "nonmonotonic-poll")):
        h, _, _ = _across("beginning", second)
        assert (anomaly, found(_rows(ops_of(h), anomaly))) == (anomaly, [])


def test_polls_of_one_txn_and_of_the_next_run_on_without_an_anomaly(ops_of, found):
    h = HistoryBuilder()
    h.assign(7, "c1", [("t0", 0)])
    h.txn(7, [poll_mop("c1", [("t0", 0, 0, 10)]), poll_mop("c1", [("t0", 0, 1, 11)])])
    h.assign(7, "c1", [("t0", 0)], seek=None)
    h.txn(7, [poll_mop("c1", [("t0", 0, 2, 12)])])
    h.final_read(9, "t0", 0, [(o, 10 + o) for o in range(3)])
    names = ("poll-skip", "nonmonotonic-poll", "int-poll-skip", "int-nonmonotonic-poll")
    assert [r for r in found(kafka.kafka_findings(ops_of(h)).rows) if r["anomaly"] in names] == []


# -- several histories in one session, and their reports -------------------------------------

def _aborted_read() -> HistoryBuilder:
    h = HistoryBuilder()
    _, aborted = h.txn(1, [send_mop("t0", 1, 0, 0)], type="fail")
    h.txn(2, [send_mop("t0", 2, 0, 2)])
    h.final_read(9, "t0", 0, [(0, 1), (2, 2)])  # the aborted value is read
    return h


def test_txn_and_plain_histories_in_one_call_are_each_judged_on_their_own(spark, tmp_path, capsys):
    runs = {}
    for name, h in (("plain", None), ("txn-bad", _aborted_read()), ("txn-good", _committed()), ("plain2", None)):
        if h is None:
            h = HistoryBuilder()
            h.send(0, "t0", 1, offset=0)
            h.final_read(9, "t0", 0, [(0, 1)])
        runs[name] = tmp_path / "store" / name
        runs[name].mkdir(parents=True)
        h.write(runs[name] / "history.jsonl")
    assert main(["check", *(str(p) for p in runs.values())]) == 1
    results = {name: json.loads((p / "results.json").read_text()) for name, p in runs.items()}
    assert {name: (r["valid"], sorted(r["anomalies"])) for name, r in results.items()} == {
        "plain": (True, []), "txn-bad": (False, ["aborted-read"]), "txn-good": (True, []), "plain2": (True, [])}
    assert capsys.readouterr().out.splitlines()[-1] == "total: 4 histories: valid 3, invalid 1"


def test_a_txn_history_checked_elsewhere_gets_its_report(spark, tmp_path, capsys):
    path = _aborted_read().write(tmp_path / "h.jsonl")
    out = tmp_path / "out"
    assert main(["check", str(path), "--out", str(out)]) == 1
    capsys.readouterr()
    assert main(["report", str(out)]) == 0
    page = Path(capsys.readouterr().out.strip()).read_text()
    assert 'class="verdict invalid"' in page and 'href="#anomaly-aborted-read"' in page
