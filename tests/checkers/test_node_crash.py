"""node-crash: a node that exited while no fault had stopped it (a `crash` nemesis op) is an
anomaly that makes the verdict invalid; a nemesis kill and restart is not."""
from __future__ import annotations

from pathlib import Path

import pytest

from checkers.check import check_history
from checkers.nodes import node_crashes
from tests.histories import HistoryBuilder
from reports.fault_intervals import FaultTracker
from reports.report import build_context, write_report

LOG_TAIL = ["2024-01-01 12:00:00 [INFO] chain started",
            "panic: runtime error: invalid memory address or nil pointer dereference",
            "[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x4b7f2a]"]


def _run(crash: bool) -> tuple[HistoryBuilder, int | None]:
    """Sends, a nemesis kill of kafka2 and its restart, and (`crash`) osn1 crashing by itself."""
    h = HistoryBuilder()
    h.send(0, "t0", 1, offset=0)
    h.nemesis("kill", {"fault": "kill-broker", "nodes": ["kafka2"]})
    h.send(0, "t0", 2, offset=1)
    crashed = None
    if crash:
        crashed = h.op("nemesis", "info", "crash", {"node": "osn1", "role": "osn", "exit_code": 2,
                                                    "oom_killed": False, "log_tail": LOG_TAIL})
    h.nemesis("start", {"fault": "kill-broker", "nodes": ["kafka2"]})
    h.send(1, "t0", 3, offset=2)
    h.nemesis("heal", {"all": True, "faults": ["kill-broker"]})
    h.final_read(9, "t0", 0, [(0, 1), (1, 2), (2, 3)])
    return h, crashed


def test_a_crash_op_is_one_node_crash_with_its_index_node_exit_code_and_log(ops_of, found):
    h, crashed = _run(crash=True)
    rows = found(node_crashes(ops_of(h).ops))
    assert rows == [{"anomaly": "node-crash", "evidence": [crashed],
                     "example": {"node": "osn1", "role": "osn", "exit_code": 2, "oom_killed": False,
                                 "log_tail": LOG_TAIL}}]


def test_a_nemesis_kill_and_restart_is_no_node_crash(ops_of, found):
    h, _ = _run(crash=False)
    assert found(node_crashes(ops_of(h).ops)) == []


def test_each_crash_is_its_own_anomaly(ops_of, found):
    h = HistoryBuilder()
    first = h.nemesis("crash", {"node": "kafka3", "role": "kafka", "exit_code": 1, "oom_killed": False,
                                "log_tail": []})
    h.nemesis("start", {"fault": "kill-broker", "nodes": ["kafka3"]})
    second = h.nemesis("crash", {"node": "kafka3", "role": "kafka", "exit_code": 137, "oom_killed": True,
                                 "log_tail": ["java.lang.OutOfMemoryError: Java heap space"]})
    rows = found(node_crashes(ops_of(h).ops))
    assert [(r["evidence"], r["example"]["exit_code"], r["example"]["oom_killed"]) for r in rows] == [
        ([first], 1, False), ([second], 137, True)]


@pytest.fixture(scope="module")
def judged(check_together) -> dict[str, dict]:
    """The run with osn1's crash and its clean twin, checked as one batch."""
    return check_together({"crash": _run(crash=True)[0], "clean": _run(crash=False)[0]})


def test_a_crash_makes_the_verdict_invalid_through_the_parquet_copy(spark, judged):
    _, crashed = _run(crash=True)
    results = judged["crash"]
    crash = results["anomalies"]["node-crash"]
    assert (results["valid"], results["checkers"]["nodes"]["valid"], results["checkers"]["kafka"]["valid"]) == (
        False, False, True)
    assert (crash["count"], crash["evidence"], crash["examples"][0]["log_tail"]) == (1, [crashed], LOG_TAIL)
    assert results["stats"]["by_f"]["crash"] == {"info": 1}
    # A re-check reads the Parquet copy back with the same fields.
    assert check_history(Path(results["history"]).parent, spark=spark)["anomalies"] == results["anomalies"]


def test_the_clean_twin_is_valid_without_a_nodes_checker(judged):
    results = judged["clean"]
    assert (results["valid"], results["anomalies"], list(results["checkers"])) == (True, {}, ["kafka", "liveness"])


def test_the_report_names_the_crashed_node_and_shows_its_log(judged):
    _, crashed = _run(crash=True)
    run = Path(judged["crash"]["history"]).parent
    ctx = build_context(run)
    assert ctx.verdict == "invalid"
    assert ctx.headline == "A node crashed while no fault had stopped it: osn1 (exit code 2)."
    (section,) = ctx.sections
    assert (section.anomaly.name, section.role, section.evidence, "log_tail" in section.columns) == (
        "node-crash", "fails", [crashed], False)
    html = write_report(run).read_text(encoding="utf-8")
    assert "nil pointer dereference" in html and f'href="#op-{crashed}"' in html
    assert "1 faults injected" in html  # the kill; the crash is shown but was not injected


def test_a_crash_is_a_fault_interval_closed_by_the_nodes_start():
    h = HistoryBuilder()
    crashed = h.nemesis("crash", {"node": "osn1", "role": "osn", "exit_code": 2, "oom_killed": False,
                                  "log_tail": []})
    h.nemesis("start", {"fault": "kill-osn", "nodes": ["osn1"]})
    tracker = FaultTracker()
    for op in h.ops:
        tracker.feed(op)
    (iv,) = tracker.intervals
    assert (iv.kind, iv.index, iv.nodes, iv.end, iv.label, tracker.injected) == (
        "crash", crashed, ["osn1"], h.ops[-1]["time"], "crash osn1 (exit 2)", [])
