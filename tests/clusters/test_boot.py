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
    from clusters.namespace import reachable, tcp_probe

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
    """Every OSN holds every tx broadcast (whichever OSN it was sent to), and their chains
    are one chain: the same height, the same blocks (numbers, hashes, txs), each block
    linked to the one before it."""
    from clusters.orderer.client import DeliverFailed, OsnClient, OsnUnreachable

    addresses = fabric.osn_addresses()
    names = sorted(addresses)
    assert names == ["osn1", "osn2", "osn3"]
    sent = [f"boot-tx-{i}" for i in range(30)]
    client = OsnClient(fabric.client_identity())
    try:
        statuses = [client.broadcast(addresses[names[i % 3]], "ch0", tx) for i, tx in enumerate(sent)]
        assert statuses == ["SUCCESS"] * 30
        chains: dict[str, list[dict] | str] = {}
        deadline = time.monotonic() + 60  # blocks are cut by the 500 ms batch timeout; slack for a busy machine
        while True:
            for name in names:
                try:
                    chains[name] = client.deliver(addresses[name], "ch0", 0)  # up to its height now
                except (DeliverFailed, OsnUnreachable) as exc:
                    chains[name] = f"no chain: {exc}"
            missing = {name: [tx for tx in sent if tx not in {t for b in chain for t in b["txs"]}]
                       if isinstance(chain, list) else sent for name, chain in chains.items()}
            if not any(missing.values()):
                break
            if time.monotonic() > deadline:
                pytest.fail("not every OSN holds every tx after 60 s: " + "; ".join(
                    _held(name, chains[name], missing[name], len(sent)) for name in names), pytrace=False)
            time.sleep(0.5)
    finally:
        client.close()
    heights = {name: len(chain) for name, chain in chains.items()}
    assert len(set(heights.values())) == 1, f"OSNs at different heights: {heights}"
    first = chains["osn1"]
    for name in ("osn2", "osn3"):
        differ = [n for n, (a, b) in enumerate(zip(first, chains[name])) if a != b]
        if differ:
            n = differ[0]
            pytest.fail(f"{name} differs from osn1 at block {n} (and {len(differ) - 1} more): "
                        f"{chains[name][n]} != {first[n]}", pytrace=False)
    assert [b["number"] for b in first] == list(range(len(first)))
    assert all(b["previous_hash"] == a["hash"] for a, b in zip(first, first[1:])), "osn1's chain is not linked"


def _held(name: str, chain: list[dict] | str, missing: list[str], sent: int) -> str:
    """What an OSN held: its height and how many of the txs sent, or why it gave no chain."""
    if isinstance(chain, str):
        return f"{name}: {chain}"
    held = f"{name}: height {len(chain)}, {sent - len(missing)} of {sent} txs"
    return held + (f", missing {', '.join(missing[:5])}{' ...' if len(missing) > 5 else ''}" if missing else "")
