"""Scenario files: invalid ones are refused with one line naming the field, before anything boots."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harness.plan import prepare
from harness.scenario import SCENARIOS_DIR, ScenarioError, load_scenario, parse_scenario

VALID = """
concurrency = 2
duration = 1
seed = 3
[[workloads]]
name = "noop"
[nemesis]
faults = ["noop"]
interval = 1
"""

INVALID = [
    ("duration = 0\n[[workloads]]\nname = 'noop'\n", "duration: must be > 0"),
    ("duration = -5\n[[workloads]]\nname = 'noop'\n", "duration: must be > 0"),
    ("concurrency = 0\n[[workloads]]\nname = 'noop'\n", "concurrency: must be >= 1"),
    ("rate = -1\n[[workloads]]\nname = 'noop'\n", "rate: must be >= 0"),
    ("colour = 'red'\n[[workloads]]\nname = 'noop'\n", "colour: unknown key"),
    ("duration = 5\n", "workloads: required"),
    ("workloads = []\n", "workloads: must not be empty"),
    ("[[workloads]]\nname = 'noop'\nspeed = 3\n", "workloads.0.speed: unknown key"),
    ("[[workloads]]\nname = 'noop'\n[nemesis]\ninterval = 0\n", "nemesis.interval: must be > 0"),
    ("duration = 'long'\n[[workloads]]\nname = 'noop'\n", "duration: Input should be a valid number"),
    ("[[workloads]]\nname = 'noop'\noptions = { latency = -1 }\n",
     "workloads.0.options.latency: must be >= 0"),
    ("[[workloads]]\nname = 'no-such-workload'\n", "workloads.0.name: unknown workload no-such-workload (known: "),
    ("[[workloads]]\nname = 'noop'\n[nemesis]\nfaults = ['no-such-fault']\n",
     "nemesis.faults.0: unknown fault no-such-fault (known: "),
    ("[[workloads]]\nname = 'noop'\n[nemesis]\nfaults = ['noop']\noptions = { noop = { x = 1 } }\n",
     "nemesis.options.noop: noop takes no options"),
    ("variant = 'no-such-variant'\n[[workloads]]\nname = 'noop'\n", "variant: variant no-such-variant: no such file or shipped variant"),
    ("duration = \n", "not valid TOML"),
    ("variant = 'fabric-recommended'\nclient = { implementation = 'java', version = '2.0.0' }\n"
     "[[workloads]]\nname = 'noop'\n", "client.version 2.0.0: only Java clients 3.x, 4.x are supported"),
    ("variant = 'fabric-recommended'\nclient = { implementation = 'librdkafka', version = '2.3.0rc1' }\n"
     "[[workloads]]\nname = 'noop'\n", "client.version '2.3.0rc1' is not a confluent-kafka release number X.Y.Z"),
    ("variant = 'fabric-recommended'\nclient = { implementation = 'go' }\n[[workloads]]\nname = 'noop'\n",
     "client.implementation: Input should be 'librdkafka' or 'java'"),
    ("client = { implementation = 'java' }\n[[workloads]]\nname = 'noop'\n",
     "client: a client needs a variant to run against"),
]


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "x.toml"
    path.write_text(text)
    return path


def refusal(path: Path) -> str:
    with pytest.raises(ScenarioError) as err:
        prepare(load_scenario(str(path)), str(path))
    return str(err.value)


@pytest.mark.parametrize("text,message", INVALID, ids=[m.split(":")[0] for _, m in INVALID])
def test_an_invalid_scenario_is_refused_naming_the_field(tmp_path, text, message):
    msg = refusal(write(tmp_path, text))
    assert msg.startswith(f"scenario {tmp_path / 'x.toml'}: ") and message in msg
    assert "\n" not in msg


def test_a_valid_scenario_loads_with_its_file_name_as_name(tmp_path):
    plan = prepare(load_scenario(str(write(tmp_path, VALID))), "x")
    assert plan.scenario.name == "x" and plan.seed == 3 and not plan.needs_cluster


def test_a_scenario_without_seed_gets_one_chosen_for_it(tmp_path):
    plan = prepare(load_scenario(str(write(tmp_path, VALID.replace("seed = 3", "")))), "x")
    assert isinstance(plan.seed, int)


def test_overrides_are_validated_like_the_file(tmp_path):
    with pytest.raises(ScenarioError, match="duration: must be > 0"):
        load_scenario(str(write(tmp_path, VALID)), {"duration": 0})


def test_a_shipped_scenario_is_found_by_name():
    assert load_scenario("noop").name == "noop"


def test_the_default_scenario_is_well_formed():
    s = load_scenario("default")
    assert s.variant == "fabric-recommended" and s.workloads[0].name == "kafka-log" and s.duration == 60


def test_an_unknown_scenario_name_lists_the_shipped_ones():
    with pytest.raises(ScenarioError, match="known: .*noop"):
        load_scenario("no-such-scenario")


def test_ordeal_run_refuses_an_invalid_scenario_with_exit_2_and_one_line(tmp_path):
    path = write(tmp_path, "duration = 0\n[[workloads]]\nname = 'noop'\n")
    proc = subprocess.run([sys.executable, "-m", "cli.main", "run", str(path), "--store", str(tmp_path / "store")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr == f"ordeal: scenario {path}: duration: must be > 0\n"
    assert not (tmp_path / "store").exists()  # nothing started, nothing written


def test_shipped_scenarios_directory_is_the_repositorys():
    assert (SCENARIOS_DIR / "default.toml").is_file()


def test_a_scenarios_client_is_what_its_kafka_workloads_use_and_the_cluster_keeps_its_variant(tmp_path):
    path = write(tmp_path, "variant = 'fabric-recommended'\nclient = { implementation = 'java', version = '4.4.0' }\n"
                           "[[workloads]]\nname = 'kafka-log'\n")
    plan = prepare(load_scenario(str(path)), str(path))
    assert plan.client.implementation == "java" and plan.client.version == "4.4.0"
    assert plan.variant.client.implementation == "librdkafka"  # the variant the cluster boots is unchanged
    client = plan.workloads["kafka-log"].client.state.client
    assert (client.implementation, client.version) == ("java", "4.4.0")


def test_a_scenario_pinning_a_librdkafka_release_runs_it_in_a_process_of_its_own(tmp_path):
    path = write(tmp_path, "variant = 'fabric-recommended'\nclient = { implementation = 'librdkafka', version = '2.3.0' }\n"
                           "[[workloads]]\nname = 'kafka-txn'\n")
    client = prepare(load_scenario(str(path)), str(path)).workloads["kafka-txn"].client.state.client
    assert (client.implementation, client.version, client.isolated) == ("librdkafka", "2.3.0", True)


def _judged(faults: list[str], variant: str = "fabric-recommended", kind: str | None = None):
    from ground.variant import load_variant

    nemesis = {"faults": faults, **({"kind": kind} if kind else {})}
    scenario = parse_scenario({"name": "mine", "variant": variant, "workloads": [{"name": "ordering"}],
                               "nemesis": nemesis}, "mine.toml")
    return load_variant(variant).judgement(scenario.nemesis.fault_kinds)


def test_a_scenario_of_ones_own_is_judged_by_its_faults_kinds_not_its_name():
    judged = _judged(["kill-osn"])
    assert (judged.kinds, judged.expectation, judged.available, judged.uncovered) == (["kill-osn"], "valid", True, [])


def test_a_mix_of_kinds_takes_the_strictest_expectation_and_any_promise():
    from ground.variant import load_variant

    v = load_variant("acks-1")
    kinds = ["kill-broker", "pause-broker"]
    judged = v.judgement(kinds)
    stated = [v.expect[k] for k in kinds]
    assert judged.expectation == min(stated, key=["valid", "invalid", "invalid-possible"].index)
    assert judged.available == any(v.available.get(k, False) for k in kinds)


def test_a_fault_the_variants_tables_do_not_cover_is_named_as_uncovered_and_promises_nothing():
    judged = _judged(["kill-minority", "kill-osn"])
    assert judged.uncovered == ["kill-minority"] and judged.available is True
    alone = _judged(["kill-minority"])
    assert (alone.expectation, alone.available, alone.uncovered) == ("valid", False, ["kill-minority"])


def test_a_scenario_may_still_name_its_kind():
    judged = _judged(["kill-minority"], variant="unclean-election", kind="unclean-toggle")
    assert judged.kinds == ["unclean-toggle"] and judged.uncovered == []
