"""The registries are the one home of what they name: every fault kind ships its scenario and
names a registered fault, every shipped scenario names registered workloads and faults, and
every checker's anomalies have a verdict rule."""
from __future__ import annotations

import tomllib

from checkers.registry import CHECKS
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


def test_every_anomaly_ground_names_is_owned_by_exactly_one_checker() -> None:
    """ground/anomalies.py names each anomaly once; a checker that forgot one (or two that
    both claim one) would leave its verdict rule unapplied, or applied twice."""
    from ground.anomalies import ANOMALIES

    owners: dict[str, list[str]] = {}
    for name, check in CHECKS.items():
        assert check.name == name
        for anomaly in check.anomalies:
            owners.setdefault(anomaly, []).append(name)
    assert {a.name: len(owners.get(a.name, [])) for a in ANOMALIES} == {a.name: 1 for a in ANOMALIES}


def test_a_renamed_fault_kind_is_still_understood_once_with_its_new_name(capsys) -> None:
    from ground import fault_kinds
    from ground.variant import parse_variant
    from harness.scenario import load_scenario
    from nemesis.registry import fault_factory

    fault_kinds._SAID.clear()
    assert load_scenario("txn-coordinator-pause").name == "pause-txn-coordinator"
    assert fault_factory("txn-coordinator-pause")({}).roles() == fault_factory("pause-txn-coordinator")({}).roles()
    variant = parse_variant({"name": "v", "cluster": {"brokers": 3}, "expect": {"txn-coordinator-pause": "valid"}}, "v")
    assert variant.expect == {"pause-txn-coordinator": "valid"}
    said = capsys.readouterr().err.splitlines()
    assert said == ["ordeal: 'txn-coordinator-pause' is now called 'pause-txn-coordinator'; the old name will be "
                    "refused in a later release"]


def test_the_registries_hold_what_their_modules_ship_and_no_tests_stand_ins() -> None:
    """A test module that registered a stand-in at import would leave it in the registry for
    every later test of the session; tests register theirs through the `registered` fixture
    (tests/conftest.py), which takes them out again. Every module of the session is imported
    before the first test runs, so a registration at import anywhere shows here."""
    import importlib.util

    import nemesis.registry
    import workloads.registry

    for module, name in ((nemesis.registry, "FAULTS"), (workloads.registry, "WORKLOADS")):
        spec = importlib.util.spec_from_file_location(f"{module.__name__}_as_shipped", module.__file__)
        shipped = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(shipped)  # the module's code run afresh: its registry as it ships
        now, ships = set(getattr(module, name)), set(getattr(shipped, name))
        assert (sorted(now - ships), sorted(ships - now)) == ([], []), f"{module.__name__}.{name}: (added, removed)"
