"""start-kafka.sh starts a node again when it exits before it served, as a supervisor would,
and lets an exit after it served end the container, where the crash watch reports it.

Each test runs one Kafka container alone, with no network but its own loopback."""
from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import docker
import pytest

from clusters import labels as L
from clusters.images.build import build_kafka
from clusters.images.base import build_base
from ground.cache import cache_dir
from tests.support import until

pytestmark = pytest.mark.cluster

RESTARTED = "before it served; starting it again"
# A ZooKeeper-mode broker whose ZooKeeper is nowhere: it gives up connecting and exits at startup.
NO_ZOOKEEPER = """broker.id=1
listeners=PLAINTEXT://0.0.0.0:9092
advertised.listeners=PLAINTEXT://127.0.0.1:9092
zookeeper.connect=127.0.0.1:1
zookeeper.connection.timeout.ms={timeout_ms}
log.dirs=/var/lib/kafka/data"""
# One KRaft node that is its own controller quorum: it starts and serves on its own.
ALONE = """process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:9093
listeners=PLAINTEXT://0.0.0.0:9092,CONTROLLER://0.0.0.0:9093
advertised.listeners=PLAINTEXT://127.0.0.1:9092
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
log.dirs=/var/lib/kafka/data"""
CLUSTER_ID = "MkU3OEVBNTcwNTJENDM2Qg"


@pytest.fixture
def kafka_container(docker_client) -> Iterator[Any]:
    """run(version, config, **env): a container of that Kafka image running start-kafka.sh."""
    made = []

    def run(version: str, config: str, **env: str) -> Any:
        base = build_base(docker_client, cache_dir() / "work", "ordeal")
        _, image = build_kafka(docker_client, cache_dir(), base, version)
        container = docker_client.containers.run(
            image, detach=True, network_mode="none", name=f"ordeal-supervision-{len(made)}-{time.monotonic_ns()}",
            labels={**L.run_labels("supervision", "none", keep=False), L.ROLE: "kafka"},
            environment={"ORDEAL_CONFIG": config, "ORDEAL_JAVA_OPTS": "-Xmx256m -XX:TieredStopAtLevel=1", **env})
        made.append(container)
        return container

    yield run
    for container in made:
        try:
            container.remove(force=True)
        except docker.errors.NotFound:
            pass


def _log(container: Any) -> str:
    return container.logs().decode(errors="replace")


# The slow form (each exit after more than a minute, as under faults on a loaded machine) is nightly.
@pytest.mark.parametrize("timeout_ms", [2000, pytest.param(65000, marks=pytest.mark.nightly)], ids=["fast", "slow"])
def test_a_broker_that_exits_before_it_served_is_started_again_and_its_container_runs_on(kafka_container,
                                                                                        timeout_ms):
    container = kafka_container("3.9.2", NO_ZOOKEEPER.format(timeout_ms=timeout_ms))
    assert until(lambda: _log(container).count(RESTARTED) >= 2, 120 + 2 * timeout_ms / 1000, step=0.5, last=True), \
        _log(container)[-2000:]
    assert "(attempt 2)" in _log(container)
    assert "Timed out waiting for connection" in _log(container)  # the exit meant, not a bad setting
    container.reload()
    assert container.status == "running"


def test_a_node_that_exits_after_it_served_is_not_started_again_and_its_container_ends(kafka_container):
    container = kafka_container("4.4.0", ALONE, ORDEAL_CLUSTER_ID=CLUSTER_ID)
    assert until(lambda: "Kafka Server started" in _log(container), 120, step=0.5, last=True), _log(container)[-2000:]
    # The script looks for the open listener once a second.
    until(lambda: container.exec_run(["test", "-e", "/tmp/ordeal-served"]).exit_code == 0, 10, step=0.5,
          what="/tmp/ordeal-served, start-kafka.sh's mark that the broker served")
    java = container.exec_run(["sh", "-c", "for p in /proc/[0-9]*; do case \"$(tr '\\0' ' ' < $p/cmdline)\" in "
                                            "java*kafka.Kafka*) echo ${p#/proc/};; esac; done 2>/dev/null"])
    pid = java.output.decode().split()[0]
    container.exec_run(["kill", "-9", pid])
    assert until(lambda: (container.reload(), container.status)[1] == "exited", 30, step=0.5, last=True), \
        container.status
    assert container.attrs["State"]["ExitCode"] == 137
    assert RESTARTED not in _log(container)
