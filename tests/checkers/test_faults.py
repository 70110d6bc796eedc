"""Whether a run's faults happened (checkers.faults): read from the history's nemesis ops,
judged beside the anomalies. No Spark."""
from __future__ import annotations

import json

from checkers.faults import fault_outcomes, history_fault_outcomes, nemesis_ops
from ground.fault_outcome import faults_missed


def nem(index, f, outcome=None, fault="kill-broker", error=None, **value):
    op = {"index": index, "time": index * 1000, "process": "nemesis", "type": "info", "f": f,
          "value": {"fault": fault, **value}, "fault": fault}
    if outcome is not None:
        op["outcome"] = outcome
    if error is not None:
        op["error"] = error
    return op


def write(tmp_path, ops):
    path = tmp_path / "history.jsonl"
    path.write_text("".join(json.dumps(op) + "\n" for op in ops))
    return path


def test_nemesis_ops_are_found_among_client_ops_and_only_they(tmp_path):
    client = {"index": 0, "process": 0, "type": "invoke", "f": "send", "value": {"topic": "nemesis", "value": 1}}
    ops = [client, nem(1, "kill", "took-effect"), {**client, "index": 2}, nem(3, "start", "undone")]
    path = write(tmp_path, ops)
    assert [op["index"] for op in nemesis_ops(path)] == [1, 3]


def test_an_empty_history_has_no_nemesis_ops(tmp_path):
    assert nemesis_ops(write(tmp_path, [])) == []


def test_outcomes_are_counted_per_fault_with_the_failures_named():
    ops = [nem(1, "kill", "took-effect"), nem(2, "start", "undone"),
           nem(3, "start", "failed", error="NamespaceError: pid 7: iptables: exit 1"),
           nem(4, "start", "no-target", fault="kill-leader", error="NoTarget: t0/1 has no leader"),
           nem(5, "heal", None, fault=None, all=True)]
    found = fault_outcomes(ops)
    assert found["recorded"] is True and found["took_effect"] is True
    assert found["by_fault"]["kill-broker"] == {"starts": 2, "took-effect": 1, "failed": 1, "no-target": 0,
                                                "undone": 1, "undo-failed": 0}
    assert found["by_fault"]["kill-leader"]["starts"] == 1 and found["by_fault"]["kill-leader"]["took-effect"] == 0
    assert [(f["index"], f["outcome"]) for f in found["failures"]] == [(3, "failed"), (4, "no-target")]
    assert found["failures"][0]["error"].startswith("NamespaceError")


def test_no_start_that_took_effect_is_took_effect_false():
    found = fault_outcomes([nem(1, "start", "failed", error="RuntimeError: x"), nem(2, "stop", "undo-failed")])
    assert found["took_effect"] is False and found["more_failures"] == 0 and len(found["failures"]) == 2


def test_a_history_without_outcomes_says_nothing_either_way(tmp_path):
    found = history_fault_outcomes(write(tmp_path, [nem(1, "kill"), nem(2, "start")]))
    assert found["recorded"] is False and found["took_effect"] is None and found["by_fault"] == {}


def test_failures_beyond_the_first_twenty_are_counted_not_listed():
    found = fault_outcomes([nem(i, "start", "failed", error="e") for i in range(25)])
    assert len(found["failures"]) == 20 and found["more_failures"] == 5


def test_faults_missed_when_none_took_effect_or_none_started():
    failed = fault_outcomes([nem(1, "start", "failed", error="RuntimeError: boom")])
    assert "no fault took effect" in faults_missed(["kill-broker"], False, failed)
    assert "RuntimeError: boom" in faults_missed(["kill-broker"], False, failed)
    assert faults_missed(["kill-broker"], False, fault_outcomes([])) == "no fault was started"
    assert faults_missed(["kill-broker"], False, {}) == "no fault outcome recorded"
    assert faults_missed(["kill-broker"], False, fault_outcomes([nem(1, "kill", "took-effect")])) is None
    assert faults_missed([], False, failed) is None  # a scenario without faults asks for none


def test_no_target_is_excused_only_where_the_scenario_allows_it_and_never_a_failure():
    none_found = fault_outcomes([nem(1, "start", "no-target", error="NoTarget: no leader")])
    assert faults_missed(["kill-leader"], True, none_found) is None
    assert "no-target" in faults_missed(["kill-leader"], False, none_found)
    mixed = fault_outcomes([nem(1, "start", "no-target", error="NoTarget: x"), nem(2, "start", "failed", error="y")])
    assert "no fault took effect" in faults_missed(["kill-leader"], True, mixed)
