"""Fabric v1.4.12's own orderer with TLS as the variants turn it on (ordering_service's
fabric_tls_env), run as a local process on solo consensus so that no Kafka is needed: what is
under test is the TLS, and ordeal's client against it. A client with its TLS key pair creates
a channel, broadcasts and delivers over mutual TLS; one without a certificate gets no
connection; a Deliver whose tls_cert_hash is missing is BAD_REQUEST from Fabric itself."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest

from fabric import material
from clusters.images.fabric_build import fabric_tools
from clusters.ordering_service import client_tls, fabric_raft_env
from fabric.client import OsnClient, OsnUnreachable
from fabric.config_update import sign_channel_creation
from fabric.envelopes import make_envelope
from fabric.identity import MspIdentity
from osn.wire.common import common_pb2
from osn.wire.orderer import ab_pb2, ab_pb2_grpc
from ground.variant import load_variant
from ground.cache import cache_dir
from tests.orderer.fabric_process import free_port, start_orderer

CHANNEL = "ch0"


@dataclass
class FabricOsn:
    made: material.Material
    address: str
    user: MspIdentity
    log: Path


@pytest.fixture(scope="module")
def fabric(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FabricOsn]:
    tools = fabric_tools(cache_dir())
    tmp = tmp_path_factory.mktemp("fabric-tls")
    variant = load_variant("fabric-recommended")
    variant = variant.model_copy(update={"orderer": variant.orderer.model_copy(
        update={"channels": [CHANNEL], "max_message_count": 1})})
    made = material.generate(variant, ["osn1"], ["127.0.0.1:1"], tools, tmp / "material",
                             sans={"osn1": ["127.0.0.1"]}, orderer_type="solo")
    # With Raft's cluster settings too, as the cluster gives every orderer under mutual TLS
    # (so that it can come back as Raft after a migration): a Kafka or solo orderer ignores them.
    osn = start_orderer(tools, made, "osn1", free_port(), tmp, extra_env=fabric_raft_env("osn1", str(made.root)))
    try:
        user = MspIdentity.load(material.CLIENT_MSP, made.client_msp("user"), client_tls(made, "user", "mutual"))
        admin = MspIdentity.load(material.CLIENT_MSP, made.client_msp("admin"), client_tls(made, "admin", "mutual"))
        creating = OsnClient(admin)
        try:
            tx = common_pb2.Envelope.FromString(made.channel_tx(CHANNEL).read_bytes())
            assert creating.broadcast_envelope(osn.address, sign_channel_creation(tx, admin)) == "SUCCESS"
            creating.wait_for_block(osn.address, CHANNEL, 0, timeout=30)
        finally:
            creating.close()
        yield FabricOsn(made, osn.address, user, osn.log)
    finally:
        osn.stop()


def test_fabrics_orderer_takes_a_broadcast_and_serves_a_bound_deliver_over_mutual_tls(fabric: FabricOsn) -> None:
    client = OsnClient(fabric.user)
    try:
        assert client.broadcast(fabric.address, CHANNEL, "tls-1") == "SUCCESS"
        block = client.wait_for_block(fabric.address, CHANNEL, 1, timeout=30)
        assert block["txs"] == ["tls-1"]
    finally:
        client.close()
    assert "Starting orderer" in fabric.log.read_text() or "Beginning to serve requests" in fabric.log.read_text()


def test_fabrics_orderer_refuses_a_client_that_presents_no_certificate(fabric: FabricOsn) -> None:
    own = fabric.user.tls
    bare = OsnClient(MspIdentity(fabric.user.msp_id, fabric.user.cert_pem, fabric.user.key,
                                 type(own)(own.root_certs)))
    try:
        with pytest.raises(OsnUnreachable) as refused:
            bare.broadcast(fabric.address, CHANNEL, "tls-bare", timeout=5)
        assert refused.value.code == "UNAVAILABLE"
    finally:
        bare.close()


def test_fabrics_orderer_answers_bad_request_to_a_deliver_without_its_tls_cert_hash(fabric: FabricOsn) -> None:
    seek = ab_pb2.SeekInfo(start=ab_pb2.SeekPosition(oldest=ab_pb2.SeekOldest()),
                           stop=ab_pb2.SeekPosition(oldest=ab_pb2.SeekOldest()))
    request = make_envelope(CHANNEL, fabric.user, seek.SerializeToString(), header_type=common_pb2.DELIVER_SEEK_INFO)
    channel = grpc.secure_channel(fabric.address, fabric.user.tls.credentials())
    try:
        answers = list(ab_pb2_grpc.AtomicBroadcastStub(channel).Deliver(iter([request]), timeout=10))
    finally:
        channel.close()
    assert [common_pb2.Status.Name(a.status) for a in answers] == ["BAD_REQUEST"]
    assert "didn't include its TLS cert hash" in fabric.log.read_text()
