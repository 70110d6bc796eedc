"""The registries are the one home of what they name: every fault kind ships its scenario and
names a registered fault, every shipped scenario names registered workloads and faults, and
every checker's anomalies have a verdict rule."""
from __future__ import annotations

import tomllib

from checkers.registry import CHECKS
from checkers.verdict import KAFKA, NODES, ORDERING
from ground.fault_kinds import FAULT_KINDS, MODE_FAULT_KINDS, SCHEDULE_KINDS
from harness.scenario import SCENARIOS_DIR
from nemesis.registry import FAULTS
from workloads.registry import WORKLOADS


def test_every_fault_kind_ships_its_scenario_and_the_scenario_runs_that_fault() -> None:
    for kind in FAULT_KINDS:
        path = SCENARIOS_DIR / f"{kind}.toml"
        assert path.is_file(), f"fault kind {kind} has no scenarios/{kind}.toml"
        nemesis = tomllib.loads(path.read_text()).get("nemesis", {})
        faults = nemesis.get("faults", [])
        # "random" and "random-disk" are schedules of many faults (harness/schedules/random_faults.py).
        assert kind in faults or (kind in SCHEDULE_KINDS and nemesis.get("schedule") == "random"), \
            f"scenarios/{kind}.toml runs {faults}, not {kind}"
    assert set(MODE_FAULT_KINDS) <= set(FAULT_KINDS) and set(SCHEDULE_KINDS) <= set(FAULT_KINDS)


def test_every_shipped_scenario_names_only_registered_workloads_and_faults() -> None:
    for path in sorted(SCENARIOS_DIR.glob("*.toml")):
        data = tomllib.loads(path.read_text())
        for workload in data.get("workloads", []):
            assert workload["name"] in WORKLOADS, f"{path.name}: unknown workload {workload['name']}"
        nemesis = data.get("nemesis", {})
        for fault in nemesis.get("faults", []):
            assert fault in FAULTS, f"{path.name}: unknown fault {fault}"


def test_each_checker_names_the_anomalies_whose_rules_it_follows() -> None:
    assert {name: check.name for name, check in CHECKS.items()} == {name: name for name in CHECKS}
    assert CHECKS["kafka"].anomalies == KAFKA and CHECKS["ordering"].anomalies == ORDERING
    assert CHECKS["nodes"].anomalies == NODES
