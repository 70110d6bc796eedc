"""Every documented command starts: each bench script and each `ordeal` command that README
shows gets as far as its argument parsing and imports, as its docs say to run it, so that a
layering slip cannot break one unnoticed (four bench scripts once died at import and
nobody knew)."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ORDEAL = Path(sys.executable).parent / "ordeal"
BENCH_SCRIPTS = sorted(p.name for p in (ROOT / "bench").glob("*.py") if p.name != "reference.py")


def _readme_commands() -> list[list[str]]:
    """The `ordeal` subcommands README's examples run (the words before the first argument)."""
    commands = []
    for line in (ROOT / "README.md").read_text().splitlines():
        match = re.match(r"\.venv/bin/ordeal ((?:[a-z-]+ ?)+)", line.strip())
        if match:
            words = match.group(1).split()
            commands.append(words[:2] if words[0] == "cluster" else words[:1])
    return [list(c) for c in sorted({tuple(c) for c in commands})]


@pytest.mark.parametrize("script", BENCH_SCRIPTS)
def test_each_bench_script_starts_as_documented(script: str) -> None:
    done = subprocess.run([sys.executable, str(ROOT / "bench" / script), "--help"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "usage:" in done.stdout, done.stderr[-2000:]


@pytest.mark.parametrize("command", _readme_commands(), ids=" ".join)
def test_each_ordeal_command_readme_shows_starts(command: list[str]) -> None:
    done = subprocess.run([str(ORDEAL), *command, "--help"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "usage: ordeal" in done.stdout, done.stderr[-2000:]


def test_readme_shows_the_commands_users_start_with() -> None:
    assert {"run", "suite", "check", "report", "compare", "hunt"} <= {c[0] for c in _readme_commands()}


def test_the_smoke_suite_lists_its_runs_without_running_them() -> None:
    done = subprocess.run([str(ORDEAL), "suite", "smoke", "--list"], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and "fabric-recommended" in done.stdout, done.stderr[-2000:]
