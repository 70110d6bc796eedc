"""Node verbs, signals and pruning, on the smallest cluster."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from clusters.cluster import Cluster
from clusters.health import zookeeper_mode
from ground.variant import load_variant
from tests.clusters.conftest import TINY, labelled_objects

pytestmark = pytest.mark.cluster
ORDEAL = [sys.executable, "-m", "cli.main"]


def _start_foreground(label: str, tmp_path: Path) -> subprocess.Popen:
    out = open(tmp_path / f"{label}.out", "w")
    proc = subprocess.Popen([*ORDEAL, "cluster", "up", "--foreground", "--variant", str(TINY), "--label", label],
                            stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if "healthy in" in (tmp_path / f"{label}.out").read_text():
            return proc
        if proc.poll() is not None:
            break
        time.sleep(0.5)
    proc.kill()
    pytest.fail(f"child cluster did not come up: {(tmp_path / f'{label}.out').read_text()[-2000:]}")


def test_sigterm_of_a_foreground_cluster_removes_everything(docker_client, tmp_path: Path) -> None:
    label = f"sigterm-{os.getpid()}"
    proc = _start_foreground(label, tmp_path)
    assert labelled_objects(docker_client, label)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=120) != 0
    assert labelled_objects(docker_client, label) == []


def test_next_start_prunes_what_a_sigkilled_run_left(docker_client, tmp_path: Path) -> None:
    label = f"sigkill-{os.getpid()}"
    proc = _start_foreground(label, tmp_path)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert labelled_objects(docker_client, label), "a SIGKILLed run cannot clean up after itself"
    cluster = Cluster.up(load_variant(str(TINY)), client=docker_client)
    try:
        assert labelled_objects(docker_client, label) == []
    finally:
        cluster.down()


def test_two_runs_at_once_get_separate_subnets(docker_client) -> None:
    a = Cluster.up(load_variant(str(TINY)), client=docker_client)
    try:
        b = Cluster.up(load_variant(str(TINY)), client=docker_client)
        try:
            assert a.subnet != b.subnet
            assert a.run != b.run
        finally:
            b.down()
        assert labelled_objects(docker_client, a.run)  # b's teardown did not touch a
    finally:
        a.down()


def test_paused_zookeeper_does_not_answer_and_answers_again_when_resumed(docker_client) -> None:
    with Cluster.up(load_variant(str(TINY)), client=docker_client) as cluster:
        zk = cluster.zookeepers[0]
        zk.pause()
        assert zk.state == "paused"
        assert zookeeper_mode(zk.ip, timeout=1.0) is None
        zk.resume()
        assert zookeeper_mode(zk.ip) == "standalone"
        zk.kill()
        assert not zk.alive() and zk.pid == 0
        zk.start()
        deadline = time.monotonic() + 30
        while zookeeper_mode(zk.ip) != "standalone" and time.monotonic() < deadline:
            time.sleep(0.2)
        assert zookeeper_mode(zk.ip) == "standalone"
        assert b"binding to port" in zk.logs() or b"ZooKeeperServer" in zk.logs()


def test_attach_finds_a_kept_cluster_and_down_removes_it(docker_client) -> None:
    cluster = Cluster.up(load_variant(str(TINY)), keep=True, client=docker_client)
    try:
        again = Cluster.attach(run=cluster.run, client=docker_client)
        assert again is not None
        assert [n.name for n in again.nodes] == [n.name for n in cluster.nodes]
        assert again.bootstrap_servers() == cluster.bootstrap_servers()
    finally:
        cluster.down()
    assert Cluster.attach(run=cluster.run, client=docker_client) is None


def test_a_node_that_exits_at_boot_is_named_with_its_last_line_and_nothing_is_left(docker_client, monkeypatch) -> None:
    """The boot CI once met: a KRaft cluster id that kafka-storage reads as an option. Every
    controller exits at once; the error names them and says why, and the run is removed."""
    from clusters import kraft
    from clusters.errors import ClusterError
    from ground.variant import parse_variant

    monkeypatch.setattr(kraft, "new_cluster_id", lambda: "-" + "A" * 21)
    variant = parse_variant({"name": "tiny-kraft", "description": "1 controller, 1 broker, Kafka 4.4.0",
                             "cluster": {"controllers": 1, "brokers": 1, "osns": 0},
                             "kafka": {"version": "4.4.0", "mode": "kraft", "replication_factor": 1,
                                       "min_insync_replicas": 1}}, "test_lifecycle.py")
    with pytest.raises(ClusterError) as raised:
        Cluster.up(variant, run_label="exits-at-boot", client=docker_client, timeout=90)
    assert "node(s) controller1 exited" in str(raised.value), raised.value
    assert "controller1's last line: kafka-storage: error: argument --cluster-id/-t" in str(raised.value), raised.value
    assert labelled_objects(docker_client, "exits-at-boot") == []
