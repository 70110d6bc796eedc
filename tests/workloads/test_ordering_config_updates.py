"""The ordering workload's config updates (config_fraction), without a cluster: the generator
draws them among its ops, one in flight per channel and setting; they are refused where no
one can sign them; and on Fabric's own orderer (a local solo process) one completes ok with
the version it wrote, the config block named by its label."""
from __future__ import annotations

import random

import pytest

from ground.variant import load_variant
from ground.op import FAIL, OK
from tests.orderer.fabric_process import SoloNetwork, solo_network
from tests.support import OsnAt
from workloads.ordering import ConfigSlots, DeliverCursors, OrderingOps, OrderingOptions
from workloads.registry import workload_factory


@pytest.fixture(scope="module")
def fabric_solo(tmp_path_factory: pytest.TempPathFactory):
    with solo_network(tmp_path_factory.mktemp("solo")) as network:
        yield network


def _ops(fraction: float, slots: ConfigSlots, n: int = 400) -> list[dict]:
    ops = OrderingOps(OrderingOptions(config_fraction=fraction), ["ch0", "ch1"], ["osn1", "osn2"], "tok",
                      DeliverCursors(), random.Random(7), slots)
    return [ops.op(None) for _ in range(n)]


def test_without_config_fraction_no_config_update_is_drawn() -> None:
    assert {op["f"] for op in _ops(0.0, ConfigSlots())} == {"broadcast", "deliver"}


def test_config_updates_change_one_setting_each_and_hold_their_slot_until_given_back() -> None:
    slots = ConfigSlots()
    updates = [op for op in _ops(0.3, slots) if op["f"] == "config-update"]
    # Never given back here: one per (channel, setting), four in all.
    assert len(updates) == 4
    assert {(u["value"]["channel"], next(k for k in ("max_message_count", "batch_timeout_ms") if k in u["value"]))
            for u in updates} == {(c, s) for c in ("ch0", "ch1") for s in ("max_message_count", "batch_timeout_ms")}
    assert all(u["value"]["tx"].startswith("cfg-tok-") for u in updates)
    assert all(2 <= u["value"].get("max_message_count", 2) <= 20 for u in updates)
    slots.give_back("ch0", "max_message_count")
    assert slots.take("ch0", "max_message_count") and not slots.take("ch0", "max_message_count")


def test_config_updates_are_refused_on_the_model_which_orders_none() -> None:
    with pytest.raises(ValueError, match="needs Fabric's orderer"):
        workload_factory("ordering")({"config_fraction": 0.01}, load_variant("fabric-recommended-model"))


def test_a_config_update_without_a_signer_fails_and_gives_its_slot_back() -> None:
    w = workload_factory("ordering")({"config_fraction": 0.1}, load_variant("fabric-recommended"))
    client = w.client.open(OsnAt("127.0.0.1:1"), 0)
    slots = client.slots
    assert slots.take("ch0", "batch_timeout_ms")
    try:
        answer = client.invoke({"process": 0, "f": "config-update",
                                "value": {"channel": "ch0", "osn": "osn1", "tx": "cfg-x-1", "batch_timeout_ms": 300}})
    finally:
        client.close()
    assert (answer["type"], answer["error"]) == (FAIL, "no-config-admin")
    assert slots.take("ch0", "batch_timeout_ms")


def test_on_fabrics_orderer_a_config_update_completes_ok_with_the_version_it_wrote(fabric_solo: SoloNetwork) -> None:
    w = workload_factory("ordering")({"config_fraction": 0.1, "broadcast_timeout": 10}, fabric_solo.variant)
    cluster = OsnAt(fabric_solo.address, fabric_solo.user, fabric_solo.orderer_admin)
    client = w.client.open(cluster, 0)
    try:
        answer = client.invoke({"process": 0, "f": "config-update",
                                "value": {"channel": "ch0", "osn": "osn1", "tx": "cfg-w-1", "max_message_count": 4}})
        assert answer["type"] == OK, answer
        assert answer["value"]["status"] == "SUCCESS" and answer["value"]["version"] >= 1
        assert fabric_solo.block_with("cfg-w-1")["txs"] == ["cfg-w-1"]
    finally:
        client.close()
