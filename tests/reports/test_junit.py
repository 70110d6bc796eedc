"""junit.xml: one test case per checker, failures carry the anomalies, unknown is skipped."""
from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET

from reports.junit import write_junit


def _suite(run):
    return ET.parse(write_junit(run)).getroot()


def test_one_testcase_per_checker(runs):
    names = [c.get("name") for c in _suite(runs["anomalous"]).iter("testcase")]
    assert names == ["kafka", "ordering"]


def test_invalid_checker_fails_with_its_own_anomalies(runs):
    cases = {c.get("name"): c for c in _suite(runs["anomalous"]).iter("testcase")}
    kafka = cases["kafka"].find("failure").get("message")
    ordering = cases["ordering"].find("failure").get("message")
    assert "lost-write x1" in kafka and "block-fork" not in kafka
    assert "block-fork x2" in ordering and "lost-write" not in ordering


def test_clean_run_has_no_failures(runs):
    suite = _suite(runs["clean"])
    assert suite.get("tests") == "2" and suite.get("failures") == "0"
    assert all(len(c) == 0 for c in suite.iter("testcase"))


def test_unknown_checker_verdict_is_skipped(tmp_path, runs):
    run = shutil.copytree(runs["clean"], tmp_path / "run")
    results = json.loads((run / "results.json").read_text())
    results["checkers"]["ordering"] = {"valid": "unknown"}
    (run / "results.json").write_text(json.dumps(results))
    suite = _suite(run)
    assert suite.get("skipped") == "1"
    assert [c.get("name") for c in suite.iter("testcase") if c.find("skipped") is not None] == ["ordering"]


def test_missing_results_is_one_erroring_case(runs):
    suite = _suite(runs["empty"])
    assert suite.get("errors") == "1" and suite.find("testcase/error") is not None


def test_suite_is_named_for_variant_and_scenario(runs):
    assert _suite(runs["anomalous"]).get("name") == "ordeal.unclean-election.partition-halves"


def test_unknown_checker_reasons_reach_the_skip_message(tmp_path, runs):
    run = shutil.copytree(runs["clean"], tmp_path / "run")
    results = json.loads((run / "results.json").read_text())
    results["checkers"]["kafka"] = {"valid": "unknown", "anomalies": [], "unknown": ["no final read of t0/1"]}
    (run / "results.json").write_text(json.dumps(results))
    skipped = _suite(run).find("testcase[@name='kafka']/skipped")
    assert "no final read of t0/1" in skipped.get("message")
