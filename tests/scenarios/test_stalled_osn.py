"""An orderer that never comes back is a finding with its cause (issue: a restarted orderer
asked Kafka for records retention had already deleted, and answered SERVICE_UNAVAILABLE to
the end). A scenario of one's own, the ordering workload alone under kill-osn, is judged by
its fault kind: on a variant whose Kafka deletes channel records within seconds it ends
invalid with stalled-osn (kill-osn promises availability), the evidence showing the OSN's
start offset below its partition's log start; on fabric-recommended it is valid.

Two runs of a few minutes, each on a cluster of its own: in the nightly job (`pytest -m nightly`)."""
from __future__ import annotations

from pathlib import Path

import pytest

from reports.osn_evidence import stalled_causes
from reports.run_files import load_run

pytestmark = [pytest.mark.cluster, pytest.mark.chaos, pytest.mark.nightly]

ROOT = Path(__file__).resolve().parents[2]

MINE = {
    "name": "osn-restart-ordering",
    "concurrency": 4, "rate": 40, "duration": 60, "recovery_wait": 20, "final_read_time_limit": 60,
    "op_timeout": 10, "seed": 57,
    "workloads": [{"name": "ordering"}],
    "nemesis": {"faults": ["kill-osn"], "interval": 10},
}


def short_retention(tmp_path: Path) -> Path:
    """fabric-recommended whose brokers roll a segment every 2 s and delete what is older than
    5 s: a killed orderer's records are gone before it comes back."""
    text = (ROOT / "clusters" / "variants" / "fabric-recommended.toml").read_text()
    text = text.replace('name = "fabric-recommended"', 'name = "short-retention"')
    text = text.replace("log_retention_ms = -1", 'log_retention_ms = 5000\noverrides = { "log.roll.ms" = 2000, '
                        '"log.segment.bytes" = 65536, "log.retention.check.interval.ms" = 1000, '
                        '"log.segment.delete.delay.ms" = 0 }')
    path = tmp_path / "short-retention.toml"
    path.write_text(text)
    return path


def test_a_restarted_orderer_whose_records_were_deleted_is_a_stalled_osn_with_its_cause(run_scenario, tmp_path):
    result = run_scenario(MINE, variant=str(short_retention(tmp_path)), expect="invalid")
    files = load_run(result.run_dir)
    assert files.record.judgement["kinds"] == ["kill-osn"] and files.record.available
    stalled = next(a for a in files.anomalies if a.name == "stalled-osn")
    assert files.effect(stalled) == "fails"
    causes = stalled_causes(result.run_dir, stalled.examples)
    below = [c for c in causes if isinstance(c.get("start_offset"), int) and isinstance(c.get("log_start"), int)
             and c["start_offset"] < c["log_start"]]
    assert below, causes


def test_the_same_scenario_on_fabric_recommended_is_valid(run_scenario):
    run_scenario(MINE, variant="fabric-recommended", expect="valid")
