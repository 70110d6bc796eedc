"""`ordeal run` as a user runs it, and what live progress shows."""
from __future__ import annotations

import json
import subprocess
import sys

from rich.console import Console

from harness.progress import Progress
from harness.runner import Status


def test_ordeal_run_no_check_says_not_checked_exits_4_and_names_its_run_directory(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "cli.run", "noop", "--store", str(tmp_path),
                           "--duration", "0.5", "--no-check"], capture_output=True, text=True, timeout=90)
    assert proc.returncode == 4, proc.stderr
    run_dir = (tmp_path / "latest").resolve()
    assert f"seed 7; {tmp_path}/noop/{run_dir.name}" in proc.stdout
    assert "not checked" in proc.stdout and "valid:" not in proc.stdout
    assert {p.name for p in run_dir.iterdir()} == {"run.json", "scenario.json", "history.jsonl"}


def test_ordeal_run_whose_check_crashes_exits_3_and_says_check_failed(tmp_path, monkeypatch, capsys):
    import checkers.check
    from cli import run as run_cli

    def broken(*args, **kwargs):
        raise OSError("history.jsonl: unreadable")

    monkeypatch.setattr(checkers.check, "check_run", broken)
    code = run_cli.main(["noop", "--store", str(tmp_path), "--duration", "0.3", "--quiet"])
    out = capsys.readouterr().out
    assert code == 3, out
    assert "check failed: OSError: history.jsonl: unreadable; verdict unknown" in out and "valid:" not in out
    run_json = json.loads(((tmp_path / "latest").resolve() / "run.json").read_text())
    assert run_json["check"]["error"] == "OSError: history.jsonl: unreadable"


def test_ordeal_run_with_an_unreadable_history_exits_3_not_0(tmp_path, monkeypatch, capsys):
    """The real checker, given a history it cannot read (a line that is not JSON): no verdict."""
    from cli import run as run_cli
    from harness.history import Recorder

    close = Recorder.close

    def spoil(self):
        close(self)
        with open(self.path, "ab") as f:
            f.write(b'{"process": 0, "type": "ok", "f": "send", "value": {"offset": "0"}}\n')

    monkeypatch.setattr(Recorder, "close", spoil)
    code = run_cli.main(["noop", "--store", str(tmp_path), "--duration", "0.3", "--quiet"])
    out = capsys.readouterr().out
    assert code == 3 and "check failed: " in out, out


def test_progress_shows_phase_time_counts_and_active_faults():
    console = Console(record=True, width=200, force_terminal=False)
    progress = Progress(console)
    status = Status("main", 12.5, 75, 30, {"ok": 20, "fail": 7, "info": 3}, 2, ("kill-broker",))
    progress(status)
    line = console.export_text()
    for part in ("main", "12.5/75 s", "ok 20", "fail 7", "info 3", "nemesis 2", "faults: kill-broker"):
        assert part in line
