"""The Kafka-to-Raft migration's config steps (clusters/migration.py) against Fabric's own
orderer, run as a local solo process (no Kafka, so only the steps that need none): every
channel, the system channel first, into maintenance mode and waited for; the probe finds a
normal tx and the client org's read refused; back to normal mode; and the fault that runs the
migration in a scenario runs it once."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from fabric.material import SYSTEM_CHANNEL
from clusters.migration import MAINTENANCE, NORMAL, Migration, MigrationFailed, consensus_state
from fabric.client import OsnClient
from nemesis.registry import fault_factory
from tests.orderer.fabric_process import SoloNetwork, solo_network


@pytest.fixture(scope="module")
def network(tmp_path_factory: pytest.TempPathFactory):
    with solo_network(tmp_path_factory.mktemp("migrate"), channels=("ch0", "ch1")) as running:
        yield running


def _cluster(network: SoloNetwork, admin=True) -> SimpleNamespace:
    node = SimpleNamespace(name="osn1", ip="127.0.0.1", state="running")
    return SimpleNamespace(variant=network.variant, osns=[node], osn_addresses=lambda: {"osn1": network.address},
                           config_admin=lambda: network.orderer_admin if admin else None,
                           client_identity=lambda: network.user)


def test_every_channel_enters_maintenance_mode_system_channel_first_and_refuses_normal_txs(network) -> None:
    recorded: list[dict] = []
    migration = Migration(_cluster(network), recorded.append)
    migration._step("maintenance-on", lambda: migration._update_all(state=MAINTENANCE))
    migration._step("refused-in-maintenance", migration._probe_refusal)
    assert migration.channels == [SYSTEM_CHANNEL, "ch0", "ch1"]
    admin = OsnClient(network.orderer_admin)
    try:
        assert {c: consensus_state(admin, network.address, c).state for c in migration.channels} == \
            {c: MAINTENANCE for c in migration.channels}
    finally:
        admin.close()
    steps = [op["value"]["step"] for op in recorded]
    assert steps == ["maintenance-on", "refused-in-maintenance"] and not [op for op in recorded if "error" in op]
    probe = recorded[1]["value"]
    assert probe["broadcast"] != "SUCCESS" and probe["deliver"] == "FORBIDDEN"


def test_leaving_maintenance_mode_serves_the_client_org_again(network) -> None:
    migration = Migration(_cluster(network), lambda op: None)
    migration._step("maintenance-off", lambda: migration._update_all(state=NORMAL))
    assert network.client.broadcast(network.address, "ch0", "after-migration-steps") == "SUCCESS"
    assert network.block_with("after-migration-steps", "ch0")["txs"] == ["after-migration-steps"]


def test_the_probe_fails_the_step_when_maintenance_mode_lets_a_normal_tx_through(network) -> None:
    recorded: list[dict] = []
    migration = Migration(_cluster(network), recorded.append)  # the channels are in normal mode now
    with pytest.raises(MigrationFailed, match="maintenance mode not enforced"):
        migration._step("refused-in-maintenance", migration._probe_refusal)
    assert "maintenance mode not enforced" in recorded[-1]["error"]


def test_a_migration_needs_an_ordering_service_that_takes_config_updates(network) -> None:
    with pytest.raises(MigrationFailed, match="no config updates"):
        Migration(_cluster(network, admin=False), lambda op: None)


def test_the_fault_migrates_once_a_second_start_does_nothing() -> None:
    fault = fault_factory("kafka-to-raft")({})
    fault.started, fault.completed = True, True
    answer = fault.start(fault.rng_for(1))
    assert answer["f"] == "migrate" and answer["value"]["already"] is True
    assert fault.stop()["value"]["note"] == "a migration is not undone"


class _Node:
    def __init__(self, name: str, log: list[str]):
        self.name, self.log = name, log

    def kill(self) -> None:
        self.log.append(f"kill {self.name}")

    def start(self) -> None:
        self.log.append(f"start {self.name}")


def test_an_orderer_killed_mid_restart_is_started_again_and_both_are_recorded(monkeypatch) -> None:
    import clusters.migration as migration

    log: list[str] = []
    ran: list[str] = []

    class Steps:
        def __init__(self, cluster, record, kafka_stop, between):
            self.between = between

        def run(self):
            for step in ("maintenance-on", "stop", migration.STARTED_AS_RAFT, "maintenance-off"):
                self.between(step)
                ran.append(step)

    monkeypatch.setattr(migration, "Migration", Steps)
    fault = fault_factory("kafka-to-raft")({"kill_orderer_in_restart": True, "restart_after": 0})
    fault.cluster = SimpleNamespace(osns=[_Node("osn1", log), _Node("osn2", log)], brokers=[])
    noted: list[dict] = []
    fault.bind_recorder(noted.append)
    answer = fault.start(fault.rng_for(7))
    assert answer["value"]["completed"] is True and len(answer["value"]["killed"]) == 1
    victim = answer["value"]["killed"][0]
    assert log == [f"kill {victim}", f"start {victim}"]
    assert [(n["f"], n["value"]["during"]) for n in noted] == [("kill", "restart-as-raft"),
                                                                ("start", "restart-as-raft")]
    assert ran[-1] == "maintenance-off"
