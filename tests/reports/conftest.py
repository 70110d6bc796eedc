"""Report fixtures: synthetic runs built once per session, reports written once."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import run_builder  # noqa: E402

from reports.report import write_report  # noqa: E402


@pytest.fixture(scope="session")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("runs")
    return {
        "clean": run_builder.clean_run(base / "store" / "clean"),
        "anomalous": run_builder.anomalous_run(base / "store" / "anomalous"),
        "empty": run_builder.empty_run(base / "empty"),
        "large": run_builder.large_run(base / "large"),
    }


@pytest.fixture(scope="session")
def reports(runs: dict[str, Path]) -> dict[str, str]:
    """The report.html text of each synthetic run."""
    return {name: write_report(path).read_text(encoding="utf-8") for name, path in runs.items()}
