"""The Fabric network's material, made by Fabric's own cryptogen and configtxgen from a
variant: the genesis block carries Kafka consensus, the variant's batch settings and the
brokers; each channel-creation tx names its channel and is signed by the client admin."""
from __future__ import annotations

from pathlib import Path

import pytest

from fabric import material
from clusters.images.fabric_build import fabric_tools
from fabric.config_update import sign_channel_creation
from fabric.identity import MspIdentity
from osn.wire.common import common_pb2, configtx_pb2
from osn.wire.orderer import configuration_pb2
from ground.variant import load_variant
from ground.cache import cache_dir

BROKERS = ["10.213.9.21:9094", "10.213.9.22:9094"]


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> material.Material:
    variant = load_variant("fabric-recommended")
    variant = variant.model_copy(update={"orderer": variant.orderer.model_copy(
        update={"max_message_count": 7, "batch_timeout_ms": 750, "preferred_max_bytes": 4096})})
    root = tmp_path_factory.mktemp("fabric") / "material"
    return material.generate(variant, ["osn1", "osn2"], BROKERS, fabric_tools(cache_dir()), root)


def _orderer_group(block: common_pb2.Block) -> configtx_pb2.ConfigGroup:
    envelope = common_pb2.Envelope.FromString(block.data.data[0])
    payload = common_pb2.Payload.FromString(envelope.payload)
    config = configtx_pb2.ConfigEnvelope.FromString(payload.data).config
    return config.channel_group.groups["Orderer"]


def test_genesis_block_orders_by_kafka_with_the_variants_batch_settings(made: material.Material) -> None:
    block = common_pb2.Block.FromString(made.genesis_block.read_bytes())
    orderer = _orderer_group(block)
    assert configuration_pb2.ConsensusType.FromString(orderer.values["ConsensusType"].value).type == "kafka"
    assert list(configuration_pb2.KafkaBrokers.FromString(orderer.values["KafkaBrokers"].value).brokers) == BROKERS
    size = configuration_pb2.BatchSize.FromString(orderer.values["BatchSize"].value)
    assert (size.max_message_count, size.preferred_max_bytes) == (7, 4096)
    assert configuration_pb2.BatchTimeout.FromString(orderer.values["BatchTimeout"].value).timeout == "750ms"
    assert sorted(orderer.groups) == ["OrdererOrg"]


def test_every_channel_has_a_creation_tx_that_the_admin_signs(made: material.Material) -> None:
    admin = MspIdentity.load(material.CLIENT_MSP, made.client_msp("admin"))
    for channel in ("ch0", "ch1"):
        tx = common_pb2.Envelope.FromString(made.channel_tx(channel).read_bytes())
        signed = sign_channel_creation(tx, admin)
        payload = common_pb2.Payload.FromString(signed.payload)
        header = common_pb2.ChannelHeader.FromString(payload.header.channel_header)
        assert (header.type, header.channel_id) == (common_pb2.CONFIG_UPDATE, channel)
        update = configtx_pb2.ConfigUpdateEnvelope.FromString(payload.data)
        assert len(update.signatures) == 1


def test_each_orderer_and_both_client_identities_have_their_msp(made: material.Material) -> None:
    for node in ("osn1", "osn2"):
        assert any((made.orderer_msp(node) / "keystore").iterdir())
        assert any((made.orderer_msp(node) / "signcerts").iterdir())
    for who in ("admin", "user"):
        identity = MspIdentity.load(material.CLIENT_MSP, made.client_msp(who))
        assert identity.msp_id == material.CLIENT_MSP and identity.sign(b"x")
    assert not (made.root / ".work").exists(), "the tools' inputs and the CA keys are not kept"


def test_a_tool_that_fails_is_one_line_naming_it(tmp_path: Path) -> None:
    with pytest.raises(material.MaterialError, match=r"^configtxgen .*failed"):
        material._run(fabric_tools(cache_dir()) / "bin" / "configtxgen", ["-profile", "Nope", "-outputBlock",
                                                                            str(tmp_path / "b")], tmp_path)
