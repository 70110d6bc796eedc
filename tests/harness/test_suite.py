"""Suites: the matrix, the budget, the judgement against each variant's expectations,
and what a suite writes. Runs use the noop scenario (no cluster) so they are quick; the
checkers run for real on their histories, in the tests' Spark server (check_server,
tests/conftest.py)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from ground.variant import VARIANTS_DIR
from ground.fault_kinds import FAULT_KINDS
from harness.scenario import SCENARIOS_DIR
from harness.suite import Budget, Cell, SuiteError, cells, fault_lines, load_suite, run_suite
from tests.harness import failing_fault


def write_suite(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "s.toml"
    path.write_text(body)
    return path


def one_cell(tmp_path: Path, variant: object, scenario: object, duration: float = 1) -> object:
    """A loaded suite of one cell: `scenario` on `variant`."""
    return load_suite(str(write_suite(tmp_path, f"""
budget = 600
[[matrix]]
variants = ["{variant}"]
scenarios = ["{scenario}"]
duration = {duration}
""")))


@pytest.fixture
def expecting_invalid(tmp_path: Path) -> tuple[Path, Path]:
    """A variant that expects `mixed` to be invalid, and a no-cluster scenario judged as the
    mixed fault kind (it names its kind: its own fault, noop, is no kind)."""
    variant = tmp_path / "strict.toml"
    text = (VARIANTS_DIR / "fabric-recommended.toml").read_text()
    variant.write_text(text.replace('name = "fabric-recommended"', 'name = "strict"')
                       .replace('mixed = "valid"', 'mixed = "invalid"'))
    scenario = tmp_path / "mixed.toml"
    scenario.write_text((SCENARIOS_DIR / "noop.toml").read_text().replace('faults = ["noop"]',
                                                                           'faults = ["noop"]\nkind = "mixed"'))
    return variant, scenario


def test_cells_are_grouped_by_variant_and_repeats_are_numbered(tmp_path):
    spec = load_suite(str(write_suite(tmp_path, """
budget = 100
[[matrix]]
variants = ["fabric-recommended", "acks-1"]
scenarios = ["noop"]
repeat = 2
[[matrix]]
variants = ["fabric-recommended"]
scenarios = ["default"]
duration = 5
""")))
    assert [(c.variant, c.scenario, c.round, c.duration) for c in cells(spec)] == [
        ("fabric-recommended", "noop", 0, None), ("fabric-recommended", "noop", 1, None),
        ("fabric-recommended", "default", 0, 5), ("acks-1", "noop", 0, None), ("acks-1", "noop", 1, None)]
    assert Cell("a", "b", 1).label == "a x b #2"


def test_a_matrix_with_clients_runs_each_cell_on_each_client_and_the_plan_names_it(tmp_path):
    from harness.suite import plan_cell

    spec = load_suite(str(write_suite(tmp_path, """
budget = 100
[[matrix]]
variants = ["kraft-recommended"]
scenarios = ["group-mixed"]
clients = ["librdkafka", "java"]
repeat = 2
""")))
    found = cells(spec)
    assert [(c.client, c.round) for c in found] == [("librdkafka", 0), ("java", 0), ("librdkafka", 1), ("java", 1)]
    assert found[3].label == "kraft-recommended x group-mixed (java) #2"
    assert [plan_cell(c, "s").client.implementation for c in found[:2]] == ["librdkafka", "java"]


def test_clients_may_name_releases_and_kafka_versions_are_an_axis_each_its_own_cluster(tmp_path):
    from harness.plan import Plan
    from harness.suite import plan_cell

    spec = load_suite(str(write_suite(tmp_path, """
budget = 100
[[matrix]]
variants = ["kraft-recommended"]
scenarios = ["txn-mixed"]
clients = ["librdkafka@2.3.0", "java@3.9.2"]
kafka_versions = ["3.9.2", "4.4.0"]
""")))
    found = cells(spec)
    assert [(c.kafka_version, c.client) for c in found] == [
        ("3.9.2", "librdkafka@2.3.0"), ("3.9.2", "java@3.9.2"), ("4.4.0", "librdkafka@2.3.0"), ("4.4.0", "java@3.9.2")]
    assert found[0].label == "kraft-recommended x txn-mixed (kafka 3.9.2, librdkafka@2.3.0)"
    plans: list[Plan] = [plan_cell(c, "s") for c in found]
    assert [(p.variant.name, p.variant.kafka.version, p.client.label) for p in plans[1:3]] == [
        ("kraft-recommended-kafka-3.9.2", "3.9.2", "java@3.9.2"),
        ("kraft-recommended-kafka-4.4.0", "4.4.0", "librdkafka@2.3.0")]
    client = plans[0].workloads["kafka-txn"].client.state.client
    assert (client.implementation, client.version, client.isolated) == ("librdkafka", "2.3.0", True)


def test_a_kafka_version_the_variants_mode_refuses_is_one_line_before_any_boot(tmp_path):
    with pytest.raises(SuiteError, match=r"fabric-recommended x noop \(kafka 4.4.0\): .* Kafka 4.4.0 has no ZooKeeper "
                                         "mode") as err:
        load_suite(str(write_suite(tmp_path, "budget = 9\n[[matrix]]\nvariants = ['fabric-recommended']\n"
                                             "scenarios = ['noop']\nkafka_versions = ['3.9.2', '4.4.0']")))
    assert "\n" not in str(err.value)


def test_a_client_release_that_cannot_be_installed_stops_the_suite_before_it_starts(tmp_path, monkeypatch):
    monkeypatch.setenv("ORDEAL_CACHE", str(tmp_path / "cache"))
    spec = load_suite(str(write_suite(tmp_path, "budget = 600\n[[matrix]]\nvariants = ['fabric-recommended']\n"
                                                "scenarios = ['noop']\nclients = ['librdkafka@2.99.0']")))
    with pytest.raises(SuiteError, match=r"noop \(librdkafka@2.99.0\): client: confluent-kafka 2.99.0 could not be "
                                         "installed") as err:
        run_suite(spec, tmp_path / "store", "s.toml", say=lambda _: None)
    assert "\n" not in str(err.value) and not (tmp_path / "store").exists()


def test_a_suite_run_a_variant_at_a_time_keeps_only_that_variants_cells_and_refuses_one_it_lacks(tmp_path):
    body = """
budget = 100
[[matrix]]
variants = ["fabric-recommended", "acks-1"]
scenarios = ["noop"]
repeat = 2
[[matrix]]
variants = ["fabric-recommended"]
scenarios = ["default"]
"""
    spec = load_suite(str(write_suite(tmp_path, body)), variants=["acks-1"])
    assert [(c.variant, c.scenario, c.round) for c in cells(spec)] == [("acks-1", "noop", 0), ("acks-1", "noop", 1)]
    with pytest.raises(SuiteError, match="no cell runs on min-isr-1") as err:
        load_suite(str(write_suite(tmp_path, body)), variants=["min-isr-1"])
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("body, message", [
    ("budget = 0\n[[matrix]]\nvariants = ['fabric-recommended']\nscenarios = ['noop']", "budget: must be > 0"),
    ("budget = 9\n[[matrix]]\nvariants = ['nope']\nscenarios = ['noop']", "nope x noop: scenario"),
    ("budget = 9\n[[matrix]]\nvariants = ['fabric-recommended']\nscenarios = ['nope']", "fabric-recommended x nope"),
    ("budget = 9\nmatrix = []", "matrix: "),
    ("budget = 9\n[[matrix]]\nvariants = ['kraft-recommended']\nscenarios = ['noop']\nclients = ['jvm']", "clients"),
    ("budget = 9\n[[matrix]]\nvariants = ['kraft-recommended']\nscenarios = ['noop']\nclients = ['librdkafka@2.3']",
     "matrix.0.clients: client.version '2.3' is not a confluent-kafka release"),
    ("budget = 9\n[[matrix]]\nvariants = ['kraft-recommended']\nscenarios = ['noop']\nkafka_versions = ['4.4']",
     "matrix.0.kafka_versions: '4.4' is not a Kafka release"),
    ("budget = 9\n[[matrix]]\nvariants = ['fabric-recommended']\nscenarios = ['noop']\nrepeats = 2", "repeats"),
])
def test_invalid_suites_are_refused_in_one_line_naming_the_fault(tmp_path, body, message):
    with pytest.raises(SuiteError, match=message) as err:
        load_suite(str(write_suite(tmp_path, body)))
    assert "\n" not in str(err.value)


def test_shipped_suites_load_and_the_nightly_covers_every_variant_and_fault_kind():
    from ground.variant import load_variant

    nightly = {(c.variant, c.scenario) for name in ("nightly", "nightly-kraft", "nightly-raft", "nightly-fabric-2.5")
               for c in cells(load_suite(name))}
    variants = [load_variant(p.stem) for p in VARIANTS_DIR.glob("*.toml")]
    assert nightly == {(v.name, k) for v in variants for k in FAULT_KINDS if v.refuses_fault_kind(k) is None}
    assert all(cells(load_suite(name)) for name in ("smoke", "detection", "matrix"))


def test_the_kraft_night_compares_both_modes_under_the_same_faults():
    from ground.variant import load_variant

    by_variant: dict[str, set[str]] = {}
    for c in cells(load_suite("nightly-kraft")):
        by_variant.setdefault(c.variant, set()).add(c.scenario)
    modes = {load_variant(v).kafka.mode for v in by_variant}
    assert modes == {"zookeeper", "kraft"}
    common = set.intersection(*by_variant.values())
    assert {"kill-controller", "isolate-controller", "mixed", "targeted-isr-shrink"} <= common


def test_a_zookeeper_fault_on_a_kraft_variant_is_refused_in_one_line(tmp_path):
    body = "budget = 9\n[[matrix]]\nvariants = ['kraft-recommended']\nscenarios = ['zk-quorum-loss']"
    with pytest.raises(SuiteError, match="zk-quorum-loss acts on zookeeper nodes; variant kraft-recommended has none"):
        load_suite(str(write_suite(tmp_path, body)))


def test_budget_estimates_from_what_it_measured():
    now = [0.0]
    budget = Budget(100, clock=lambda: now[0])
    assert budget.estimate(10, boot=False) == 10 + 60
    budget.overheads.append(5)
    budget.boots.append(20)
    now[0] = 30
    assert budget.left() == 70 and budget.estimate(10, boot=True) == 35


def test_a_suite_runs_judges_and_writes_suite_json_junit_and_compare(check_server, tmp_path):
    spec = load_suite(str(write_suite(tmp_path, """
budget = 600
[[matrix]]
variants = ["fabric-recommended"]
scenarios = ["noop"]
duration = 1
""")))
    lines: list[str] = []
    result = run_suite(spec, tmp_path / "store", "s.toml", say=lines.append)
    assert result.exit_code == 0, lines
    (o,) = result.outcomes
    assert (o.verdict, o.expected, o.status) == ("valid", "valid", "as expected")
    assert result.suite_dir.parent == tmp_path / "store" / "suite-s"
    assert (tmp_path / "store" / "suite-s" / "latest").resolve() == result.suite_dir
    record = json.loads((result.suite_dir / "suite.json").read_text())
    assert record["exit_code"] == 0 and record["outcomes"][0]["status"] == "as expected"
    junit = ET.parse(result.suite_dir / "junit.xml").getroot()
    assert (junit.get("tests"), junit.get("failures")) == ("1", "0")
    assert result.compare.is_file() and "fabric-recommended" in result.compare.read_text()
    assert lines[0].startswith("[1/1] fabric-recommended x noop: valid")


def test_a_suites_json_and_compare_page_name_the_axis_values_of_each_run(check_server, tmp_path):
    spec = load_suite(str(write_suite(tmp_path, """
budget = 600
[[matrix]]
variants = ["fabric-recommended"]
scenarios = ["noop"]
kafka_versions = ["3.9.2"]
clients = ["java"]
duration = 1
""")))
    lines: list[str] = []
    result = run_suite(spec, tmp_path / "store", "s.toml", say=lines.append)
    assert result.exit_code == 0, lines
    (outcome,) = json.loads((result.suite_dir / "suite.json").read_text())["outcomes"]
    assert (outcome["kafka_version"], outcome["client"], outcome["label"]) == (
        "3.9.2", "java", "fabric-recommended x noop (kafka 3.9.2, java)")
    assert result.matrix.variants == ["fabric-recommended-kafka-3.9.2 (java)"]
    assert "fabric-recommended-kafka-3.9.2 (java)" in result.compare.read_text()


def test_a_verdict_the_variant_does_not_expect_fails_the_suite(check_server, tmp_path, expecting_invalid):
    variant, scenario = expecting_invalid
    spec = one_cell(tmp_path, variant, scenario)
    lines: list[str] = []
    result = run_suite(spec, tmp_path / "store", "s.toml", say=lines.append)
    (o,) = result.outcomes
    assert (o.verdict, o.expected, o.status) == ("valid", "invalid", "UNEXPECTED")
    assert lines[1].startswith("    faults"), lines  # what the faults did is said under the cell
    assert result.exit_code == 1
    failure = ET.parse(result.suite_dir / "junit.xml").getroot().find("testcase/failure")
    assert "verdict valid where invalid is expected" in failure.get("message")


def _failing_scenario(tmp_path: Path, registered, **nemesis: object) -> Path:
    """The noop scenario named `mixed`, whose fault (failing_fault's, registered for the test)
    never takes effect."""
    registered(faults={failing_fault.NAME: failing_fault.AlwaysFails})
    scenario = tmp_path / "mixed.toml"
    text = (SCENARIOS_DIR / "noop.toml").read_text().replace('faults = ["noop"]', f'faults = ["{failing_fault.NAME}"]')
    extra = "".join(f"{k} = {json.dumps(v)}\n" for k, v in nemesis.items() if not isinstance(v, dict))
    for k, v in nemesis.items():
        if isinstance(v, dict):
            extra += f"\n[nemesis.{k}.{failing_fault.NAME}]\n" + "".join(f"{a} = {json.dumps(b)}\n" for a, b in v.items())
    scenario.write_text(text.replace("interval = 0.5", "interval = 0.5\n" + extra, 1) if extra else text)
    return scenario


def test_a_cell_whose_fault_never_took_effect_is_undecided_and_fails_the_suite(check_server, tmp_path, registered):
    spec = one_cell(tmp_path, "fabric-recommended", _failing_scenario(tmp_path, registered), 1.5)
    lines: list[str] = []
    result = run_suite(spec, tmp_path / "store", "s.toml", say=lines.append)
    (o,) = result.outcomes
    assert (o.verdict, o.expected, o.status) == ("valid", "valid", "undecided"), lines
    assert "no fault took effect" in o.faults_missed and "iptables is gone" in o.faults_missed
    assert "faults: no fault took effect" in lines[0] and lines[1].startswith("    faults"), lines
    assert result.exit_code == 1
    record = json.loads((result.suite_dir / "suite.json").read_text())
    assert record["outcomes"][0]["status"] == "undecided" and "iptables is gone" in record["outcomes"][0]["faults_missed"]
    failure = ET.parse(result.suite_dir / "junit.xml").getroot().find("testcase/failure")
    assert failure.get("type") == "undecided" and "no fault took effect" in failure.get("message")
    assert "undecided:" in result.compare.read_text()
    report = (o.run_dir / "report.html").read_text()
    assert "What each fault request did" in report and "iptables is gone" in report
    assert "Undecided: no fault took effect" in report and "proves nothing about its faults" in report


def test_a_scenario_may_excuse_faults_that_found_no_target_but_never_failures(check_server, tmp_path, registered):
    scenario = _failing_scenario(tmp_path, registered, may_find_no_target=True, options={"no_target": True})
    spec = one_cell(tmp_path, "fabric-recommended", scenario, 1.5)
    result = run_suite(spec, tmp_path / "store", "s.toml", say=lambda _: None)
    (o,) = result.outcomes
    assert o.status == "as expected" and not o.faults_missed and result.exit_code == 0


def test_runs_that_do_not_fit_the_budget_are_skipped_and_fail_the_suite(tmp_path):
    spec = load_suite(str(write_suite(tmp_path, """
budget = 30
[[matrix]]
variants = ["fabric-recommended"]
scenarios = ["noop"]
""")))
    result = run_suite(spec, tmp_path / "store", "s.toml", say=lambda _: None)
    (o,) = result.outcomes
    assert o.status == "skipped" and "of the budget left" in o.skipped and o.run_dir is None
    assert result.exit_code == 1
    junit = ET.parse(result.suite_dir / "junit.xml").getroot()
    assert junit.get("skipped") == "1" and result.compare is None


def test_ordeal_suite_refuses_a_bad_suite_with_exit_2(tmp_path):
    path = write_suite(tmp_path, "budget = 'soon'\n[[matrix]]\nvariants = ['x']\nscenarios = ['noop']")
    proc = subprocess.run([sys.executable, "-m", "cli.main", "suite", str(path)], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "budget" in proc.stderr


def test_a_suite_without_a_docker_engine_says_so_in_one_line_per_cell(tmp_path):
    """No traceback: each cell that needs a cluster is an error naming the engine, the suite fails."""
    path = write_suite(tmp_path, "budget = 600\n[[matrix]]\nvariants = ['fabric-recommended-model']\n"
                                 "scenarios = ['kill-osn', 'mixed']\nduration = 5")
    env = {k: v for k, v in os.environ.items() if k != "ORDEAL_SPARK_MASTER"}
    env["DOCKER_HOST"] = "unix:///nonexistent/ordeal-test.sock"
    proc = subprocess.run([sys.executable, "-m", "cli.main", "suite", str(path), "--store", str(tmp_path / "store")],
                          capture_output=True, text=True, timeout=120, env=env)
    errors = [line for line in proc.stdout.splitlines() if "error: cannot reach the Docker engine" in line]
    assert (proc.returncode, len(errors), "Traceback" in proc.stderr + proc.stdout) == (1, 2, False), \
        proc.stdout + proc.stderr


def test_ordeal_suite_list_prints_the_runs_without_running_them():
    proc = subprocess.run([sys.executable, "-m", "cli.main", "suite", "smoke", "--list"], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0
    assert "unclean-election x targeted-isr-shrink" in proc.stdout.splitlines()


def _collected(*args: str) -> list[str]:
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, "-m", "pytest", "tests/scenarios", "--collect-only", "-q",
                           "-p", "no:cacheprovider", *args], capture_output=True, text=True, timeout=120, cwd=root)
    return [line for line in proc.stdout.splitlines() if "::" in line]


def test_scenario_tests_are_the_cells_of_the_suite_given_and_none_without_one():
    assert _collected() == []
    smoke = {(c.variant, c.scenario) for c in cells(load_suite("smoke"))}
    kinds = sorted(FAULT_KINDS, key=len, reverse=True)  # "kill-broker" before "kill-b..." prefixes
    ids = [line.split("[", 1)[1].rstrip("]") for line in _collected("--suite", "smoke")]
    got = {next((i[len(k) + 1:], k) for k in kinds if i.startswith(k + "-")) for i in ids}
    assert got == smoke


def test_fault_lines_say_each_nemesis_op_and_each_of_its_steps(tmp_path):
    history = tmp_path / "history.jsonl"
    ops = [{"process": 0, "type": "invoke", "f": "send", "value": {"topic": "t", "value": 1}, "time": 1},
           {"process": "nemesis", "type": "info", "f": "partition", "value": {"leader": "kafka1"}, "time": 15_000_000_000},
           {"process": "nemesis", "type": "info", "f": "heal", "time": 52_000_000_000,
            "value": {"elected": None, "steps": [{"f": "kill", "value": {"nodes": ["kafka1"], "committed_while_shrunk": 0}}]}}]
    history.write_text("\n".join(json.dumps(o) for o in ops) + "\nnot json \"nemesis\"\n")
    lines = fault_lines(history)
    assert lines[1] == '        15.0 s partition: {"leader": "kafka1"}'
    assert lines[2] == '        52.0 s heal: {"elected": null}'
    assert lines[3].strip() == '- kill: {"nodes": ["kafka1"], "committed_while_shrunk": 0}'
    assert len(lines) == 4 and fault_lines(history, limit=2)[2] == "      ... 2 more"
    assert fault_lines(tmp_path / "missing.jsonl")[0].startswith("    faults: history not readable")
    history.write_text(json.dumps(ops[0]) + "\n")
    assert fault_lines(history) == ["    faults: none recorded"]
