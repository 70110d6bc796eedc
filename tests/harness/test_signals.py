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

from ground.history_file import read_history

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


def start(tmp_path: Path) -> tuple[subprocess.Popen, Path]:
    """The child `ordeal run` and its history file."""
    scenario = tmp_path / "long.toml"
    scenario.write_text(SCENARIO)
    store = tmp_path / "store"
    child = subprocess.Popen([sys.executable, "-m", "cli.main", "run", str(scenario), "--store", str(store),
                              "--no-check", "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        histories = list(store.glob("long/*/history.jsonl"))
        if histories:
            return child, histories[0]
        time.sleep(0.01)
    child.kill()
    pytest.fail("the child never started its history")


def flushed_ops(history: Path) -> list[dict]:
    """The whole lines the history file holds now."""
    raw = history.read_bytes()
    return [json.loads(line) for line in raw[:raw.rfind(b"\n") + 1].splitlines()]


def wait_until_running(child: subprocess.Popen, history: Path, faults: int, after_s: float = 0.0) -> list[dict]:
    """Waits until the run's history holds `faults` faults (the main phase is under way, its
    nemesis at work) and an op recorded at least `after_s` into the run; the ops flushed then."""
    deadline = time.monotonic() + 60
    while True:
        ops = flushed_ops(history)
        if ops and sum(op["process"] == "nemesis" and op["f"] == "noop" for op in ops) >= faults \
                and ops[-1]["time"] >= after_s * 1e9:
            return ops
        if child.poll() is not None or time.monotonic() > deadline:
            child.kill()
            pytest.fail(f"the run did not get to {faults} faults and {after_s} s within 60 s "
                        f"(exit {child.returncode}; {len(ops)} ops flushed)")
        time.sleep(0.02)


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
    child, history = start(tmp_path)
    before = wait_until_running(child, history, faults=2, after_s=1.0)
    os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=30)
    raw = history.read_text()
    lines = raw.splitlines()
    ops = [json.loads(line) for line in lines]  # every line parses: nothing torn
    assert raw.endswith("\n") and len(ops) > 50
    assert ops[:len(before)] == before  # what had reached the OS before the kill is all there, unchanged
    assert [op["index"] for op in ops] == list(range(len(ops)))
    assert all(a["time"] <= b["time"] for a, b in zip(ops, ops[1:]))
    assert list(read_history(history)) == ops
    completed_once(ops, allow_open=True)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signalled_harness_heals_flushes_and_exits_non_zero(tmp_path, signum):
    child, history = start(tmp_path)
    wait_until_running(child, history, faults=1)
    child.send_signal(signum)
    _, stderr = child.communicate(timeout=60)
    assert child.returncode == 128 + signum
    assert f"stopped by signal {signum}" in stderr
    ops = list(read_history(history))
    completed_once(ops, allow_open=False)
    assert ops[-1]["process"] == "nemesis" and ops[-1]["f"] == "heal" and ops[-1]["value"]["all"] is True
