"""`ordeal run` as a user runs it, and what live progress shows."""
from __future__ import annotations

import subprocess
import sys

from rich.console import Console

from harness.progress import Progress
from harness.runner import Status


def test_ordeal_run_noop_exits_0_and_names_its_run_directory(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "harness.run_cli", "noop", "--store", str(tmp_path),
                           "--duration", "0.5", "--no-check"], capture_output=True, text=True, timeout=90)
    assert proc.returncode == 0, proc.stderr
    run_dir = (tmp_path / "latest").resolve()
    assert f"seed 7; {tmp_path}/noop/{run_dir.name}" in proc.stdout
    assert {p.name for p in run_dir.iterdir()} == {"run.json", "scenario.json", "history.jsonl"}


def test_progress_shows_phase_time_counts_and_active_faults():
    console = Console(record=True, width=200, force_terminal=False)
    progress = Progress(console)
    status = Status("main", 12.5, 75, 30, {"ok": 20, "fail": 7, "info": 3}, 2, ("kill-broker",))
    progress(status)
    line = console.export_text()
    for part in ("main", "12.5/75 s", "ok 20", "fail 7", "info 3", "nemesis 2", "faults: kill-broker"):
        assert part in line
