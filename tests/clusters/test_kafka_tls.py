"""TLS between the orderers and Kafka (orderer.kafka_tls), without a cluster: the material
gives each broker a keystore whose certificate names its address and chains to the brokers'
TLS CA; a broker's CLUSTER listener alone speaks TLS and requires a client certificate from
the orderers' TLS CA; Fabric's orderer and the model are told the same files."""
from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.serialization import pkcs12

from fabric import material
from fabric.material_volume import MOUNT
from clusters.images.fabric_build import fabric_tools
from clusters.node_config import osn_json, server_properties
from osn.settings import OsnSettings
from clusters.ordering_service import fabric_kafka_tls_env
from ground.variant import Variant, load_variant
from ground.cache import cache_dir

BROKER_SANS = {"kafka1": ["10.213.9.21"], "kafka2": ["10.213.9.22"]}


def _with(variant: Variant, **orderer: object) -> Variant:
    return Variant.model_validate({**variant.model_dump(), "orderer": {**variant.orderer.model_dump(), **orderer}})


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> material.Material:
    root = tmp_path_factory.mktemp("kafka-tls") / "material"
    return material.generate(load_variant("fabric-recommended"), ["osn1"], ["10.213.9.21:9094"],
                             fabric_tools(cache_dir()), root, broker_sans=BROKER_SANS)


def test_each_brokers_keystore_holds_a_key_pair_naming_its_address_from_the_brokers_tls_ca(
        made: material.Material) -> None:
    ca = x509.load_pem_x509_certificate(made.tls_ca("kafka").read_bytes())
    for broker, ips in BROKER_SANS.items():
        key, cert, chain = pkcs12.load_key_and_certificates(made.broker_keystore(broker).read_bytes(),
                                                            material.KEYSTORE_PASSWORD.encode())
        assert key is not None and cert is not None
        sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        assert sans.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address(ips[0])]
        assert cert.issuer == ca.subject
        assert [c.subject for c in chain] == [ca.subject]


def test_the_brokers_ca_is_not_the_orderers_so_neither_side_trusts_the_other_by_accident(
        made: material.Material) -> None:
    assert made.tls_ca("kafka").read_bytes() != made.tls_ca("orderer").read_bytes()


def test_without_broker_names_no_kafka_material_is_made(tmp_path: Path) -> None:
    made = material.generate_crypto(["osn1"], fabric_tools(cache_dir()), tmp_path / "material")
    assert not made.tls_ca("kafka").exists() and not (made.root / "kafka").exists()


def _props(variant: Variant) -> dict[str, str]:
    text = server_properties(variant, 2, "10.213.9.22", "10.213.9.2:19092", ["10.213.9.11"])
    return dict(line.split("=", 1) for line in text.splitlines())


def test_only_the_cluster_listener_speaks_tls_and_it_requires_a_client_certificate() -> None:
    props = _props(_with(load_variant("fabric-recommended"), kafka_tls=True))
    assert props["listener.security.protocol.map"] == "CLIENT:PLAINTEXT,BROKER:PLAINTEXT,CLUSTER:SSL"
    assert props["listener.name.cluster.ssl.client.auth"] == "required"
    assert props["listener.name.cluster.ssl.keystore.location"] == f"{MOUNT}/kafka/kafka2/keystore.p12"
    assert props["listener.name.cluster.ssl.truststore.location"] == f"{MOUNT}/tlsca/orderer.pem"


def test_without_kafka_tls_every_listener_is_plaintext() -> None:
    props = _props(_with(load_variant("fabric-recommended"), kafka_tls=False))
    assert props["listener.security.protocol.map"] == "CLIENT:PLAINTEXT,BROKER:PLAINTEXT,CLUSTER:PLAINTEXT"
    assert not [k for k in props if k.startswith("listener.name.cluster.")]


@pytest.mark.parametrize("change, words", [
    ({"cluster": {"osns": 0}}, "needs cluster.osns"),
    ({"orderer": {"consensus": "etcdraft", "tls": "mutual"}}, "consensus \"kafka\""),
])
def test_kafka_tls_is_refused_where_no_orderer_talks_to_kafka(change: dict, words: str) -> None:
    base = load_variant("fabric-recommended").model_dump()
    data = {**base, **{k: {**base[k], **v} for k, v in change.items()}}
    data["orderer"] = {**data["orderer"], "kafka_tls": True}
    with pytest.raises(ValueError, match=words):
        Variant.model_validate(data)


def test_fabrics_orderer_reads_its_tls_key_pair_and_the_brokers_ca_from_the_material() -> None:
    env = fabric_kafka_tls_env("osn2")
    assert env["ORDERER_KAFKA_TLS_ENABLED"] == "true"
    assert env["ORDERER_KAFKA_TLS_CERTIFICATE_FILE"] == f"{MOUNT}/orderers/osn2/tls/server.crt"
    assert env["ORDERER_KAFKA_TLS_PRIVATEKEY_FILE"] == f"{MOUNT}/orderers/osn2/tls/server.key"
    assert env["ORDERER_KAFKA_TLS_ROOTCAS_FILE"] == f"{MOUNT}/tlsca/kafka.pem"


def test_the_model_connects_to_kafka_with_the_same_files_as_fabrics_orderer() -> None:
    variant = _with(load_variant("fabric-recommended-model"), kafka_tls=True)
    settings = OsnSettings.model_validate_json(osn_json(variant, "osn2", ["10.213.9.21"]))
    config = settings.kafka_client_config()
    env = fabric_kafka_tls_env("osn2")
    assert config["security.protocol"] == "ssl"
    assert (config["ssl.certificate.location"], config["ssl.key.location"], config["ssl.ca.location"]) == (
        env["ORDERER_KAFKA_TLS_CERTIFICATE_FILE"], env["ORDERER_KAFKA_TLS_PRIVATEKEY_FILE"],
        env["ORDERER_KAFKA_TLS_ROOTCAS_FILE"])


def test_the_model_without_kafka_tls_connects_in_plaintext() -> None:
    variant = _with(load_variant("fabric-recommended-model"), kafka_tls=False)
    settings = OsnSettings.model_validate_json(osn_json(variant, "osn1", ["10.213.9.21"]))
    assert settings.kafka_client_config() == {"bootstrap.servers": "10.213.9.21:9094"}
