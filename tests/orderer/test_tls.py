"""TLS on the OSN's gRPC as Fabric v1.4 deploys it, on ordeal's model served in-process, with
material made by Fabric's own cryptogen: a client with its TLS key pair broadcasts and
delivers; one without a certificate is refused at the handshake; a Deliver not bound to its
connection's certificate is BAD_REQUEST, as Fabric's binding inspector answers."""
from __future__ import annotations

import threading
from pathlib import Path

import grpc
import pytest

from fabric import material
from clusters.images.fabric_build import fabric_tools
from fabric.async_client import AsyncOsnClient
from fabric.client import DeliverFailed, OsnClient, OsnUnreachable
from fabric.envelopes import make_envelope
from fabric.identity import NamedIdentity
from osn.settings import OsnSettings
from fabric.tls import ClientTls
from osn.tls import cert_hash
from osn.wire.common import common_pb2
from osn.wire.orderer import ab_pb2, ab_pb2_grpc
from ground.cache import cache_dir
from tests.orderer.osn_fixture import running_osn


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> material.Material:
    root = tmp_path_factory.mktemp("tls") / "material"
    return material.generate_crypto(["osn1"], fabric_tools(cache_dir()), root, sans={"osn1": ["127.0.0.1"]})


def _server_tls(made: material.Material, mutual: bool = True) -> dict:
    tls = made.orderer_tls("osn1")
    return {"certificate": str(tls / "server.crt"), "private_key": str(tls / "server.key"),
            "client_auth_required": mutual, "client_root_cas": [str(made.tls_ca("client"))] if mutual else []}


def _client(made: material.Material, mutual: bool = True) -> NamedIdentity:
    tls = ClientTls.load(made.client_tls("user"), mutual=mutual)
    return NamedIdentity("alice", tls=ClientTls(made.tls_ca("orderer").read_bytes(), tls.cert_pem, tls.key_pem))


def test_a_client_with_its_tls_pair_broadcasts_and_delivers_over_mutual_tls(made, tmp_path: Path) -> None:
    with running_osn(tmp_path, tls=_server_tls(made), identity=_client(made)) as osn:
        assert osn.client.broadcast(osn.address, "ch0", "t1") == "SUCCESS"
        assert osn.client.broadcast(osn.address, "ch0", "t2") == "SUCCESS"
        blocks = osn.client.deliver(osn.address, "ch0", 0, 0, timeout=10)
        assert blocks[0]["txs"] == ["t1", "t2"]
        answers: list = []
        done = threading.Event()
        asynchronous = AsyncOsnClient(osn.client.identity)
        try:
            asynchronous.deliver(osn.address, "ch0", 0, lambda a: (answers.append(a), done.set()), stop=0, timeout=10)
            assert done.wait(10)
        finally:
            asynchronous.close()
        assert [b["txs"] for b in answers[0]] == [["t1", "t2"]]


def test_server_only_tls_serves_a_client_that_presents_no_certificate(made, tmp_path: Path) -> None:
    with running_osn(tmp_path, tls=_server_tls(made, mutual=False), identity=_client(made, mutual=False)) as osn:
        assert osn.client.broadcast(osn.address, "ch0", "t1") == "SUCCESS"
        assert osn.client.deliver(osn.address, "ch0", "oldest", timeout=10) == []


def test_a_client_without_a_certificate_is_refused_at_the_handshake_under_mutual_tls(made, tmp_path: Path) -> None:
    with running_osn(tmp_path, tls=_server_tls(made), identity=_client(made)) as osn:
        bare = OsnClient(_client(made, mutual=False))
        try:
            with pytest.raises(OsnUnreachable) as refused:
                bare.broadcast(osn.address, "ch0", "t1", timeout=5)
            assert refused.value.code == "UNAVAILABLE"
        finally:
            bare.close()


def test_a_plain_grpc_client_gets_no_answer_from_a_tls_osn(made, tmp_path: Path) -> None:
    with running_osn(tmp_path, tls=_server_tls(made), identity=_client(made)) as osn:
        plain = OsnClient(NamedIdentity("alice"))
        try:
            with pytest.raises(OsnUnreachable):
                plain.broadcast(osn.address, "ch0", "t1", timeout=5)
        finally:
            plain.close()


@pytest.mark.parametrize("claimed", [b"", b"\x01" * 32], ids=["missing", "another-certificate"])
def test_a_deliver_not_bound_to_the_connections_certificate_is_bad_request(made, tmp_path: Path,
                                                                           claimed: bytes) -> None:
    identity = _client(made)
    with running_osn(tmp_path, tls=_server_tls(made), identity=identity) as osn:
        assert osn.client.broadcast(osn.address, "ch0", "t1") == "SUCCESS"
        seek = ab_pb2.SeekInfo(start=ab_pb2.SeekPosition(oldest=ab_pb2.SeekOldest()),
                               stop=ab_pb2.SeekPosition(newest=ab_pb2.SeekNewest()))
        request = make_envelope("ch0", identity, seek.SerializeToString(), header_type=common_pb2.DELIVER_SEEK_INFO,
                                tls_cert_hash=claimed)
        channel = grpc.secure_channel(osn.address, identity.tls.credentials())
        try:
            answers = list(ab_pb2_grpc.AtomicBroadcastStub(channel).Deliver(iter([request]), timeout=10))
        finally:
            channel.close()
        assert [common_pb2.Status.Name(a.status) for a in answers] == ["BAD_REQUEST"]
        # The client's own request carries the hash of the certificate it presents, and passes.
        assert identity.tls.binding_hash == cert_hash(identity.tls.cert_pem) != claimed
        with pytest.raises(DeliverFailed, match="NOT_FOUND"):
            osn.client.deliver(osn.address, "ch9", 0, 0, timeout=10)


def test_mutual_tls_without_client_root_cas_is_refused_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="client_auth_required needs client_root_cas"):
        OsnSettings.model_validate({"name": "osn1", "kafka_bootstrap_servers": ["k:9092"], "channels": ["ch0"],
                                    "tls": {"certificate": "c", "private_key": "k", "client_auth_required": True}})
