"""The streaming digest: counts, caps, heights, forks and offset views from a history alone."""
from __future__ import annotations

import json

import pytest
from run_builder import HistoryBuilder, write_run

from reports import history_digest
from reports.history_digest import digest_history, focus_of


def _digest(tmp_path, h: HistoryBuilder, **kw):
    run = write_run(tmp_path / "run", h.ops, run=None)
    return digest_history(run / "history.jsonl", **kw)


def test_availability_is_ok_writes_over_attempted_writes(tmp_path):
    h = HistoryBuilder()
    h.call(0, "send", {"topic": "t0", "value": 1}, result={"topic": "t0", "value": 1, "partition": 0, "offset": 0})
    h.call(1, "send", {"topic": "t0", "value": 2}, outcome="fail", error="not-enough-replicas")
    h.call(2, "broadcast", {"channel": "ch0", "osn": "osn1", "tx": "tx-1"}, outcome="info", error="timeout")
    h.call(3, "broadcast", {"channel": "ch0", "osn": "osn1", "tx": "tx-2"})
    d = _digest(tmp_path, h)
    assert (d.writes_ok, d.writes_attempted) == (2, 4)


def test_latency_points_are_capped_per_outcome(tmp_path, monkeypatch):
    monkeypatch.setattr(history_digest, "LATENCY_POINTS_CAP", 50)
    h = HistoryBuilder()
    for n in range(500):
        h.call(n % 3, "send", {"topic": "t0", "value": n})
    d = _digest(tmp_path, h)
    assert len(d.latency["ok"].items) <= 50 and d.latency["ok"].seen == 500


def test_block_height_per_osn_is_highest_block_plus_one(tmp_path):
    h = HistoryBuilder()
    for osn, top in (("osn1", 4), ("osn2", 2)):
        blocks = [{"number": n, "hash": f"{n:02x}"} for n in range(top + 1)]
        h.call(9, "deliver", {"channel": "ch0", "osn": osn, "from": 0},
               result={"channel": "ch0", "osn": osn, "blocks": blocks})
    d = _digest(tmp_path, h)
    assert d.heights[("osn1", "ch0")].items[-1][1] == 5 and d.heights[("osn2", "ch0")].items[-1][1] == 3


def test_forks_are_heights_where_osns_hold_different_hashes(tmp_path):
    h = HistoryBuilder()
    for osn, tip in (("osn1", "aa"), ("osn2", "bb")):
        blocks = [{"number": 0, "hash": "00"}, {"number": 1, "hash": tip}]
        h.call(9, "deliver", {"channel": "ch0", "osn": osn}, result={"channel": "ch0", "osn": osn, "blocks": blocks})
    assert _digest(tmp_path, h).forks == [("ch0", 1, {"osn1": "aa", "osn2": "bb"})]


def test_offset_view_finds_offsets_of_an_example_value(tmp_path):
    h = HistoryBuilder()
    for o, v in enumerate([10, 11, 12, 11]):
        h.call(0, "send", {"topic": "t0", "value": v}, result={"topic": "t0", "value": v, "partition": 0, "offset": o})
    focus = focus_of([{"topic": "t0", "partition": 0, "value": 11}])
    view = _digest(tmp_path, h, focus=focus).offset_views[("t0", 0)]
    assert view.focus == {1, 3} and view.rows[3]["acked send"] == {11: 7}


def test_nemesis_ops_become_fault_intervals_not_client_ops(tmp_path):
    h = HistoryBuilder()
    h.nemesis("partition", {"components": [["kafka1"], ["kafka2"]]})
    h.nemesis("heal", {})
    d = _digest(tmp_path, h)
    assert len(d.faults.intervals) == 1 and d.processes == set() and {"kafka1", "kafka2"} <= d.nodes_seen


@pytest.mark.parametrize("line", [
    {"index": 0},
    {"index": 0, "time": 5, "process": 1, "type": "ok", "f": "poll", "value": None},
    {"index": 0, "time": 5, "process": 1, "type": "ok", "f": "deliver", "value": {"blocks": [None, {"number": "x"}]}},
    {"index": 0, "time": 5, "process": "nemesis", "type": "info", "f": "partition", "value": {"cut": [["a"], 3]}},
    {"index": 0, "time": "soon", "process": "nemesis", "type": "info", "f": "kill", "value": None},
    {"index": 0, "time": 1.5e9, "process": 2, "type": "invoke", "f": "send", "value": {}},
    [1, 2, 3],
])
def test_odd_lines_are_tolerated(tmp_path, line):
    path = tmp_path / "history.jsonl"
    path.write_text(json.dumps(line) + "\n")
    assert digest_history(path).ops in (0, 1)
