from __future__ import annotations

from pathlib import Path

import docker
import pytest

from clusters import labels as L

TINY = Path(__file__).with_name("tiny.toml")


@pytest.fixture(scope="package")
def fabric(docker_client):
    """One fabric-recommended cluster (3 zk, 4 kafka, 3 osn) shared by the tests of this folder,
    and down once they are done: kept to the session's end it idled beside every later cluster."""
    from clusters.cluster import Cluster
    from ground.variant import load_variant

    cluster = Cluster.up(load_variant("fabric-recommended"), client=docker_client)
    yield cluster
    cluster.down()
    assert labelled_objects(docker_client, cluster.run) == [], "teardown left objects behind"


@pytest.fixture(scope="session")
def docker_client() -> docker.DockerClient:
    client = docker.from_env(timeout=120)
    client.ping()
    return client


def labelled_objects(client: docker.DockerClient, run: str | None = None) -> list[str]:
    """Names of every container, network and volume ordeal labelled (for one run, or all)."""
    flt = {"label": [f"{L.PROJECT}=ordeal"] + ([f"{L.RUN}={run}"] if run else [])}
    return ([c.name for c in client.containers.list(all=True, filters=flt)]
            + [n.name for n in client.networks.list(filters=flt)]
            + [v.name for v in client.volumes.list(filters=flt)])
