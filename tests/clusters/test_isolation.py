"""A run owns its cluster: two runs at once each boot their own, a kept cluster is leased to
one run at a time, and a run whose cluster is removed under it gets no verdict."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import docker
import pytest

from clusters import labels as L
from clusters import lease
from clusters.prune import remove_run

pytestmark = pytest.mark.cluster
SMALL = Path(__file__).resolve().parents[1] / "nemesis" / "small.toml"


def scenario(tmp_path: Path, duration: float) -> Path:
    path = tmp_path / "solo.toml"
    path.write_text(f"""
variant = "{SMALL}"
concurrency = 2
rate = 40
duration = {duration}
recovery_wait = 1
final_read_time_limit = 20
op_timeout = 5
seed = 3
[[workloads]]
name = "kafka-log"
[nemesis]
faults = ["noop"]
interval = 5
""")
    return path


def recorded_fs(history: Path) -> set[str]:
    """The op kinds a run's history holds so far; a line still being written is skipped."""
    fs = set()
    for line in history.read_text().splitlines() if history.exists() else ():
        try:
            fs.add(json.loads(line)["f"])
        except (ValueError, KeyError):
            continue
    return fs


def ordeal_run(path: Path, store: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "cli.main", "run", str(path), "--store", str(store), "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.fixture
def image() -> str:
    client = docker.from_env()
    tags = [t for i in client.images.list(name="ordeal/toxiproxy") for t in i.tags]
    assert tags, "the images are built by the bootstrap"
    return tags[0]


def test_a_lease_is_held_once_and_a_dead_holders_lease_is_taken_over(image: str) -> None:
    client, run = docker.from_env(), f"lease-test-{os.getpid()}"
    try:
        assert lease.take(client, run, "v", image)
        assert not lease.take(client, run, "v", image), "a live holder (this process) keeps its lease"
        lease.release(client, run)
        client.containers.create(image, command=["true"], name=lease.lease_name(run),
                                 labels={**L.run_labels(run, "v", False), L.OWNER_PID: "999999999"})
        assert lease.take(client, run, "v", image), "the holder is gone: its lease is stale"
    finally:
        remove_run(client, run)


@pytest.mark.nightly  # two clusters booted side by side: about 100 s
def test_two_runs_of_one_variant_at_once_each_boot_their_own_cluster(tmp_path: Path) -> None:
    path = scenario(tmp_path, duration=15)
    first, second = ordeal_run(path, tmp_path / "a"), ordeal_run(path, tmp_path / "b")
    outs = [child.communicate(timeout=600) for child in (first, second)]
    for child, (out, err) in zip((first, second), outs):
        assert child.returncode == 0, err
        assert "valid: true" in out, err
    clusters = [json.loads(next((tmp_path / d).glob("solo/*/run.json")).read_text())["cluster"] for d in "ab"]
    assert clusters[0] != clusters[1]


def test_a_run_whose_cluster_is_removed_under_it_ends_with_cluster_lost_and_no_verdict(tmp_path: Path) -> None:
    child = ordeal_run(scenario(tmp_path, duration=40), tmp_path / "store")
    deadline = time.monotonic() + 600
    # The cluster goes once the workload has recorded a send, so that the run is caught mid-way.
    # Its name is on the containers the run's process owns (run.json names it only at the end).
    run = None
    while time.monotonic() < deadline and child.poll() is None and run is None:
        histories = list((tmp_path / "store").glob("solo/*/history.jsonl"))
        if histories and "send" in recorded_fs(histories[0]):
            owned = docker.from_env().containers.list(filters={"label": f"{L.OWNER_PID}={child.pid}"})
            run = owned[0].labels[L.RUN] if owned else None
        time.sleep(0.5)
    if run is None:
        child.kill()
        out, err = child.communicate(timeout=60)
        raise AssertionError(f"the run never reached its first send (exit {child.returncode}); its output:\n{out}\n{err}")
    remove_run(docker.from_env(), run)
    out, err = child.communicate(timeout=300)
    assert child.returncode == 3, err
    assert "cluster lost:" in err and "valid:" not in out
    assert not list((tmp_path / "store").glob("solo/*/results.json"))
    # The run stopped when its nodes vanished: it did not go on to its final reads.
    run_dir = next((tmp_path / "store").glob("solo/*/run.json")).parent
    fs = recorded_fs(run_dir / "history.jsonl")
    assert "final-read" not in fs and "send" in fs, fs
    assert json.loads((run_dir / "run.json").read_text())["signal"] is None  # stopped by no signal


def test_an_interrupted_run_is_judged_unknown_not_invalid(tmp_path: Path) -> None:
    """SIGTERM before the final reads: no final read, no final deliver, so neither lost
    writes nor lost txs can be judged; the check says unknown (exit 3) and why."""
    osn_variant = Path(__file__).resolve().parents[1] / "nemesis" / "osn.toml"
    path = tmp_path / "solo.toml"
    path.write_text(scenario(tmp_path, duration=120).read_text().replace(str(SMALL), str(osn_variant))
                    + '\n[[workloads]]\nname = "ordering"\n')
    child = ordeal_run(path, tmp_path / "store")
    deadline = time.monotonic() + 300
    history = None
    while time.monotonic() < deadline and child.poll() is None:
        found = list((tmp_path / "store").glob("solo/*/history.jsonl"))
        if found and '"status":"SUCCESS"' in found[0].read_text().replace(" ", ""):
            history = found[0]
            break
        time.sleep(0.5)
    assert history is not None, "no broadcast was acknowledged"
    child.send_signal(15)
    _, err = child.communicate(timeout=300)
    assert child.returncode == 128 + 15, err
    checked = subprocess.run([sys.executable, "-m", "cli.main", "check", str(history.parent)],
                             capture_output=True, text=True, timeout=600)
    assert checked.returncode == 3, checked.stdout + checked.stderr
    results = json.loads((history.parent / "results.json").read_text())
    assert results["valid"] == "unknown"
    assert "lost-tx" in results["checkers"]["ordering"]["not_judged"]
    assert "lost-tx" not in results.get("anomalies", {})
