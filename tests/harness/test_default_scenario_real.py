"""The default scenario end to end on the real cluster: a short run leaves a complete store."""
from __future__ import annotations

import json

import pytest

# About 121 s of make test; `make run` and the smoke suite's runs cover the same path (2026-12-07).
pytestmark = [pytest.mark.cluster, pytest.mark.chaos, pytest.mark.nightly]


def test_default_scenario_runs_end_to_end_and_leaves_a_complete_store(run_scenario) -> None:
    result = run_scenario("default", duration=25)
    run_dir = result.run_dir
    for name in ("run.json", "scenario.json", "history.jsonl", "results.json", "report.html", "junit.xml"):
        assert (run_dir / name).is_file(), f"{name} missing from {run_dir}"
    assert sorted(p.name for p in (run_dir / "logs").glob("*.log"))  # node logs collected
    lines = [json.loads(line) for line in (run_dir / "history.jsonl").read_text().splitlines()]
    fs = {op["f"] for op in lines}
    assert {"send", "poll", "final-read"} <= fs
    assert any(op["process"] == "nemesis" for op in lines), "no fault was recorded"
    assert [op["index"] for op in lines] == list(range(len(lines)))
    results = json.loads((run_dir / "results.json").read_text())
    assert results["valid"] is True, results.get("anomalies")
    assert (run_dir.parent.parent / "latest").resolve() == run_dir.resolve()
