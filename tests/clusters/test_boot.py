"""fabric-recommended boots on the real cluster, carries writes through the proxies,
survives a SIGKILLed broker, and leaves nothing behind."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from clusters.cluster import Cluster
from clusters.health import ensemble_has_leader
from clusters.smoke import create_topic, produce, read_partition
from ground.variant import load_variant
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
    from fabric.client import DeliverFailed, OsnClient, OsnUnreachable

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


def _kafka_tls_attempt(broker_ip: str, made, with_certificate: bool) -> tuple[str, str, bytes]:
    """A TLS handshake with a broker's CLUSTER listener, as an orderer makes it (with its TLS
    key pair) or without a certificate, then an ApiVersions request; the TLS version, the
    broker certificate's common name and the first bytes of the answer."""
    import socket
    import ssl

    from clusters.node_config import CLUSTER_PORT

    ctx = ssl.create_default_context(cafile=str(made.tls_ca("kafka")))
    if with_certificate:
        own = made.orderer_tls("osn1")
        ctx.load_cert_chain(str(own / "server.crt"), str(own / "server.key"))
    with socket.create_connection((broker_ip, CLUSTER_PORT), timeout=10) as raw:
        with ctx.wrap_socket(raw, server_hostname=broker_ip) as conn:
            conn.sendall(API_VERSIONS_V0)
            answer = conn.recv(4)  # under TLS 1.3 a refused client certificate shows here
            subject = dict(pair[0] for pair in conn.getpeercert()["subject"])
            return conn.version() or "", subject["commonName"], answer


# A Kafka request: length 10, ApiVersions (18) v0, correlation id 0, no client id.
API_VERSIONS_V0 = bytes.fromhex("0000000a" "0012" "0000" "00000000" "0000")


def test_the_orderers_reach_kafka_only_over_tls_with_their_certificate(fabric: Cluster) -> None:
    """fabric-recommended's kafka_tls: the CLUSTER listener (the orderers' path) answers an
    orderer's key pair over TLS, refuses a client without a certificate, and answers plaintext
    with a TLS alert; clients on the host keep their plaintext listener (every other test)."""
    import shutil
    import socket
    import ssl
    import tempfile

    from fabric.material import Material
    from clusters.node_config import CLUSTER_PORT
    from clusters.ordering_service import read_material

    broker = fabric.brokers[0]
    tmp = Path(tempfile.mkdtemp(prefix="ordeal-test-tls-"))
    try:
        made = read_material(fabric, ("orderers", "tlsca"), lambda m: Material(shutil.copytree(m.root, tmp / "m")))
        version, name, answer = _kafka_tls_attempt(broker.ip, made, with_certificate=True)
        assert version.startswith("TLSv1.") and name == f"{broker.name}.kafka.ordeal" and len(answer) == 4
        with pytest.raises(ssl.SSLError, match="(?i)certificate"):
            _kafka_tls_attempt(broker.ip, made, with_certificate=False)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    with socket.create_connection((broker.ip, CLUSTER_PORT), timeout=10) as plain:
        plain.sendall(API_VERSIONS_V0)
        assert plain.recv(1) == b"\x15"  # a TLS alert record, not a Kafka answer
