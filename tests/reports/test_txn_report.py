"""A transactional run's report: torn transactions fail and are counted, cycles are shown as allowed."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import run_builder  # noqa: E402

from reports.report import write_report  # noqa: E402


def _txn_run(path: Path) -> str:
    h = run_builder.HistoryBuilder()
    invoke = [["send", {"topic": "t0", "key": "k0", "value": 1, "partition": 0}],
              ["send", {"topic": "t0", "key": "k1", "value": 2, "partition": 1}]]
    done = [["send", {"topic": "t0", "key": "k0", "value": 1, "partition": 0, "offset": 0}],
            ["send", {"topic": "t0", "key": "k1", "value": 2, "partition": 1, "offset": 0}]]
    _, txn = h.call(1, "txn", invoke, result=done)
    h.nemesis("heal", {"all": True})
    _, final = h.call(9, "final-read", {"topic": "t0", "partition": 0},
                      result={"topic": "t0", "partition": 0, "records": [
                          {"topic": "t0", "partition": 0, "offset": 0, "value": 1}]})
    results = {"valid": False, "checkers": {"kafka": {"valid": False, "anomalies": ["G0", "torn-txn"]}},
               "anomalies": {
                   "torn-txn": {"count": 1, "evidence": [txn, final], "examples": [
                       {"txn": txn, "visible": [{"topic": "t0", "partition": 0, "value": 1}],
                        "missing": [{"topic": "t0", "partition": 1, "value": 2}]}]},
                   "G0": {"count": 1, "evidence": [txn], "examples": [{"cycle": [txn, txn], "edges": ["ww t0/0"]}]}}}
    run_builder.write_run(path, h.ops, results=results)
    return write_report(path).read_text(encoding="utf-8")


def test_torn_txn_fails_and_is_counted_while_a_cycle_is_allowed(tmp_path):
    html = _txn_run(tmp_path / "run")
    torn = html.split('href="#anomaly-torn-txn">')[1].split("</tr>")[0]
    cycle = html.split('href="#anomaly-G0">')[1].split("</tr>")[0]
    assert 'class="role fails"' in torn and 'class="role allowed"' in cycle
    assert '<div class="n">1</div><div class="k">torn / precommitted txns</div>' in html
    assert "some but not all sends of a committed or indeterminate txn" in html
