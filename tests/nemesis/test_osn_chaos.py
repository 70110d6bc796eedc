"""OSN faults on a real cluster with one ordering node: killed and paused OSNs stop
answering and come back; an isolated OSN cannot reach its broker until healed."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from clusters.cluster import Cluster
from clusters.namespace import reachable, tcp_probe
from clusters.node_config import CLUSTER_PORT
from ground.variant import load_variant
from nemesis.registry import fault_factory

pytestmark = [pytest.mark.cluster, pytest.mark.chaos]
OSN_VARIANT = Path(__file__).with_name("osn.toml")


@pytest.fixture(scope="module")
def cluster():
    c = Cluster.up(load_variant(str(OSN_VARIANT)))
    try:
        yield c
    finally:
        c.down()


def healthy_within(cluster: Cluster, node, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if cluster.osn_healthy(node):
            return True
        time.sleep(0.5)
    return False


@pytest.mark.parametrize("fault, did, undid", [("kill-osn", "kill", "start"), ("pause-osn", "pause", "resume")])
def test_faulted_osn_does_not_answer_until_undone(cluster: Cluster, fault: str, did: str, undid: str) -> None:
    osn = cluster.osns[0]
    nem = fault_factory(fault)({})
    nem.setup(cluster)
    done = nem.invoke({"f": "start", "fault": fault})
    assert done == {"f": did, "value": {"fault": fault, "nodes": [osn.name], "pick": "random"}}
    assert not cluster.osn_healthy(osn)
    assert nem.invoke({"f": "stop", "fault": fault})["f"] == undid
    assert healthy_within(cluster, osn, 60)
    assert nem.heal_all() == []


def test_isolated_osn_cannot_reach_its_broker_until_healed(cluster: Cluster) -> None:
    osn, broker = cluster.osns[0], cluster.brokers[0]
    nem = fault_factory("isolate-node")({"target": {"role": "osn"}})
    nem.setup(cluster)
    done = nem.invoke({"f": "start", "fault": "isolate-node"})
    assert done["value"]["nodes"] == [osn.name]
    address = f"{broker.ip}:{CLUSTER_PORT}"
    assert tcp_probe(osn.pid, [(broker.ip, CLUSTER_PORT)])[address] == "timeout"
    healed = nem.invoke({"f": "stop", "fault": "isolate-node"})
    assert healed["f"] == "heal" and healed["value"]["connected"] is True
    assert reachable(tcp_probe(osn.pid, [(broker.ip, CLUSTER_PORT)])[address])
