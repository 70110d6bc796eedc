"""An invalid run keeps the brokers' files of the partitions its anomalies name
(harness/evidence.py), before a suite or hunt boots the variant again."""
from __future__ import annotations

import io
import tarfile
from types import SimpleNamespace

import docker

from harness.evidence import EVIDENCE, SAID, anomaly_partitions, keep_partition_files
from tests.clusters.test_partition_files import batch, control

RESULTS = {"anomalies": {
    "lost-write": {"count": 1, "examples": [{"topic": "t100", "partition": 0, "offset": 169, "value": 284}]},
    "torn-txn": {"count": 2, "examples": [{"topic": "t100", "partition": 0}, {"topic": "t7", "partition": 2}]},
    "lost-tx": {"count": 1, "examples": [{"channel": "ch0", "tx": "a"}]},
    "G1c": {"count": 3, "examples": [{"cycle": [1, 2]}]},
}}


def test_the_partitions_are_those_the_examples_name_and_a_channel_is_its_topics_partition_0():
    assert anomaly_partitions(RESULTS) == {("t100", 0), ("t7", 2), ("ch0", 0)}
    assert anomaly_partitions({"anomalies": {}}) == set()


class Broker:
    """A broker container as the Docker engine answers an archive request: a tar of the
    partition directory asked for, or NotFound where it holds no replica."""

    def __init__(self, name: str, holds: dict[str, bytes]):
        self.name, self.holds = name, holds
        self.container = SimpleNamespace(get_archive=self.get_archive)

    def get_archive(self, path: str):
        part = path.rsplit("/", 1)[1]
        if part not in self.holds:
            raise docker.errors.NotFound(f"no {path}")
        out = io.BytesIO()
        with tarfile.open(fileobj=out, mode="w") as tar:
            data = self.holds[part]
            info = tarfile.TarInfo(f"{part}/00000000000000000000.log")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        return [out.getvalue()], {}


def test_an_invalid_runs_partitions_are_copied_from_each_broker_holding_them_and_listed(tmp_path):
    segment = batch(169, [b"247"]) + control(170, 0)
    cluster = SimpleNamespace(brokers=[Broker("kafka1", {"t100-0": segment}), Broker("kafka2", {})])
    line = keep_partition_files(cluster, {"anomalies": {"lost-write": RESULTS["anomalies"]["lost-write"]}}, tmp_path)
    assert line.startswith("evidence: 1 broker copies of 1 partitions (t100-0)")
    listing = (tmp_path / EVIDENCE / "kafka1" / "t100-0" / "batches.txt").read_text()
    assert "values 247" in listing and "marker ABORT" in listing
    said = (tmp_path / EVIDENCE / SAID).read_text()
    assert "kafka1: t100-0 kept" in said and "kafka2: no replica of t100-0" in said


def test_nothing_is_kept_without_a_partition_or_without_brokers(tmp_path):
    assert keep_partition_files(SimpleNamespace(brokers=[]), RESULTS, tmp_path) is None
    assert keep_partition_files(SimpleNamespace(brokers=[Broker("kafka1", {})]), {"valid": False}, tmp_path) is None
    assert not (tmp_path / EVIDENCE).exists()
