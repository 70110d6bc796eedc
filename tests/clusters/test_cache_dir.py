"""ordeal's cache is one directory, $ORDEAL_CACHE or ~/.cache/ordeal, for the bootstrap and
for every Python part: a boot must find the images and tools the bootstrap built there."""
from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace

from clusters.cluster import Cluster
from ground.variant import load_variant


def test_a_cluster_reads_its_artifacts_from_ordeal_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ORDEAL_CACHE", str(tmp_path))
    network = SimpleNamespace(attrs={"IPAM": {"Config": [{"Subnet": "10.9.0.0/24"}]}})
    cluster = Cluster(None, "run", load_variant("fabric-recommended"), network, [])
    assert cluster.cache == tmp_path


def test_the_command_line_is_built_without_the_docker_sdk():
    """Every `ordeal` command builds the whole parser; the cluster's imports (the Docker SDK,
    librdkafka) cost each `ordeal check` some 0.3 s before it sent anything."""
    code = "import sys, cli.main as c; c.build_parser(); print(sorted(m for m in ('docker', 'confluent_kafka') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True).stdout
    assert out.strip() == "[]"
