"""The pytest plugin: scenarios as tests, a verdict that is not valid fails the test."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ground.history_file import read_history

pytest_plugins = ["pytester"]

FAKE_CHECKER = """
import sys, types
import pytest

@pytest.fixture
def verdict(monkeypatch):
    module = types.ModuleType("checkers.check")
    module.verdict = {"valid": True, "anomalies": {}}
    module.faults = {"recorded": True, "took_effect": True, "by_fault": {}, "failures": [], "more_failures": 0}
    module.check_run = lambda path, out_dir=None, idempotent=None, remote=None, server_idle=0.0, note=None: \
        {"faults": module.faults, **module.verdict}
    monkeypatch.setitem(sys.modules, "checkers.check", module)
    report = types.ModuleType("reports.report")
    report.write_report = lambda run_dir: run_dir / "report.html"
    monkeypatch.setitem(sys.modules, "reports.report", report)
    return module
"""


def test_a_valid_run_passes_its_test(pytester):
    pytester.makeconftest(FAKE_CHECKER)
    pytester.makepyfile("""
        def test_noop(run_scenario, verdict):
            result = run_scenario("noop", duration=0.3)
            assert result.valid is True and result.counts["ok"] > 0
    """)
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_a_run_whose_faults_never_took_effect_fails_its_test_as_undecided(pytester):
    pytester.makeconftest(FAKE_CHECKER)
    pytester.makepyfile("""
        FAILED = {"recorded": True, "took_effect": False, "more_failures": 0,
                  "by_fault": {"noop": {"starts": 1, "took-effect": 0, "failed": 1}},
                  "failures": [{"index": 4, "fault": "noop", "outcome": "failed", "error": "RuntimeError: no"}]}

        def test_undecided(run_scenario, verdict):
            verdict.faults = FAILED
            run_scenario("noop", duration=0.3)

        def test_allowed(run_scenario, verdict):
            verdict.faults = FAILED
            assert run_scenario("noop", duration=0.3, require_faults=False).faults_missed
    """)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*noop on no cluster: undecided: no fault took effect (#4 noop failed: RuntimeError: no)*"])


def test_the_pools_clusters_go_down_after_the_last_test_that_asks_for_the_pool(pytester):
    pytester.makepyfile("""
        DOWN = []

        class Booted:
            def down(self):
                DOWN.append("down")

        def test_first_user(cluster_pool):
            cluster_pool._pool._clusters["v"] = (Booted(), True)

        def test_last_user(cluster_pool):
            assert DOWN == []

        def test_after_the_last_user():
            assert DOWN == ["down"]
    """)
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=3)


def test_a_verdict_is_judged_against_the_expectation_given(pytester):
    pytester.makeconftest(FAKE_CHECKER)
    pytester.makepyfile("""
        def test_expected_invalid(run_scenario, verdict):
            verdict.verdict = {"valid": False, "anomalies": {"lost-write": {"count": 1}}}
            assert run_scenario("noop", duration=0.3, expect="invalid").valid is False

        def test_invalid_possible_allows_valid(run_scenario, verdict):
            assert run_scenario("noop", duration=0.3, expect="invalid-possible").valid is True

        def test_expected_invalid_but_valid(run_scenario, verdict):
            run_scenario("noop", duration=0.3, expect="invalid")
    """)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*noop on no cluster: valid true where invalid is expected*"])


def test_an_invalid_verdict_fails_the_test_with_the_anomalies_and_the_report(pytester):
    pytester.makeconftest(FAKE_CHECKER)
    pytester.makepyfile("""
        def test_noop(run_scenario, verdict):
            verdict.verdict = {"valid": False, "anomalies": {"lost-write": {"count": 3}}}
            run_scenario("noop", duration=0.3)
    """)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*noop on no cluster: valid false where valid is expected: lost-write: 3; "
                                  "report: *report.html*"])


def test_an_unknown_verdict_fails_the_test_too(pytester):
    pytester.makeconftest(FAKE_CHECKER)
    pytester.makepyfile("""
        def test_noop(run_scenario, verdict):
            verdict.verdict = {"valid": "unknown", "anomalies": {"lagging-osn": {"count": 1}}}
            run_scenario("noop", duration=0.3)
    """)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*valid unknown where valid is expected: lagging-osn: 1*"])


def test_duration_option_overrides_every_scenario_and_keep_store_keeps_runs(pytester):
    pytester.makepyfile("""
        def test_noop(run_scenario):
            run_scenario("noop", check=False)
    """)
    pytester.runpytest("-p", "no:cacheprovider", "--duration", "0.2", "--keep-store").assert_outcomes(passed=1)
    run_json = json.loads((pytester.path / "store" / "latest" / "run.json").read_text())
    assert run_json["scenario"]["duration"] == 0.2


def test_a_bad_scenario_fails_its_test_in_one_line(pytester):
    pytester.makepyfile("""
        def test_bad(run_scenario):
            run_scenario({"workloads": [{"name": "noop"}], "duration": 0})
    """)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*scenario test_bad: duration: must be > 0*"])


def test_the_chaos_marker_is_registered(pytester):
    pytester.makepyfile("""
        import pytest
        @pytest.mark.chaos
        def test_marked():
            pass
    """)
    pytester.runpytest("--strict-markers", "-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_sigterm_during_a_scenario_heals_and_exits_pytest_with_143(tmp_path):
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_long.py").write_text(
        "def test_long(run_scenario):\n"
        "    run_scenario('noop', check=False, duration=60)\n")
    child = subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--keep-store",
                              str(tmp_path / "test_long.py")], cwd=tmp_path, stdout=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not any(op["process"] == "nemesis" and op["f"] == "noop" for op in flushed_ops(tmp_path)):
        if child.poll() is not None or time.monotonic() > deadline:
            child.kill()
            pytest.fail(f"the scenario recorded no fault within 60 s (pytest exited {child.returncode})")
        time.sleep(0.05)
    child.send_signal(signal.SIGTERM)  # mid-run: its workers and its nemesis are at work
    out, _ = child.communicate(timeout=60)
    assert child.returncode == 143, out
    history = list(read_history(next(tmp_path.glob("store/noop/*/history.jsonl"))))
    assert history[-1]["process"] == "nemesis" and history[-1]["f"] == "heal"


def flushed_ops(root: Path) -> list[dict]:
    """The whole lines of the scenario's history under root so far ([] before it exists)."""
    found = list(root.glob("store/noop/*/history.jsonl"))
    raw = found[0].read_bytes() if found else b""
    return [json.loads(line) for line in raw[:raw.rfind(b"\n") + 1].splitlines()]


OFFLINE_TIER = Path(__file__).resolve().parents[1] / "conftest.py"


def test_a_test_not_marked_cluster_cannot_reach_docker_nor_give_its_children_an_engine(pytester, monkeypatch):
    """tests/conftest.py: a test without the marker fails when it (or a fixture of any scope
    it asks for) makes a Docker client, and its children see no engine; a test with the
    marker, after it, has Docker's own client and the environment it was given."""
    pytester.makeconftest(OFFLINE_TIER.read_text())
    monkeypatch.delenv("DOCKER_HOST", raising=False)  # the child's DOCKER_HOST is its own
    pytester.makepyfile("""
        import os, subprocess, sys
        import docker
        import pytest

        @pytest.fixture(scope="session")
        def engine():
            return docker.from_env()

        def test_from_env():
            docker.from_env()

        def test_a_client_of_a_given_socket():
            docker.DockerClient(base_url="unix:///var/run/docker.sock")

        def test_a_session_fixture(engine):
            pass

        def test_a_child_process():
            out = subprocess.run([sys.executable, "-c", "import os; print(os.environ['DOCKER_HOST'])"],
                                 capture_output=True, text=True, check=True).stdout
            assert out.strip() == "unix:///nonexistent/ordeal-offline-tier-not-marked-cluster.sock"

        @pytest.mark.cluster
        def test_marked():
            assert docker.APIClient.__init__.__module__ == "docker.api.client"
            assert docker.from_env == docker.DockerClient.from_env
            assert "DOCKER_HOST" not in os.environ
    """)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=2, errors=1)
    for test in ("test_from_env", "test_a_client_of_a_given_socket", "test_a_session_fixture"):
        result.stdout.fnmatch_lines([f"E * docker.errors.DockerException: *::{test} is not marked `cluster`, "
                                     f"so it may not reach Docker*"])


def test_a_test_marked_chaos_but_not_cluster_is_refused_at_collection(pytester):
    pytester.makeconftest(OFFLINE_TIER.read_text())
    pytester.makepyfile("""
        import pytest

        @pytest.mark.chaos
        def test_a_fault():
            pass
    """)
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*marked chaos but not cluster*::test_a_fault*"])
