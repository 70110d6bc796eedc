"""The report of what the checker wrote: every anomaly checkers/verdict.py names, found by the
real checker in a small history that holds it, rendered by the real report writer, with its
row, its section and evidence links to ops the page shows (issue 41, item 5).

Every history is checked in one batch (checkers.check.check_histories, as `ordeal check
store/` checks a store's small runs: each judged as if alone), in the tests' one Spark
server (tests/conftest.py). Offline: no cluster, no Docker.
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from html_structure import parse_page

from checkers.registry import CHECKS
from tests.histories import HistoryBuilder, make_chain, poll_mop, send_mop
from checkers.verdict import UNKNOWN
from ground.run_files import RESULTS_JSON as RESULTS_FILE
from reports import history_digest
from reports.report import write_report
from reports.run_files import verdict_of

# Every anomaly the checker knows: a new one without a history below fails this module.
ANOMALIES = tuple(name for check in CHECKS.values() for name in check.anomalies)
CLEAN = "clean"


def _owner(anomaly: str) -> str:
    return next(name for name, check in CHECKS.items() if anomaly in check.anomalies)


def _finish(h: HistoryBuilder, logs: dict[tuple[str, int], list[tuple[int, Any]]]) -> None:
    """A heal, then a final read of each partition in `logs` ((offset, value) lists)."""
    h.nemesis("heal", {"healed": "all"})
    for (topic, partition), log in logs.items():
        h.final_read(9, topic, partition, log)


# -- Kafka, history format 1 ----------------------------------------------------------

def _lost_write(h: HistoryBuilder) -> None:
    """Two acknowledged sends; the final read lacks the second."""
    h.send(0, "t0", 1, offset=0)
    h.send(0, "t0", 2, offset=1)
    _finish(h, {("t0", 0): [(0, 1)]})


def _inconsistent_offsets(h: HistoryBuilder) -> None:
    """c1 polls value 3 at the offset where value 2 was acknowledged (and c2 and the final
    read hold it)."""
    h.send(0, "t0", 1, offset=0)
    h.send(0, "t0", 2, offset=1)
    h.poll(7, "c1", [("t0", 0, 0, 1), ("t0", 0, 1, 3)])
    h.poll(8, "c2", [("t0", 0, 0, 1), ("t0", 0, 1, 2)])
    _finish(h, {("t0", 0): [(0, 1), (1, 2)]})


def _duplicate(h: HistoryBuilder) -> None:
    """The final read holds value 2 at offsets 1 and 2."""
    h.send(0, "t0", 1, offset=0)
    h.send(0, "t0", 2, offset=1)
    _finish(h, {("t0", 0): [(0, 1), (1, 2), (2, 2)]})


def _realtime_order(h: HistoryBuilder) -> None:
    """A send invoked after another completed lands below it."""
    h.send(0, "t0", 1, offset=5)
    h.send(1, "t0", 2, offset=3)
    _finish(h, {("t0", 0): [(3, 2), (5, 1)]})


def _nonmonotonic_send(h: HistoryBuilder) -> None:
    """One process's later send lands below its earlier one. A process's sends are one after
    another, so a send landing strictly below its predecessor is a realtime-order too (ALSO)."""
    h.send(0, "t0", 1, offset=4)
    h.send(0, "t0", 2, offset=2)
    _finish(h, {("t0", 0): [(2, 2), (4, 1)]})


def _nonmonotonic_poll(h: HistoryBuilder) -> None:
    """A consumer's next poll starts again at an offset it already read, with no assign between."""
    h.assign(7, "c1", [("t0", 0)])
    h.poll(7, "c1", [("t0", 0, 0, 10), ("t0", 0, 1, 11)])
    h.poll(7, "c1", [("t0", 0, 1, 11), ("t0", 0, 2, 12)])
    _finish(h, {("t0", 0): [(0, 10), (1, 11), (2, 12)]})


def _poll_skip(h: HistoryBuilder) -> None:
    """A consumer's polls jump from offset 1 to 4 over offsets the final read holds."""
    h.assign(7, "c1", [("t0", 0)])
    h.poll(7, "c1", [("t0", 0, 0, 10), ("t0", 0, 1, 11)])
    h.poll(7, "c1", [("t0", 0, 4, 14)])
    _finish(h, {("t0", 0): [(o, 10 + o) for o in range(5)]})


def _aborted_read(h: HistoryBuilder) -> None:
    """A send that failed is polled."""
    h.send(0, "t0", 7, type="fail")
    h.poll(7, "c1", [("t0", 0, 0, 7)])
    _finish(h, {("t0", 0): [(0, 7)]})


def _unseen(h: HistoryBuilder) -> None:
    """An acknowledged value no poll of its (polled) partition returned; the final read holds it."""
    h.send(0, "t0", 1, offset=0)
    h.send(0, "t0", 2, offset=1)
    h.poll(7, "c1", [("t0", 0, 0, 1)])
    _finish(h, {("t0", 0): [(0, 1), (1, 2)]})


# -- consumer groups ------------------------------------------------------------------

def _group_start(h: HistoryBuilder, committed: int, start: int) -> None:
    """c1 subscribes, is assigned t0/0 from the beginning, reads 0-2 and commits `committed`;
    a rebalance hands t0/0 back at `start`, from where it reads on to 4."""
    h.subscribe(7, "c1", ["t0"])
    h.group_poll(7, "c1", [("t0", 0, o, 10 + o) for o in range(3)], assigned=[("t0", 0, None)])
    h.commit(7, "c1", [("t0", 0, committed)])
    h.group_poll(7, "c1", [("t0", 0, o, 10 + o) for o in range(start, 5)], revoked=[("t0", 0)],
                 assigned=[("t0", 0, start)])
    _finish(h, {("t0", 0): [(o, 10 + o) for o in range(5)]})


def _group_rewind(h: HistoryBuilder) -> None:
    """The group committed 3 and hands the partition back at 1."""
    _group_start(h, committed=3, start=1)


def _group_skip(h: HistoryBuilder) -> None:
    """The group committed 3 and hands the partition back at 4."""
    _group_start(h, committed=3, start=4)


def _unprocessed_input(h: HistoryBuilder) -> None:
    """An aborted txn polls 0-2; the consumer goes on, and the next txn polls 3-4 and commits 5."""
    h.subscribe(7, "c1", ["t0"])
    first = {"consumer": "c1", "records": [{"topic": "t0", "partition": 0, "offset": o, "value": o} for o in range(3)],
             "rebalances": [{"event": "assigned", "topic": "t0", "partition": 0, "position": None}]}
    h.txn(7, [("poll", first)], type="fail", error="aborted-on-purpose")
    second = {"consumer": "c1", "records": [{"topic": "t0", "partition": 0, "offset": o, "value": o} for o in (3, 4)]}
    commit = {"consumer": "c1", "offsets": [{"topic": "t0", "partition": 0, "offset": 5}]}
    h.txn(7, [("poll", second), ("commit", commit)])
    _finish(h, {("t0", 0): [(o, o) for o in range(5)]})


# -- Kafka transactions, history format 2 ---------------------------------------------

def _torn_txn(h: HistoryBuilder) -> None:
    """An indeterminate txn's send to t0/0 is in the final reads, its send to t0/1 is not."""
    h.txn(1, [send_mop("t0", 1, 0), send_mop("t0", 2, 1)], type="info")
    _finish(h, {("t0", 0): [(0, 1)], ("t0", 1): []})


def _precommitted_read(h: HistoryBuilder) -> None:
    """A txn polls its own send."""
    h.txn(1, [send_mop("t0", 7, 0, 0), poll_mop("c1", [("t0", 0, 0, 7)])])
    _finish(h, {("t0", 0): [(0, 7)]})


def _int_nonmonotonic_send(h: HistoryBuilder) -> None:
    """A txn's second send to t0/0 lands below its first."""
    h.txn(1, [send_mop("t0", 1, 0, 5), send_mop("t0", 2, 0, 3)])
    _finish(h, {("t0", 0): [(3, 2), (5, 1)]})


def _int_poll_skip(h: HistoryBuilder) -> None:
    """A txn's polls of t0/0 jump from offset 0 to 2 over offset 1, which the final read holds."""
    h.txn(1, [poll_mop("c1", [("t0", 0, 0, 10)]), poll_mop("c1", [("t0", 0, 2, 12)])])
    _finish(h, {("t0", 0): [(0, 10), (1, 11), (2, 12)]})


def _int_nonmonotonic_poll(h: HistoryBuilder) -> None:
    """A txn's second poll of t0/0 returns offset 0 again."""
    h.txn(1, [poll_mop("c1", [("t0", 0, 0, 10)]), poll_mop("c1", [("t0", 0, 0, 10)])])
    _finish(h, {("t0", 0): [(0, 10)]})


def _g0(h: HistoryBuilder) -> None:
    """Two concurrent txns, ordered T1 before T2 on t0/0 and T2 before T1 on t0/1 (concurrent:
    no realtime edge between them, so this is G0 alone)."""
    h.op(1, "invoke", "txn", [send_mop("t0", 1, 0), send_mop("t0", 4, 1)])
    h.op(2, "invoke", "txn", [send_mop("t0", 2, 0), send_mop("t0", 3, 1)])
    h.op(1, "ok", "txn", [send_mop("t0", 1, 0, 0), send_mop("t0", 4, 1, 1)])
    h.op(2, "ok", "txn", [send_mop("t0", 2, 0, 1), send_mop("t0", 3, 1, 0)])
    _finish(h, {("t0", 0): [(0, 1), (1, 2)], ("t0", 1): [(0, 3), (1, 4)]})


def _g1c(h: HistoryBuilder) -> None:
    """T2 reads T1's value on t0/0 while T1 is open, and its own send to t0/1 comes before
    T1's there: wr T1 -> T2, ww T2 -> T1 (concurrent: no realtime edge)."""
    h.op(1, "invoke", "txn", [send_mop("t0", 1, 0), send_mop("t0", 3, 1)])
    h.txn(2, [poll_mop("c2", [("t0", 0, 0, 1)]), send_mop("t0", 2, 1, 0)])
    h.op(1, "ok", "txn", [send_mop("t0", 1, 0, 0), send_mop("t0", 3, 1, 1)])
    _finish(h, {("t0", 0): [(0, 1)], ("t0", 1): [(0, 2), (1, 3)]})


def _g0_realtime(h: HistoryBuilder) -> None:
    """T2 commits value 2 at offset 1; T1, invoked after T2 completed, lands value 1 below it at
    offset 0: ww T1 -> T2 closed by realtime T2 -> T1."""
    h.txn(2, [send_mop("t0", 2, 0, 1)])
    h.txn(1, [send_mop("t0", 1, 0, 0)])
    _finish(h, {("t0", 0): [(0, 1), (1, 2)]})


def _g1c_realtime(h: HistoryBuilder) -> None:
    """T1 polls a value that T2, invoked after T1 completed, sends: wr T2 -> T1 closed by
    realtime T1 -> T2."""
    h.txn(1, [poll_mop("c1", [("t0", 0, 0, 5)])])
    h.txn(2, [send_mop("t0", 5, 0, 0)])
    _finish(h, {("t0", 0): [(0, 5)]})


# -- the ordering service ---------------------------------------------------------------

def _block_fork(h: HistoryBuilder) -> None:
    """Two OSNs' final delivers hold different blocks at number 1."""
    h.nemesis("heal", {"healed": "all"})
    h.deliver(9, "ch0", "osn1", make_chain([["tx-1"], ["tx-2"]]), final=True)
    h.deliver(9, "ch0", "osn2", make_chain([["tx-1"], ["tx-3"]]), final=True)


def _broken_chain(h: HistoryBuilder) -> None:
    """Block 2's previous_hash is not block 1's hash."""
    blocks = make_chain([["tx-1"], ["tx-2"], ["tx-3"]])
    blocks[2]["previous_hash"] = "00" * 32
    h.nemesis("heal", {"healed": "all"})
    h.deliver(9, "ch0", "osn1", blocks, final=True)


def _lost_tx(h: HistoryBuilder) -> None:
    """Broadcast answered SUCCESS for tx-3, which no block of the final deliver holds."""
    for tx in ("tx-1", "tx-2", "tx-3"):
        h.broadcast(1, "ch0", "osn1", tx)
    h.nemesis("heal", {"healed": "all"})
    h.deliver(9, "ch0", "osn1", make_chain([["tx-1", "tx-2"]]), final=True)


def _duplicate_tx(h: HistoryBuilder) -> None:
    """A tx this history broadcast is in two blocks of one OSN's chain."""
    h.broadcast(1, "ch0", "osn1", "tx-1", type="info")
    h.nemesis("heal", {"healed": "all"})
    h.deliver(9, "ch0", "osn1", make_chain([["tx-1", "tx-2"], ["tx-1"]]), final=True)


def _config_not_alone(h: HistoryBuilder) -> None:
    """An acknowledged config update cut into one block with a tx."""
    h.config_update(2, "ch0", "osn1", "cfg-1", version=2, max_message_count=7)
    h.broadcast(1, "ch0", "osn1", "tx-1")
    h.nemesis("heal", {"healed": "all"})
    h.deliver(9, "ch0", "osn1", make_chain([["cfg-1", "tx-1"]]), final=True)


def _batch_overflow(h: HistoryBuilder) -> None:
    """After a config block setting MaxMessageCount 2, a block of three txs."""
    h.config_update(2, "ch0", "osn1", "cfg-1", version=2, max_message_count=2)
    for tx in ("tx-1", "tx-2", "tx-3"):
        h.broadcast(1, "ch0", "osn1", tx)
    h.nemesis("heal", {"healed": "all"})
    h.deliver(9, "ch0", "osn1", make_chain([["cfg-1"], ["tx-1", "tx-2", "tx-3"]]), final=True)


def _lagging_osn(h: HistoryBuilder) -> None:
    """osn2's final deliver ends a block below osn1's."""
    h.nemesis("heal", {"healed": "all"})
    h.deliver(9, "ch0", "osn1", make_chain([["tx-1"], ["tx-2"]]), final=True)
    h.deliver(9, "ch0", "osn2", make_chain([["tx-1"]]), final=True)


# -- nodes ------------------------------------------------------------------------------

def _node_crash(h: HistoryBuilder) -> None:
    """osn1 exits by itself between two sends."""
    h.send(0, "t0", 1, offset=0)
    h.nemesis("crash", {"node": "osn1", "role": "osn", "exit_code": 2, "oom_killed": False,
                        "log_tail": ["panic: runtime error: invalid memory address or nil pointer dereference"]})
    h.send(0, "t0", 2, offset=1)
    _finish(h, {("t0", 0): [(0, 1), (1, 2)]})


# -- liveness ---------------------------------------------------------------------------

def _unavailable_partition(h: HistoryBuilder) -> None:
    """t0/0 read again after the heal; t0/1, to which nothing was acknowledged, never was."""
    h.send(0, "t0", 1, offset=0)
    _finish(h, {("t0", 0): [(0, 1)]})
    for _ in range(2):
        h.call(8, "final-read", {"topic": "t0", "partition": 1}, {"topic": "t0", "partition": 1},
               type="info", error="timeout")


def _halted_channel(h: HistoryBuilder) -> None:
    """osn1 delivers ch0 to its end; osn2's final deliver did not end and its chain refused a
    strict read."""
    h.send(0, "t0", 1, offset=0)
    _finish(h, {("t0", 0): [(0, 1)]})
    h.deliver(9, "ch0", "osn1", make_chain([["tx-1"]]), final=True)
    h.op(6, "invoke", "deliver", {"channel": "ch0", "osn": "osn2", "from": 0, "final": True})
    h.op(6, "info", "deliver", {"channel": "ch0", "osn": "osn2", "from": 0, "errored": True},
         error="SERVICE_UNAVAILABLE")


def _hang(h: HistoryBuilder) -> None:
    """An acknowledged send; after the heal no final read answers (so t0/0 is unavailable too)."""
    h.send(0, "t0", 1, offset=0)
    h.nemesis("heal", {"healed": "all"})
    for _ in range(2):
        h.call(8, "final-read", {"topic": "t0", "partition": 0}, {"topic": "t0", "partition": 0},
               type="info", error="timeout")


def _stalled_osn(h: HistoryBuilder) -> None:
    """ch0 on two OSNs: after the heal osn1's chain grows from 1 to 2 blocks, osn2 delivers
    nothing new (it stopped for good)."""
    chain = make_chain([["tx-1"], ["tx-2"]])
    h.send(0, "t0", 1, offset=0)
    for osn in ("osn1", "osn2"):
        h.deliver(9, "ch0", osn, chain[:1])
    _finish(h, {("t0", 0): [(0, 1)]})
    h.deliver(9, "ch0", "osn1", chain, final=True)
    h.deliver(9, "ch0", "osn2", chain[:1], final=True)


# -- no anomaly -------------------------------------------------------------------------

def _clean(h: HistoryBuilder) -> None:
    """Sends polled and finally read in order, broadcasts delivered alike by two OSNs."""
    h.assign(7, "c1", [("t0", 0)])
    h.send(0, "t0", 1, offset=0)
    h.send(0, "t0", 2, offset=1)
    h.poll(7, "c1", [("t0", 0, 0, 1), ("t0", 0, 1, 2)])
    for tx in ("tx-1", "tx-2"):
        h.broadcast(1, "ch0", "osn1", tx)
    _finish(h, {("t0", 0): [(0, 1), (1, 2)]})
    for osn in ("osn1", "osn2"):
        h.deliver(9, "ch0", osn, make_chain([["tx-1"], ["tx-2"]]), final=True)


HISTORIES: dict[str, Callable[[HistoryBuilder], None]] = {
    "lost-write": _lost_write, "inconsistent-offsets": _inconsistent_offsets, "duplicate": _duplicate,
    "realtime-order": _realtime_order, "nonmonotonic-poll": _nonmonotonic_poll, "poll-skip": _poll_skip,
    "nonmonotonic-send": _nonmonotonic_send, "aborted-read": _aborted_read, "unseen": _unseen,
    "group-rewind": _group_rewind, "group-skip": _group_skip, "unprocessed-input": _unprocessed_input,
    "torn-txn": _torn_txn, "precommitted-read": _precommitted_read, "int-nonmonotonic-send": _int_nonmonotonic_send,
    "int-poll-skip": _int_poll_skip, "int-nonmonotonic-poll": _int_nonmonotonic_poll,
    "G0": _g0, "G1c": _g1c, "G0-realtime": _g0_realtime, "G1c-realtime": _g1c_realtime,
    "block-fork": _block_fork, "broken-chain": _broken_chain, "lost-tx": _lost_tx, "duplicate-tx": _duplicate_tx,
    "lagging-osn": _lagging_osn, "config-not-alone": _config_not_alone, "batch-overflow": _batch_overflow,
    "node-crash": _node_crash,
    "unavailable-partition": _unavailable_partition, "halted-channel": _halted_channel, "hang": _hang,
    "stalled-osn": _stalled_osn,
    CLEAN: _clean,
}

# What a history flags beside the anomaly it is for, where one act is two anomalies at once.
# The int- poll anomalies are the kafka checker's poll anomalies within one txn, named again
# (checkers.txn.int_poll_orders).
ALSO: dict[str, set[str]] = {"nonmonotonic-send": {"realtime-order"}, "int-poll-skip": {"poll-skip"},
                             "int-nonmonotonic-poll": {"nonmonotonic-poll"}, "hang": {"unavailable-partition"}}
# The verdict of a history whose anomaly leaves other checks unable to judge: a halted chain
# and a hang leave what their final reads would have read unknown (no availability is
# promised here, so the liveness anomalies themselves are allowed).
# A stalled OSN where nothing is promised makes the verdict unknown by its own rule.
VERDICT: dict[str, Any] = {"halted-channel": UNKNOWN, "hang": UNKNOWN, "stalled-osn": UNKNOWN}


@pytest.fixture(scope="module")
def checked(check_together) -> dict[str, Path]:
    """Each history in a run directory of its own, all checked as one batch (tests/conftest.py's
    check_together, in the tests' Spark server); name -> run directory."""
    histories = {}
    for name, build in HISTORIES.items():
        histories[name] = h = HistoryBuilder()
        build(h)
    return {name: Path(results["history"]).parent for name, results in check_together(histories).items()}


@pytest.fixture(scope="module")
def pages(checked: dict[str, Path]) -> dict[str, str]:
    """The report.html of each checked run, written from the results.json the checker wrote."""
    return {name: write_report(run).read_text(encoding="utf-8") for name, run in checked.items()}


def _results(run: Path) -> dict[str, Any]:
    return json.loads((run / RESULTS_FILE).read_text())


def _ops(run: Path) -> dict[int, dict[str, Any]]:
    return {op["index"]: op for op in map(json.loads, (run / "history.jsonl").read_text().splitlines())}


def _role(anomaly: str) -> str:
    """What the anomaly does to a verdict, by ground/anomalies.py (no run here is idempotent
    or promised availability)."""
    from ground.anomalies import effect_on

    return effect_on(anomaly, idempotent=False, available=False)


def _verdict(anomaly: str) -> bool | str:
    if anomaly in VERDICT:
        return VERDICT[anomaly]
    role = _role(anomaly)
    return False if role == "fails" else (UNKNOWN if role == "unknown" else True)


def _section(html: str, anomaly: str) -> str:
    """The anomaly's details section: its heading up to the next heading."""
    return re.split(r"<h[23] ", html.split(f'<h3 id="anomaly-{anomaly}">', 1)[1], maxsplit=1)[0]


def _table_row(html: str, anomaly: str) -> str:
    """The anomaly's row of the anomaly table."""
    return html.split(f'<tr><td><a href="#anomaly-{anomaly}">{anomaly}</a></td>', 1)[1].split("</tr>", 1)[0]


def test_every_anomaly_the_checker_knows_has_a_history_here():
    assert set(HISTORIES) - {CLEAN} == set(ANOMALIES)


@pytest.mark.parametrize("anomaly", ANOMALIES)
def test_the_checker_flags_the_anomaly_its_history_holds_and_nothing_else(checked, anomaly):
    assert anomaly in HISTORIES, f"no history here holds {anomaly}: add one"
    results = _results(checked[anomaly])
    assert set(results["anomalies"]) == {anomaly} | ALSO.get(anomaly, set())
    found = results["anomalies"][anomaly]
    assert found["count"] >= 1 and found["examples"] and found["evidence"]
    assert set(found["evidence"]) <= set(_ops(checked[anomaly]))
    checker = results["checkers"][_owner(anomaly)]
    assert anomaly in checker["anomalies"] and checker["unknown"] == [] and results["unknown"] == []
    assert results["valid"] == _verdict(anomaly)


@pytest.mark.parametrize("anomaly", ANOMALIES)
def test_the_report_has_the_anomaly_row_and_section_with_its_count_and_effect(checked, pages, anomaly):
    assert anomaly in HISTORIES, f"no history here holds {anomaly}: add one"
    html, count = pages[anomaly], _results(checked[anomaly])["anomalies"][anomaly]["count"]
    assert parse_page(html).errors == []
    assert f'class="verdict {verdict_of(_verdict(anomaly))}"' in html
    assert f'<h3 id="anomaly-{anomaly}">{anomaly} × {count} <span class="role {_role(anomaly)}">' in html
    assert f'<td>{count}</td>\n      <td><span class="role {_role(anomaly)}">' in _table_row(html, anomaly)
    assert f'href="#anomaly-{anomaly}" title="{_role(anomaly)}">{anomaly} × {count}</a>' in html  # the banner's chip


@pytest.mark.parametrize("anomaly", ANOMALIES)
def test_the_report_links_each_evidence_op_to_its_row_showing_that_op(checked, pages, anomaly):
    assert anomaly in HISTORIES, f"no history here holds {anomaly}: add one"
    run, html = checked[anomaly], pages[anomaly]
    evidence = _results(run)["anomalies"][anomaly]["evidence"][: history_digest.EVIDENCE_SHOWN]
    ops, page = _ops(run), parse_page(html)
    section, row = _section(html, anomaly), _table_row(html, anomaly)
    assert {f"#{t}" for t in page.ids} >= {h for h in page.hrefs if h.startswith("#")}  # no dangling link
    for i in evidence:
        assert f'<a href="#op-{i}">#{i}</a>' in section
        assert page.ids.count(f"op-{i}") == 1
        shown = html.split(f'<tr id="op-{i}">', 1)[1].split("</tr>", 1)[0]
        op = ops[i]
        assert f'<td class="{op["type"]}">{op["type"]}</td><td>{op["f"]}</td>' in shown, (i, shown)
        assert f'href="#anomaly-{anomaly}"' in shown and "not in the history" not in shown
    assert all(f'<a href="#op-{i}">#{i}</a>' in row for i in evidence[:4])


def test_a_clean_history_reports_valid_with_no_anomaly(checked, pages):
    results, html = _results(checked[CLEAN]), pages[CLEAN]
    assert (results["valid"], results["anomalies"], results["unknown"]) == (True, {}, [])
    assert sorted(results["checkers"]) == ["kafka", "liveness", "ordering"]
    page = parse_page(html)
    assert page.errors == [] and 'class="verdict valid"' in html
    assert "No lost, reordered or forked data under these faults." in html and "<p>None found.</p>" in html
    assert "<p>No evidence ops.</p>" in html and not [i for i in page.ids if i.startswith("anomaly-")]
    assert not [h for h in page.hrefs if h.startswith(("#anomaly-", "#op-"))]
