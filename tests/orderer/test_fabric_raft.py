"""Fabric v1.4.12's orderer on etcdraft, three local processes with mutual TLS, from material
made by Fabric's own tools (fabric.material with orderer_type "etcdraft", and the
cluster's fabric_tls_env and fabric_raft_env): the ground a Raft variant and the Kafka-to-Raft
migration stand on. A channel is created, a tx broadcast to one orderer is in the same block
on all three, and with one orderer killed the other two still order."""
from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fabric import material
from clusters.images.fabric_build import fabric_tools
from clusters.ordering_service import client_tls, fabric_raft_env
from fabric.client import OsnClient
from fabric.config_update import sign_channel_creation
from fabric.identity import MspIdentity
from osn.wire.common import common_pb2
from ground.variant import load_variant
from ground.cache import cache_dir
from tests.orderer.fabric_process import OrdererProcess, free_port, start_orderer

CHANNEL = "ch0"
NAMES = ["osn1", "osn2", "osn3"]


@pytest.fixture(scope="module")
def raft(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict[str, OrdererProcess], MspIdentity]]:
    tools = fabric_tools(cache_dir())
    tmp: Path = tmp_path_factory.mktemp("fabric-raft")
    ports = {name: free_port() for name in NAMES}
    variant = load_variant("fabric-recommended")
    variant = variant.model_copy(update={"orderer": variant.orderer.model_copy(
        update={"channels": [CHANNEL], "max_message_count": 1})})
    made = material.generate(variant, NAMES, ["127.0.0.1:1"], tools, tmp / "material",
                             sans={name: ["127.0.0.1"] for name in NAMES}, orderer_type="etcdraft",
                             raft_endpoints={name: f"127.0.0.1:{port}" for name, port in ports.items()})
    osns: dict[str, OrdererProcess] = {}
    try:
        for name in NAMES:
            osns[name] = start_orderer(tools, made, name, ports[name], tmp, extra_env=fabric_raft_env(name, str(made.root)))
        admin = MspIdentity.load(material.CLIENT_MSP, made.client_msp("admin"), client_tls(made, "admin", "mutual"))
        user = MspIdentity.load(material.CLIENT_MSP, made.client_msp("user"), client_tls(made, "user", "mutual"))
        client = OsnClient(admin)
        try:
            tx = sign_channel_creation(common_pb2.Envelope.FromString(made.channel_tx(CHANNEL).read_bytes()), admin)
            status = "none"
            for _ in range(120):  # until the system channel has a Raft leader to order the creation
                status = client.broadcast_envelope(osns["osn1"].address, tx)
                if status == "SUCCESS":
                    break
                time.sleep(0.5)
            assert status == "SUCCESS", f"{status} {status.info}: {osns['osn1'].log_text()[-1500:]}"
            for osn in osns.values():
                client.wait_for_block(osn.address, CHANNEL, 0, timeout=60)
        finally:
            client.close()
        yield osns, user
    finally:
        for osn in osns.values():
            osn.stop()


def _broadcast_until_success(client: OsnClient, address: str, label: str, tries: int = 60) -> str:
    """A Raft orderer answers SERVICE_UNAVAILABLE while its channel has no leader."""
    status = "none"
    for _ in range(tries):
        status = client.broadcast(address, CHANNEL, label)
        if status == "SUCCESS":
            break
        time.sleep(0.5)
    return status


def test_a_tx_ordered_by_raft_is_in_the_same_block_on_every_orderer(raft) -> None:
    osns, user = raft
    client = OsnClient(user)
    try:
        assert _broadcast_until_success(client, osns["osn2"].address, "raft-1") == "SUCCESS"
        blocks = [client.wait_for_block(osn.address, CHANNEL, 1, timeout=60) for osn in osns.values()]
        assert blocks[0]["txs"] == ["raft-1"] and all(b == blocks[0] for b in blocks)
    finally:
        client.close()
    assert "Raft leader changed" in osns["osn1"].log_text() or "raft.node" in osns["osn1"].log_text()


def test_two_of_three_raft_orderers_still_order_after_one_is_killed(raft) -> None:
    osns, user = raft
    osns["osn3"].stop(kill=True)
    client = OsnClient(user)
    try:
        assert _broadcast_until_success(client, osns["osn1"].address, "raft-2") == "SUCCESS"
        blocks = [client.wait_for_block(osns[name].address, CHANNEL, 2, timeout=60) for name in ("osn1", "osn2")]
        assert blocks[0]["txs"] == ["raft-2"] and blocks[0] == blocks[1]
    finally:
        client.close()
