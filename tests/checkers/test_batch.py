"""Histories checked as one batch are judged each as if alone (checkers.check.check_histories).

Every history here uses the same topics, partitions, consumers, processes, channels, OSNs
and indices as the others, so that a check that forgot to key by the history
(checkers.ingest.history.HISTORY) would mix them: a value of one read at another's offset, one's
polls following another's, one's chain forking from another's.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from checkers.check import check_histories, check_history
from ground.history_file import HistoryError
from checkers.sample_histories import generate_history, generate_txn_history
from tests.histories import HistoryBuilder, make_chain, poll_mop, send_mop


def _lost() -> HistoryBuilder:
    """A lost write, an info send seen after all, a partition polled but never finally read."""
    h = HistoryBuilder()
    h.assign(7, "c1", [("t0", 0), ("t0", 1)])
    h.send(0, "t0", 1, offset=0)
    h.send(0, "t0", 2, offset=1)
    h.send(1, "t0", 3, type="info")
    h.send(1, "t0", 4, partition=1, offset=0)
    h.poll(7, "c1", [("t0", 0, 0, 1), ("t0", 0, 1, 2), ("t0", 0, 2, 3), ("t0", 1, 0, 4)])
    h.nemesis("heal", {"healed": "all"})
    h.final_read(9, "t0", 0, [(0, 1), (2, 3)])
    return h


def _clean() -> HistoryBuilder:
    """The same topic and offsets as `_lost`, other values, nothing wrong."""
    h = HistoryBuilder()
    h.assign(7, "c1", [("t0", 0)])
    h.send(0, "t0", 11, offset=0)
    h.send(0, "t0", 12, offset=1)
    h.poll(7, "c1", [("t0", 0, 0, 11), ("t0", 0, 1, 12)])
    h.final_read(9, "t0", 0, [(0, 11), (1, 12)])
    return h


def _positions() -> HistoryBuilder:
    """A skip and a rewind across an assign that keeps the partition; an aborted read; a
    value at two offsets; realtime and per-process send order broken."""
    h = HistoryBuilder()
    h.assign(7, "c1", [("t0", 0)])
    h.send(0, "t0", 21, offset=0)
    h.send(0, "t0", 22, offset=3)
    h.send(0, "t0", 23, offset=1)
    h.send(1, "t0", 24, type="fail")
    h.send(0, "t0", 25, offset=2)
    h.poll(7, "c1", [("t0", 0, 0, 21)])
    h.assign(7, "c1", [("t0", 0)], seek=None)
    h.poll(7, "c1", [("t0", 0, 2, 25), ("t0", 0, 3, 22)])
    h.poll(7, "c1", [("t0", 0, 1, 23), ("t0", 0, 4, 24), ("t0", 0, 5, 21)])
    h.final_read(9, "t0", 0, [(0, 21), (1, 23), (2, 25), (3, 22), (4, 24), (5, 21)])
    return h


def _covered_skip() -> HistoryBuilder:
    """A skip across an assign that keeps the partition (an anomaly); `_seeking`'s assign of
    the same consumer has its invoke between the two polls, and would hide it if the
    histories were mixed (the skip then looks reset by a seek)."""
    h = HistoryBuilder()
    h.assign(7, "c1", [("t0", 0)])
    for offset, value in enumerate((61, 62, 63, 64)):
        h.send(0, "t0", value, offset=offset)
    h.poll(7, "c1", [("t0", 0, 0, 61)])  # ends at index 11
    h.assign(7, "c1", [("t0", 0)], seek=None)  # 12, 13
    h.poll(7, "c1", [("t0", 0, 2, 63)])  # 14, 15: skips offset 1
    h.final_read(9, "t0", 0, [(0, 61), (1, 62), (2, 63), (3, 64)])
    return h


def _seeking() -> HistoryBuilder:
    """The same consumer re-reads from the beginning after an assign that seeks there, invoked
    at index 13: allowed."""
    h = HistoryBuilder()
    for offset, value in enumerate((71, 72, 73)):
        h.send(0, "t0", value, offset=offset)
    h.poll(7, "c1", [("t0", 0, 0, 71)])  # 6, 7
    h.send(0, "t0", 74, offset=3)
    h.send(0, "t0", 75, offset=4)
    h.nemesis("heal", {"healed": "all"})  # 12
    h.assign(7, "c1", [("t0", 0)], seek="beginning")  # 13, 14
    h.poll(7, "c1", [("t0", 0, 0, 71), ("t0", 0, 1, 72)])
    h.final_read(9, "t0", 0, [(0, 71), (1, 72), (2, 73), (3, 74), (4, 75)])
    return h


def _ordering(fork: bool) -> HistoryBuilder:
    """Broadcasts and final delivers from two OSNs; with `fork`, they hold different blocks
    and one lags."""
    h = HistoryBuilder()
    for tx in ("tx-1", "tx-2"):
        h.broadcast(1, "ch0", "osn1", tx)
    h.nemesis("heal", {"healed": "all"})
    h.deliver(9, "ch0", "osn1", make_chain([["tx-1"], ["tx-2"]]))
    h.deliver(9, "ch0", "osn2", make_chain([["tx-2"]]) if fork else make_chain([["tx-1"], ["tx-2"]]))
    return h


def _marked_final() -> HistoryBuilder:
    """Final delivers marked on their invokes; osn1's completes two indices after its invoke,
    and `_unmarked`'s deliver by the same process is invoked between them: a check that paired
    a process's delivers across histories would take that one for osn1's invoke, and lose
    osn1's final deliver here."""
    h = HistoryBuilder()
    for tx in ("tx-1", "tx-2"):
        h.broadcast(1, "ch0", "osn1", tx)
    h.nemesis("heal", {"healed": "all"})  # 4
    h.deliver(9, "ch0", "osn2", make_chain([["tx-1"], ["tx-2"]]), final=True)  # 5, 6
    asked = {"channel": "ch0", "osn": "osn1", "from": 0}
    h.op(9, "invoke", "deliver", dict(asked, final=True))  # 7
    h.nemesis("info", {"note": "between a deliver's invoke and its completion"})  # 8
    h.op(9, "ok", "deliver", dict(asked, blocks=make_chain([["tx-1"], ["tx-2"]])))  # 9
    return h


def _unmarked() -> HistoryBuilder:
    """No marks (final delivers are those invoked after the last heal); its one deliver is
    invoked at index 8, between `_marked_final`'s invoke and completion of osn1's."""
    h = HistoryBuilder()
    for tx in ("tx-1", "tx-2"):
        h.broadcast(1, "ch0", "osn1", tx)
    h.nemesis("heal", {"healed": "all"})  # 4
    for _ in range(3):
        h.nemesis("info", {"note": "padding"})  # 5, 6, 7
    asked = {"channel": "ch0", "osn": "osn1", "from": 0}
    h.op(9, "invoke", "deliver", asked)  # 8
    h.nemesis("info", {"note": "padding"})  # 9
    h.op(9, "ok", "deliver", dict(asked, blocks=make_chain([["tx-1"], ["tx-2"]])))  # 10
    return h


def _interrupted() -> HistoryBuilder:
    """SUCCESS broadcasts, no final deliver: lost-tx and lagging-osn not judged."""
    h = HistoryBuilder()
    h.broadcast(1, "ch0", "osn1", "tx-1")
    h.deliver(9, "ch0", "osn1", make_chain([["tx-1"]]))
    return h


def _crash() -> HistoryBuilder:
    h = HistoryBuilder()
    h.send(0, "t0", 31, offset=0)
    h.op("nemesis", "info", "crash", {"node": "osn1", "role": "osn", "exit_code": 2, "oom_killed": False,
                                      "log_tail": ["panic"]})
    h.final_read(9, "t0", 0, [(0, 31)])
    return h


def _txns() -> HistoryBuilder:
    """A torn txn, an aborted txn read, a txn reading its own send, a ww/wr cycle."""
    h = HistoryBuilder()
    h.txn(1, [send_mop("t0", 41, 0, 0), send_mop("t0", 42, 1, 0)])
    h.txn(2, [send_mop("t0", 43, 0, 1)], type="fail")
    h.txn(3, [send_mop("t0", 44, 0, 2), poll_mop("c1", [("t0", 0, 2, 44), ("t0", 0, 1, 43)])])
    h.txn(4, [send_mop("t0", 45, 1, 1), poll_mop("c2", [("t0", 0, 2, 44)])])
    h.txn(5, [send_mop("t0", 46, 0, 3), poll_mop("c3", [("t0", 1, 1, 45)])])
    h.final_read(9, "t0", 0, [(0, 41), (1, 43), (2, 44), (3, 46)])
    h.final_read(9, "t0", 1, [(1, 45)])
    return h


def _nothing() -> HistoryBuilder:
    """Nemesis ops and a failed send only: proves nothing."""
    h = HistoryBuilder()
    h.nemesis("kill", {"nodes": ["kafka1"]})
    h.send(0, "t0", 51, type="fail")
    return h


HAND_MADE = {"lost": _lost, "clean": _clean, "positions": _positions, "covered-skip": _covered_skip,
             "seeking": _seeking, "ordering": lambda: _ordering(False),
             "fork": lambda: _ordering(True), "marked-final": _marked_final, "unmarked": _unmarked,
             "interrupted": _interrupted, "crash": _crash, "txns": _txns,
             "nothing": _nothing}


@pytest.fixture(scope="module")
def histories(tmp_path_factory) -> list[Path]:
    """The hand-made histories, and generated ones of both formats, each in its run directory."""
    root = tmp_path_factory.mktemp("batch")
    paths = []
    for name, build in HAND_MADE.items():
        (root / name).mkdir()
        paths.append(build().write(root / name / "history.jsonl"))
    for name, generate in (("generated", generate_history), ("generated-txn", generate_txn_history)):
        (root / name).mkdir()
        generate(root / name / "history.jsonl", 600, seed=3)
        paths.append(root / name / "history.jsonl")
    return paths


NAMES = [*HAND_MADE, "generated", "generated-txn"]
VALID = dict(zip(NAMES, [False, True, False, False, True, True, False, True, True, "unknown", False, False, "unknown",
                         True, True]))


@pytest.fixture(scope="module")
def batched(spark, histories) -> list[dict]:
    """Every history's results, checked as one batch."""
    return check_histories(histories, spark=spark)


@pytest.mark.parametrize("name", NAMES)
def test_each_history_of_a_batch_is_judged_as_if_alone(spark, histories, batched, name):
    """One test per history (they spread over the offline tier's workers: each check alone
    costs seconds)."""
    n = NAMES.index(name)
    alone = check_history(histories[n], spark=spark)
    assert alone["valid"] == VALID[name]
    if name == "covered-skip":
        assert alone["anomalies"]["poll-skip"]["evidence"] == [11, 15]
    assert batched[n] == alone


def test_a_batch_in_another_order_judges_each_the_same(spark, histories, batched):
    backward = check_histories(list(reversed(histories)), spark=spark)
    for path, forward, again in zip(histories, batched, reversed(backward)):
        assert again == forward, path.parent.name


def test_a_history_that_cannot_be_read_is_told_and_the_others_are_checked(spark, histories, tmp_path):
    bad = tmp_path / "history.jsonl"
    bad.write_text('{"index": 0, "process": 0, "type": "ok"}\n{"index": 1}\n')
    first, broken, last = check_histories([histories[0], bad, histories[1]], spark=spark)
    assert isinstance(broken, HistoryError) and "line 1" in str(broken)
    assert (first["valid"], last["valid"]) == (False, True)
