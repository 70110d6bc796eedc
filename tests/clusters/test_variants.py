"""Variants are validated completely before anything boots."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from ground.variant import VariantError, load_variant, shipped_variants

SHIPPED = shipped_variants()

BASE = """
name = "bad"
[cluster]
zookeepers = 3
brokers = 4
[kafka]
replication_factor = 3
min_insync_replicas = 2
"""
KRAFT = """
name = "bad"
[cluster]
brokers = 4
[kafka]
version = "4.4.0"
mode = "kraft"
"""

INVALID = {
    "min-isr-above-rf": (BASE.replace("min_insync_replicas = 2", "min_insync_replicas = 4"),
                         "kafka.min_insync_replicas"),
    "rf-above-brokers": (BASE.replace("brokers = 4", "brokers = 2"), "kafka.replication_factor"),
    "even-zookeeper": (BASE.replace("zookeepers = 3", "zookeepers = 2"), "cluster.zookeepers"),
    "fetch-above-message-max": (BASE + "message_max_bytes = 2000000\nreplica_fetch_max_bytes = 3000000\n",
                                "kafka.replica_fetch_max_bytes"),
    "unknown-key": (BASE + "unclean_election = true\n", "kafka.unclean_election"),
    "unknown-section": (BASE + "[brokers]\nk = 4\n", "brokers"),
    "unknown-orderer": (BASE + "[orderer]\nimplementation = \"fabric-2.5\"\n", "orderer.implementation"),
    "channel-name-with-slash": (BASE + "[orderer]\nchannels = [\"ch/0\"]\n", "orderer.channels.0"),
    "channel-name-upper-case": (BASE + "[orderer]\nchannels = [\"Ch0\"]\n", "orderer.channels.0"),
    "channel-twice": (BASE + "[orderer]\nchannels = [\"ch0\", \"ch0\"]\n", "orderer.channels"),
    # Kafka versions and metadata modes (issue 15).
    "zookeeper-mode-on-4x": (BASE.replace("[kafka]", "[kafka]\nversion = \"4.4.0\""), "kafka.mode zookeeper"),
    "kraft-before-3.3": (KRAFT.replace("4.4.0", "3.2.3"), "kafka.mode kraft"),
    "unbuilt-major": (KRAFT.replace("4.4.0", "2.8.2"), "kafka.version"),
    "version-not-a-release": (KRAFT.replace("4.4.0", "4.4"), "kafka.version"),
    "even-controllers": (KRAFT.replace("[cluster]", "[cluster]\ncontrollers = 2"), "cluster.controllers"),
    "zero-controllers": (KRAFT.replace("[cluster]", "[cluster]\ncontrollers = 0"), "cluster.controllers"),
    "zookeeper-on-kraft": (KRAFT.replace("[cluster]", "[cluster]\nzookeepers = 3"), "cluster.zookeepers"),
    "controllers-in-zookeeper-mode": (BASE.replace("zookeepers = 3", "zookeepers = 3\ncontrollers = 3"),
                                      "cluster.controllers"),
    "fabric-orderer-on-4x": (KRAFT.replace("brokers = 4", "brokers = 4\nosns = 3"), "orderer.implementation"),
    "zookeeper-fault-expected-on-kraft": (KRAFT + "[expect]\nzk-quorum-loss = \"valid\"\n", "expect.zk-quorum-loss"),
    "kraft-fault-expected-in-zookeeper-mode": (BASE + "[expect]\ncontroller-quorum-loss = \"valid\"\n",
                                               "expect.controller-quorum-loss"),
    # The Kafka client axis (issue 40).
    "unknown-client": (BASE + "[client]\nimplementation = \"sarama\"\n", "client.implementation"),
    "librdkafka-version-not-a-release": (BASE + "[client]\nversion = \"2.3\"\n",
                                         "client.version '2.3' is not a confluent-kafka release"),
    "librdkafka-without-incremental-rebalancing": (BASE + "[client]\nversion = \"1.5.2\"\n",
                                                   "client.version 1.5.2: the workloads need confluent-kafka 1.6.0"),
    "java-client-2x": (BASE + "[client]\nimplementation = \"java\"\nversion = \"2.8.2\"\n", "client.version 2.8.2"),
    "java-client-not-a-release": (BASE + "[client]\nimplementation = \"java\"\nversion = \"4.4\"\n",
                                  "client.version"),
    "writers-on-fabric": (BASE.replace("brokers = 4", "brokers = 4\nosns = 1")
                          + "[orderer]\nwriters = {ch0 = [\"alice\"]}\n", "orderer.writers"),
    # Fabric as deployed (issue 43).
    "unknown-tls-mode": (BASE + "[orderer]\ntls = \"on\"\n", "orderer.tls"),
    "raft-on-the-model": (BASE + "[orderer]\nimplementation = \"model\"\nconsensus = \"etcdraft\"\ntls = \"mutual\"\n",
                          "orderer.consensus etcdraft"),
    "raft-without-mutual-tls": (BASE + "[orderer]\nconsensus = \"etcdraft\"\ntls = \"server\"\n",
                                "orderer.consensus etcdraft"),
}


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_variant_loads(name: str) -> None:
    assert load_variant(name).name == name


def test_fabric_recommended_matches_the_fabric_guide() -> None:
    v = load_variant("fabric-recommended")
    assert (v.cluster.brokers, v.cluster.zookeepers) == (4, 3)
    assert (v.kafka.replication_factor, v.kafka.min_insync_replicas) == (3, 2)
    assert v.kafka.unclean_leader_election_enable is False
    assert v.producer.acks == "all" and v.kafka.log_retention_ms == -1
    assert v.kafka.message_max_bytes > v.orderer.absolute_max_bytes
    # Safe under every fault but these: Fabric 1.4.12's orderer crashes under kafka-loss-probed,
    # and ZooKeeper-mode Kafka elects an emptied last in-sync replica back (disk-loss-sole-in-sync,
    # and random-disk, where another fault may have shrunk the ISR when a disk is lost).
    assert {k: e for k, e in v.expect.items() if e != "valid"} == {
        "kafka-loss-probed": "invalid", "disk-loss-sole-in-sync": "invalid", "random-disk": "invalid-possible",
        # Kafka 3.9's transaction protocol 1: KAFKA-17754 under coordinator faults.
        "pause-txn-coordinator": "invalid-possible", "txn-mixed": "invalid-possible"}
    assert v.expected("disk-loss") == "valid"


def test_the_real_orderer_is_the_default_and_one_variant_keeps_the_model() -> None:
    for name in SHIPPED:
        v = load_variant(name)
        # Fabric's orderer cannot use Kafka 4.x: the 4.x variants run the model; one variant
        # runs Fabric's long-term-support release.
        expected = "model" if name == "fabric-recommended-model" or v.kafka.version.startswith("4.") \
            else "fabric-2.5.16" if name == "fabric-2.5-recommended" else "fabric-1.4.12"
        assert v.orderer.implementation == expected
    real, model = load_variant("fabric-recommended"), load_variant("fabric-recommended-model")
    assert real.model_dump(exclude={"name", "description", "orderer", "expect"}) == \
        model.model_dump(exclude={"name", "description", "orderer", "expect"})
    assert real.orderer.model_dump(exclude={"implementation"}) == model.orderer.model_dump(exclude={"implementation"})


def test_kraft_variants_are_twins_of_fabric_recommended() -> None:
    """kraft-recommended is fabric-recommended's settings on Kafka 4.4.0 in KRaft (3
    controllers), fabric-recommended-kraft the same on 3.9.2 with Fabric's orderer."""
    zk = load_variant("fabric-recommended")
    for name, version in (("kraft-recommended", "4.4.0"), ("fabric-recommended-kraft", "3.9.2")):
        v = load_variant(name)
        assert (v.kafka.mode, v.kafka.version, v.cluster.controllers, v.cluster.zookeepers) == \
            ("kraft", version, 3, 0)
        differ = {"name": True, "description": True, "orderer": {"implementation"}, "expect": True,
                  "cluster": {"controllers", "zookeepers"}, "kafka": {"mode", "version"}}
        assert v.model_dump(exclude=differ) == zk.model_dump(exclude=differ)
    assert load_variant("kraft-unclean-election").kafka.unclean_leader_election_enable is True


def test_unsafe_variants_expect_loss_under_the_targeted_sequence() -> None:
    for name in ("unclean-election", "acks-1", "kraft-unclean-election"):
        assert load_variant(name).expected("targeted-isr-shrink") == "invalid"
    # One in-sync copy survives a SIGKILL on disk and nothing else may lead: loss is possible
    # (a lost disk, unclean election), not certain.
    assert load_variant("min-isr-1").expected("targeted-isr-shrink") == "invalid-possible"


@pytest.mark.parametrize("case", sorted(INVALID))
def test_invalid_variant_is_refused_naming_the_setting(case: str, tmp_path: Path) -> None:
    text, setting = INVALID[case]
    path = tmp_path / f"{case}.toml"
    path.write_text(text)
    with pytest.raises(VariantError) as err:
        load_variant(str(path))
    assert setting in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("case", sorted(INVALID))
def test_cluster_up_refuses_invalid_variant_with_exit_2_and_starts_nothing(case: str, tmp_path: Path) -> None:
    """Nothing can be started without a word to the Docker engine: the child's engine is a
    socket of the test's that counts who connects, and no one may."""
    text, setting = INVALID[case]
    path = tmp_path / f"{case}.toml"
    path.write_text(text)
    with EngineThatCounts(tmp_path / "engine.sock") as engine:
        proc = subprocess.run([sys.executable, "-m", "cli.main", "cluster", "up", "--variant", str(path)],
                              capture_output=True, text=True, timeout=60,
                              env=dict(os.environ, DOCKER_HOST=f"unix://{engine.path}"))
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and setting in lines[0], proc.stderr
    assert engine.connections == 0, "the refused variant's command reached the Docker engine"


def test_the_engine_that_counts_counts_a_docker_client(tmp_path: Path) -> None:
    """The control for the test above: a client of the engine at that socket is counted."""
    with EngineThatCounts(tmp_path / "engine.sock") as engine:
        proc = subprocess.run([sys.executable, "-m", "cli.main", "cluster", "status"], capture_output=True,
                              text=True, timeout=60, env=dict(os.environ, DOCKER_HOST=f"unix://{engine.path}"))
    assert proc.returncode != 0 and engine.connections >= 1, (proc.returncode, engine.connections, proc.stderr)


def test_unknown_variant_name_lists_the_known_ones() -> None:
    with pytest.raises(VariantError, match="fabric-recommended"):
        load_variant("no-such-variant")


class EngineThatCounts:
    """A unix socket standing in for the Docker engine: it counts the connections made to
    it and closes each at once (a client sees an engine that does not answer)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.connections = 0
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(str(path))
        self._server.listen(16)
        self._server.settimeout(0.05)
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._server.accept()
            except TimeoutError:  # none waiting: after the child is done, every one it made was counted
                if self._done.is_set():
                    return
                continue
            self.connections += 1
            conn.close()

    def __enter__(self) -> "EngineThatCounts":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()
        self._server.close()


def test_an_availability_promise_for_an_unknown_fault_kind_is_refused_in_one_line() -> None:
    from ground.variant import VariantError, parse_variant

    try:
        parse_variant({"name": "x", "available": {"kill-brokers": True}}, "x.toml")
    except VariantError as exc:
        assert str(exc).startswith("variant x.toml: available.kill-brokers: unknown fault kind") or \
            "available.kill-brokers: unknown fault kind" in str(exc)
    else:
        raise AssertionError("accepted an unknown fault kind in [available]")


def test_the_recommended_configuration_promises_availability_after_a_broker_kill_and_not_after_disk_loss() -> None:
    from ground.variant import load_variant

    variant = load_variant("fabric-recommended")
    assert variant.promises_availability("kill-broker") and not variant.promises_availability("disk-loss")


def test_the_java_client_defaults_to_the_brokers_release_and_may_be_newer(tmp_path: Path) -> None:
    """A Java client 4.x against 3.9 brokers is allowed; without a version it is the brokers'."""
    path = tmp_path / "java.toml"
    path.write_text(BASE + "[client]\nimplementation = \"java\"\n")
    assert load_variant(str(path)).client_version == "3.9.2"
    path.write_text(BASE + "[client]\nimplementation = \"java\"\nversion = \"4.4.0\"\n")
    assert load_variant(str(path)).client_version == "4.4.0"
    assert load_variant("fabric-recommended").client.implementation == "librdkafka"
    assert load_variant("fabric-recommended").client_version is None


def test_a_librdkafka_release_is_pinned_by_its_confluent_kafka_version(tmp_path: Path) -> None:
    """[client] version for librdkafka names a confluent-kafka release (workloads/librdkafka/)."""
    path = tmp_path / "pinned.toml"
    path.write_text(BASE + "[client]\nversion = \"2.3.0\"\n")
    variant = load_variant(str(path))
    assert (variant.client.implementation, variant.client_version, variant.client.label) == \
        ("librdkafka", "2.3.0", "librdkafka@2.3.0")


def test_a_variant_on_another_kafka_release_is_checked_and_named_for_it() -> None:
    """A suite's kafka_versions axis: the variant on that release, refused in one line where
    its mode cannot run it."""
    moved = load_variant("kraft-recommended").with_kafka_version("3.9.2")
    assert (moved.name, moved.kafka.version) == ("kraft-recommended-kafka-3.9.2", "3.9.2")
    with pytest.raises(VariantError, match="kafka.mode zookeeper: Kafka 4.4.0 has no ZooKeeper mode") as err:
        load_variant("fabric-recommended").with_kafka_version("4.4.0")
    assert "\n" not in str(err.value)
