"""Channel config updates of the batch settings, as the ordering workload builds them
(fabric/config_update.py), judged by Fabric v1.4.12's own orderer: run as a local
process on solo consensus (no Kafka needed: what is under test is that Fabric takes the update
as built and signed, and orders it alone in a block named by the update's label)."""
from __future__ import annotations

from collections.abc import Iterator

import pytest

from osn.batch_config import batch_value
from fabric.config_update import (batch_update, config_update_envelope, consensus_of,
                                            consensus_update)
from fabric.client import DeliverFailed, OsnClient
from fabric.envelopes import label_nonce
from fabric.identity import MspIdentity
from osn.wire.common import configtx_pb2
from osn.wire.orderer import configuration_pb2
from tests.orderer.fabric_process import SoloNetwork, solo_network

CHANNEL = "ch0"


@pytest.fixture(scope="module")
def osn(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SoloNetwork]:
    """One orderer for the module's tests, which run in order: each builds on the config the
    one before left."""
    with solo_network(tmp_path_factory.mktemp("fabric-config")) as network:
        yield network


def _current_config(osn: SoloNetwork) -> configtx_pb2.Config:
    return osn.current_config(CHANNEL)


def _submit(osn: SoloNetwork, config: configtx_pb2.Config, name: str, setting: int, label: str,
            signer: MspIdentity | None = None) -> str:
    update, _ = batch_update(CHANNEL, config, name, setting)
    envelope = config_update_envelope(CHANNEL, update, [signer or osn.orderer_admin], osn.user, label_nonce(label))
    return osn.client.broadcast_envelope(osn.address, envelope, timeout=10)


def _block_with(osn: SoloNetwork, label: str) -> dict:
    return osn.block_with(label, CHANNEL)


def test_a_batch_size_update_signed_by_the_orderer_admin_is_ordered_alone_and_named_by_its_label(osn: SoloNetwork) -> None:
    before = _current_config(osn)
    count, version = batch_value(before, "max_message_count")
    assert count == 10
    assert _submit(osn, before, "max_message_count", 3, "cfg-size-1") == "SUCCESS"
    block = _block_with(osn, "cfg-size-1")
    assert block["txs"] == ["cfg-size-1"]
    assert batch_value(_current_config(osn), "max_message_count") == (3, version + 1)


def test_blocks_cut_after_the_update_follow_the_new_max_message_count(osn: SoloNetwork) -> None:
    assert batch_value(_current_config(osn), "max_message_count")[0] == 3
    sent = [f"after-size-{i}" for i in range(7)]
    assert all(osn.client.broadcast(osn.address, CHANNEL, tx) == "SUCCESS" for tx in sent)
    for tx in sent:
        _block_with(osn, tx)
    held = [b for b in osn.client.deliver(osn.address, CHANNEL, 0, None, timeout=10)
            if set(b["txs"]) & set(sent)]
    assert sorted(tx for b in held for tx in b["txs"]) == sorted(sent)
    assert max(len(b["txs"]) for b in held) <= 3


def test_an_update_built_on_a_stale_config_is_refused(osn: SoloNetwork) -> None:
    current = _current_config(osn)
    stale = configtx_pb2.Config()
    stale.CopyFrom(current)
    stale.channel_group.groups["Orderer"].values["BatchSize"].version -= 1
    assert _submit(osn, stale, "max_message_count", 4, "cfg-stale") == "BAD_REQUEST"


def test_an_update_signed_by_the_client_orgs_admin_alone_is_forbidden(osn: SoloNetwork) -> None:
    status = _submit(osn, _current_config(osn), "max_message_count", 5, "cfg-client", signer=osn.client_admin)
    assert status in ("FORBIDDEN", "BAD_REQUEST")


def test_a_batch_timeout_update_takes_effect_as_milliseconds(osn: SoloNetwork) -> None:
    before = _current_config(osn)
    _, version = batch_value(before, "batch_timeout_ms")
    assert _submit(osn, before, "batch_timeout_ms", 300, "cfg-timeout-1") == "SUCCESS"
    assert _block_with(osn, "cfg-timeout-1")["txs"] == ["cfg-timeout-1"]
    assert batch_value(_current_config(osn), "batch_timeout_ms") == (300, version + 1)


# -- maintenance mode (the first step of the Kafka-to-Raft migration) -------------------------
@pytest.fixture(scope="module")
def as_orderer(osn: SoloNetwork) -> Iterator[OsnClient]:
    """A client of the orderer org's admin: in maintenance mode only the orderer org may read."""
    client = OsnClient(osn.orderer_admin)
    try:
        yield client
    finally:
        client.close()


def _consensus(osn: SoloNetwork, reader: OsnClient, label: str, **change: object) -> str:
    update, _ = consensus_update(CHANNEL, osn.current_config(CHANNEL, reader), **change)
    envelope = config_update_envelope(CHANNEL, update, [osn.orderer_admin], osn.orderer_admin, label_nonce(label))
    return reader.broadcast_envelope(osn.address, envelope, timeout=10)


def test_in_maintenance_mode_normal_txs_and_the_client_orgs_reads_are_refused(osn: SoloNetwork,
                                                                             as_orderer: OsnClient) -> None:
    maintenance = configuration_pb2.ConsensusType.STATE_MAINTENANCE
    assert _consensus(osn, as_orderer, "cfg-maint-on", state=maintenance) == "SUCCESS"
    osn.block_with("cfg-maint-on", CHANNEL, client=as_orderer)
    assert consensus_of(osn.current_config(CHANNEL, as_orderer)).state == maintenance
    assert osn.client.broadcast(osn.address, CHANNEL, "during-maintenance") != "SUCCESS"
    with pytest.raises(DeliverFailed) as refused:  # the client org may no longer read
        osn.client.deliver(osn.address, CHANNEL, 0, None, timeout=10)
    assert refused.value.status == "FORBIDDEN"
    # The orderer org's other config updates still pass (1.4.12 checks only ConsensusType's
    # transitions in maintenance mode; the guide asks for none but the migration's).
    update, _ = batch_update(CHANNEL, osn.current_config(CHANNEL, as_orderer), "max_message_count", 6)
    envelope = config_update_envelope(CHANNEL, update, [osn.orderer_admin], osn.orderer_admin,
                                      label_nonce("cfg-size-maint"))
    assert as_orderer.broadcast_envelope(osn.address, envelope, timeout=10) == "SUCCESS"


def test_leaving_maintenance_mode_serves_normal_txs_and_reads_again(osn: SoloNetwork, as_orderer: OsnClient) -> None:
    normal = configuration_pb2.ConsensusType.STATE_NORMAL
    assert _consensus(osn, as_orderer, "cfg-maint-off", state=normal) == "SUCCESS"
    osn.block_with("cfg-maint-off", CHANNEL, client=as_orderer)
    assert osn.client.broadcast(osn.address, CHANNEL, "after-maintenance") == "SUCCESS"
    assert osn.block_with("after-maintenance", CHANNEL)["txs"] == ["after-maintenance"]
    assert "during-maintenance" not in {tx for b in osn.client.deliver(osn.address, CHANNEL, 0, None, timeout=10)
                                        for tx in b["txs"]}


def test_the_consensus_type_may_not_change_outside_maintenance_mode(osn: SoloNetwork, as_orderer: OsnClient) -> None:
    assert _consensus(osn, as_orderer, "cfg-type-normal", consensus_type="etcdraft") == "BAD_REQUEST"
