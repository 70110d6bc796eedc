"""pytest plugin registered by entry point (pytest11): markers, options, and the fixtures
that run scenarios as tests.

- `cluster` (session): the cluster of --variant (default fabric-recommended), booted once;
- `run_scenario` (function): run a scenario (name, path or dict) against the session's
  cluster of its variant; a verdict that is not valid fails the test with the anomaly
  summary and the report path;
- options --variant (run every scenario on this variant), --duration (override the main
  phase), --keep-store (keep runs in ./store instead of the test's tmp dir), --suite
  (which variant x scenario cells of tests/scenarios run: a suite's matrix).

During a run SIGINT and SIGTERM stop it the harness's way (heal, flush, tear down); then
SIGINT ends the session as ^C does and SIGTERM exits pytest with 128 + 15.
"""
from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

DEFAULT_VARIANT = "fabric-recommended"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ordeal")
    group.addoption("--variant", default=None, metavar="NAME",
                    help=f"ordeal: variant for the cluster fixture and every scenario (default: the scenario's, "
                         f"else {DEFAULT_VARIANT})")
    group.addoption("--duration", type=float, default=None, metavar="SECONDS",
                    help="ordeal: override the main-phase duration of every scenario")
    group.addoption("--keep-store", action="store_true", default=False,
                    help="ordeal: keep run directories in ./store (default: the test's tmp dir)")
    group.addoption("--suite", default=None, metavar="NAME",
                    help="ordeal: run the scenario tests (tests/scenarios) of this suite's matrix "
                         "(scenarios/suites/NAME.toml); without it they are deselected")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "cluster: needs the real dockerised cluster")
    config.addinivalue_line("markers", "chaos: injects faults into the real cluster")


class ClusterPool:
    """harness.cluster_pool.ClusterPool, with a cluster that cannot come up failing the test."""

    def __init__(self) -> None:
        from harness.cluster_pool import ClusterPool as Pool

        self._pool = Pool()

    def get(self, variant: Any) -> Any:
        from clusters.errors import ClusterError

        try:
            return self._pool.get(variant)
        except ClusterError as exc:
            pytest.fail(f"cluster {variant.name} did not come up: {exc}", pytrace=False)

    def close(self) -> None:
        self._pool.close()


LAST_POOL_USER = pytest.StashKey[str]()
POOL = pytest.StashKey[ClusterPool]()


def pytest_collection_finish(session: pytest.Session) -> None:
    """Note the last test that asks for the pool: the pool's clusters go down after it, not at
    the session's end, so an idle cluster does not share the machine with the tests after it."""
    users = [item.nodeid for item in session.items if "cluster_pool" in getattr(item, "fixturenames", ())]
    if users:
        session.config.stash[LAST_POOL_USER] = users[-1]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    yield  # the item's fixtures (a module's own cleanup of the pool's cluster too) are torn down first
    if item.nodeid == item.config.stash.get(LAST_POOL_USER, None) and POOL in item.config.stash:
        item.config.stash[POOL].close()


@pytest.fixture(scope="session")
def cluster_pool(request: pytest.FixtureRequest) -> Iterator[ClusterPool]:
    pool = request.config.stash[POOL] = ClusterPool()
    yield pool
    pool.close()


@pytest.fixture(scope="session")
def cluster(request: pytest.FixtureRequest, cluster_pool: ClusterPool) -> Any:
    from ground.variant import VariantError, load_variant

    name = request.config.getoption("--variant") or DEFAULT_VARIANT
    try:
        return cluster_pool.get(load_variant(name))
    except VariantError as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture
def run_scenario(request: pytest.FixtureRequest, cluster_pool: ClusterPool,
                 tmp_path: Path) -> Callable[..., Any]:
    """run_scenario(scenario, *, expect="valid", require_faults=True, **overrides) -> harness.runner.RunResult.

    `expect` is a variant expectation ("valid", "invalid", "invalid-possible"): the test
    fails when the verdict is not one it allows, or when the run is undecided: unknown,
    the check failed, or (with `require_faults`) no fault of the scenario took effect."""
    from ground.expectations import meets
    from harness.plan import prepare
    from harness.runner import Runner
    from harness.scenario import ScenarioError, load_scenario, parse_scenario, scenario_path

    config = request.config
    store_dir = config.rootpath / "store" if config.getoption("--keep-store") else tmp_path / "store"

    def run(scenario: str | Path | dict[str, Any], *, check: bool = True, expect: str = "valid",
            require_faults: bool = True, **overrides: Any) -> Any:
        overrides.setdefault("duration", config.getoption("--duration"))
        overrides.setdefault("variant", config.getoption("--variant"))
        try:
            if isinstance(scenario, dict):
                source = request.node.name
                spec = parse_scenario(scenario, source, overrides)
            else:
                source = str(scenario_path(str(scenario)))
                spec = load_scenario(str(scenario), overrides)
            plan = prepare(spec, source)
        except ScenarioError as exc:
            pytest.fail(str(exc), pytrace=False)
        live = cluster_pool.get(plan.variant) if plan.needs_cluster else None
        result = Runner(plan, store_dir, cluster=live, check=check).run()
        if result.signal == signal.SIGINT:  # healed and flushed; now stop the session as ^C does
            raise KeyboardInterrupt
        if result.signal:
            pytest.exit(f"{plan.scenario.name}: stopped by signal {result.signal}; faults healed, "
                        f"history in {result.history}", returncode=128 + result.signal)
        where = f"{plan.scenario.name} on {plan.variant.name if plan.variant else 'no cluster'}"
        if check and result.check_error is not None:
            pytest.fail(f"{where}: check failed: {result.check_error}; history: {result.history}", pytrace=False)
        if check and not meets(expect, result.verdict):
            pytest.fail(f"{where}: valid {str(result.valid).lower()} where {expect} is expected: "
                        f"{result.anomaly_summary()}; report: {result.report or result.run_dir}", pytrace=False)
        if check and require_faults and result.faults_missed:
            pytest.fail(f"{where}: undecided: {result.faults_missed}; report: {result.report or result.run_dir}",
                        pytrace=False)
        return result

    return run
