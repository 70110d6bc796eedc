"""A harness process killed or signalled mid-run: what it leaves behind."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.history import read_history

SCENARIO = """
concurrency = 4
rate = 300
duration = 60
recovery_wait = 0.1
final_read_time_limit = 5
op_timeout = 2
seed = 1
[[workloads]]
name = "noop"
[nemesis]
faults = ["noop"]
interval = 0.3
"""


def start(tmp_path: Path) -> tuple[subprocess.Popen, Path, float]:
    """The child `ordeal run`, its history file, and when that file appeared (monotonic)."""
    scenario = tmp_path / "long.toml"
    scenario.write_text(SCENARIO)
    store = tmp_path / "store"
    child = subprocess.Popen([sys.executable, "-m", "harness.cli", "run", str(scenario), "--store", str(store),
                              "--no-check", "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        histories = list(store.glob("long/*/history.jsonl"))
        if histories:
            return child, histories[0], time.monotonic()
        time.sleep(0.01)
    child.kill()
    pytest.fail("the child never started its history")


def completed_once(ops: list[dict], allow_open: bool) -> None:
    open_ops: dict = {}
    for op in ops:
        if op["process"] == "nemesis":
            continue
        if op["type"] == "invoke":
            assert op["process"] not in open_ops
            open_ops[op["process"]] = op
        else:
            assert open_ops.pop(op["process"])["f"] == op["f"]
    assert allow_open or not open_ops


def test_a_sigkilled_harness_leaves_a_history_readable_up_to_its_last_flush(tmp_path):
    child, history, appeared = start(tmp_path)
    time.sleep(max(0.0, appeared + 1.5 - time.monotonic()))
    os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=30)
    raw = history.read_text()
    lines = raw.splitlines()
    ops = [json.loads(line) for line in lines]  # every line parses: nothing torn
    assert raw.endswith("\n") and len(ops) > 50
    assert [op["index"] for op in ops] == list(range(len(ops)))
    assert all(a["time"] <= b["time"] for a, b in zip(ops, ops[1:]))
    assert ops[-1]["time"] >= 0.8e9  # flushed within the last few hundred ms before the kill
    assert list(read_history(history)) == ops
    completed_once(ops, allow_open=True)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signalled_harness_heals_flushes_and_exits_non_zero(tmp_path, signum):
    child, history, appeared = start(tmp_path)
    time.sleep(max(0.0, appeared + 1.0 - time.monotonic()))
    child.send_signal(signum)
    _, stderr = child.communicate(timeout=60)
    assert child.returncode == 128 + signum
    assert f"stopped by signal {signum}" in stderr
    ops = list(read_history(history))
    completed_once(ops, allow_open=False)
    assert ops[-1]["process"] == "nemesis" and ops[-1]["f"] == "heal" and ops[-1]["value"]["all"] is True
