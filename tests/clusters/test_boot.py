"""fabric-recommended boots on the real cluster, carries writes through the proxies,
survives a SIGKILLed broker, and leaves nothing behind."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from clusters.cluster import Cluster
from clusters.health import ensemble_has_leader
from clusters.smoke import create_topic, produce, read_partition
from clusters.variant import load_variant
from tests.clusters.conftest import labelled_objects

pytestmark = pytest.mark.cluster


def test_fabric_recommended_boots_three_zookeepers_and_four_brokers_healthy(fabric: Cluster) -> None:
    assert [n.name for n in fabric.zookeepers] == ["zk1", "zk2", "zk3"]
    assert [n.name for n in fabric.brokers] == ["kafka1", "kafka2", "kafka3", "kafka4"]
    assert all(n.state == "running" for n in fabric.nodes)
    assert ensemble_has_leader([z.ip for z in fabric.zookeepers])
    assert fabric.controller() is not None


def test_every_node_process_runs_as_an_unprivileged_user(fabric: Cluster) -> None:
    for node in fabric.nodes:
        status = Path(f"/proc/{node.pid}/status").read_text()
        uids = next(line for line in status.splitlines() if line.startswith("Uid:")).split()[1:]
        assert set(uids) == {"1000"}, f"{node.name} runs as {uids}"


def test_only_the_host_reaches_the_toxiproxy_api(fabric: Cluster) -> None:
    from clusters.cluster import TOXIPROXY_API_PORT
    from nemesis.namespace import reachable, tcp_probe

    api, proxy = (fabric.toxiproxy.ip, TOXIPROXY_API_PORT), (fabric.toxiproxy.ip, 19091)
    seen = tcp_probe(fabric.brokers[0].pid, [api, proxy])
    assert seen[f"{api[0]}:{api[1]}"] == "timeout", "a node reached toxiproxy's API"
    assert reachable(seen[f"{proxy[0]}:{proxy[1]}"])
    import urllib.request
    with urllib.request.urlopen(f"{fabric.toxiproxy_api()}/proxies", timeout=5) as answer:
        assert answer.status == 200


def test_host_clients_reach_brokers_only_through_toxiproxy(fabric: Cluster) -> None:
    proxies = fabric.bootstrap_servers().split(",")
    assert len(proxies) == 4
    assert all(p.startswith(fabric.toxiproxy.ip + ":") for p in proxies)


def test_thousand_acks_all_writes_read_back_in_order_then_survive_leader_sigkill(fabric: Cluster) -> None:
    create_topic(fabric, "t-boot")
    acked = produce(fabric, "t-boot", list(range(1000)))
    assert len(acked) == 1000
    assert [o for _, o in acked] == list(range(1000))
    assert read_partition(fabric, "t-boot", 0, 1000) == list(range(1000))

    leader = fabric.leader_of("t-boot", 0)
    assert leader is not None
    leader.kill()
    assert leader.state == "exited"
    acked = produce(fabric, "t-boot", list(range(1000, 1500)))
    assert len(acked) == 500
    assert read_partition(fabric, "t-boot", 0, 1500) == list(range(1500))
    new_leader = fabric.leader_of("t-boot", 0)
    assert new_leader is not None and new_leader.name != leader.name
    leader.start()
    assert leader.state == "running"


def test_teardown_leaves_no_labelled_container_network_or_volume(docker_client) -> None:
    cluster = Cluster.up(load_variant("tests/clusters/tiny.toml"), client=docker_client)
    assert labelled_objects(docker_client, cluster.run)
    cluster.down()
    assert labelled_objects(docker_client, cluster.run) == []


def test_three_osns_are_healthy_and_cut_identical_blocks(fabric: Cluster) -> None:
    from clusters.orderer.client import OsnClient

    addresses = fabric.osn_addresses()
    assert sorted(addresses) == ["osn1", "osn2", "osn3"]
    client = OsnClient(fabric.client_identity())
    try:
        names = sorted(addresses)
        statuses = [client.broadcast(addresses[names[i % 3]], "ch0", f"boot-tx-{i}") for i in range(30)]
        assert statuses == ["SUCCESS"] * 30
        chains = {}
        for name, address in addresses.items():
            deadline = time.monotonic() + 30
            while True:
                blocks = client.deliver(address, "ch0", 0, "newest")
                txs = [tx for b in blocks for tx in b["txs"]]
                if set(txs) >= {f"boot-tx-{i}" for i in range(30)} or time.monotonic() > deadline:
                    break
                time.sleep(0.5)
            chains[name] = blocks
        assert {f"boot-tx-{i}" for i in range(30)} <= {tx for b in chains["osn1"] for tx in b["txs"]}
        heights = {name: len(blocks) for name, blocks in chains.items()}
        common = min(heights.values())
        hashes = {name: [b["hash"] for b in blocks[:common]] for name, blocks in chains.items()}
        assert hashes["osn1"] == hashes["osn2"] == hashes["osn3"]
    finally:
        client.close()
