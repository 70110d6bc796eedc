"""The offline tier: a test not marked `cluster` cannot reach Docker.

`pytest -m "not cluster"` is meant to run anywhere, quickly, and start no container. So for
every test without the `cluster` marker, from its setup (fixtures of any scope it pulls in
included) to its end, this process cannot construct a Docker client (docker.from_env,
DockerClient, APIClient raise DockerException, the error an absent engine gives) and
DOCKER_HOST points at a socket that does not exist, for the processes it starts. A test that
would start a container without the marker fails with this module's message instead.
A test marked `chaos` injects faults into a real cluster: it must be marked `cluster` too; so
must one marked `nightly` (left out of make test by pyproject's addopts, run by the nightly workflow).
"""
from __future__ import annotations

import json
import os
from collections.abc import Collection, Mapping
from typing import Any

import pytest

OFFLINE_DOCKER_HOST = "unix:///nonexistent/ordeal-offline-tier-not-marked-cluster.sock"
_GUARD = pytest.StashKey[pytest.MonkeyPatch]()


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """How many processes pytest-xdist runs the tests in (pyproject's addopts asks `-n auto`).

    Two or more (up to 4, one per core) when the selection can hold no `cluster` test: the
    offline tier's Spark checks leave a core idle while each waits on the JVM, so two workers,
    each with its Spark server, halve its time on two cores. None (all in this process) as soon
    as a cluster test may be selected: clusters must not boot side by side, and the real-cluster
    tests' timing should not compete with a second worker's checks. An explicit `-n` wins."""
    from _pytest.mark.expression import Expression

    expr = config.option.markexpr or ""
    if expr:
        compiled = Expression.compile(expr)
        cluster_selected = any(compiled.evaluate(lambda name, m=set(more) | {"cluster"}, **_: name in m)
                               for more in ((), ("chaos",), ("nightly",), ("chaos", "nightly")))
    else:
        cluster_selected = True
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return 0 if cluster_selected or cores < 2 else min(4, cores)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for marker, why in (("chaos", "a chaos test needs the real cluster"),
                        ("nightly", "the nightly tests are the real-cluster tests too long for make test")):
        unmarked = [item.nodeid for item in items
                    if item.get_closest_marker(marker) is not None and item.get_closest_marker("cluster") is None]
        if unmarked:
            more = f" and {len(unmarked) - 5} more" if len(unmarked) > 5 else ""
            raise pytest.UsageError(f"marked {marker} but not cluster ({why}): {', '.join(unmarked[:5])}{more}")


def _cut_off_docker(guard: pytest.MonkeyPatch, nodeid: str) -> None:
    import docker
    from docker.errors import DockerException

    def refuse(*args: object, **kwargs: object) -> None:
        raise DockerException(f"{nodeid} is not marked `cluster`, so it may not reach Docker "
                              f"(tests/conftest.py): mark it `cluster` if it needs the engine")

    guard.setattr(docker.APIClient, "__init__", refuse)
    guard.setattr(docker.DockerClient, "__init__", refuse)
    guard.setattr(docker.DockerClient, "from_env", classmethod(refuse))
    guard.setattr(docker, "from_env", refuse)
    guard.setenv("DOCKER_HOST", OFFLINE_DOCKER_HOST)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_setup(item: pytest.Item):
    if item.get_closest_marker("cluster") is None:
        item.stash[_GUARD] = guard = pytest.MonkeyPatch()
        _cut_off_docker(guard, item.nodeid)
    return (yield)


@pytest.hookimpl(wrapper=True, trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None):
    # Lifted only after the teardown: a wider fixture an earlier cluster test set up that ends
    # here (a module's cluster) tears down with the client it made then (Cluster.down does).
    try:
        return (yield)
    finally:
        guard = item.stash.get(_GUARD, None)
        if guard is not None:
            guard.undo()


@pytest.fixture(scope="session")
def _server():
    """A Connect server of the tests' own, and a session of it: one for the whole session,
    started by the first test that asks for it (every JVM start and its first, cold check
    cost more than most tests), shared by the checker tests (tests/checkers) and the report
    tests that check histories (tests/reports)."""
    from checkers.runtime.session import spark_session

    session, server = spark_session("local[2]", small_inputs=True)
    try:
        yield server, session
    finally:
        session.stop()
        server.stop()


@pytest.fixture(scope="session")
def spark(_server):
    _, session = _server
    # Tiny inputs: compiling generated code and re-planning cost more than they save.
    for key, value in {"spark.sql.shuffle.partitions": "1", "spark.sql.adaptive.enabled": "false",
                       "spark.sql.codegen.wholeStage": "false"}.items():
        session.conf.set(key, value)
    yield session


@pytest.fixture(scope="session")
def check_together(spark, tmp_path_factory):
    """Check histories as one batch, each in a run directory of its own (results.json beside its
    history, or in `out/` there for the names in `out`; its run.json from `runs`, if named
    there); name -> results, as check_history returns them. A module whose tests each judge a
    history of their own checks them all this way: check_histories judges each as if alone (tests/checkers/test_batch.py), and a batch of
    small histories costs about what one costs, where one check of a tiny history is seconds of
    Spark's planning."""
    from checkers.check import check_histories

    def check(histories: dict[str, Any], out: Collection[str] = (),
              runs: Mapping[str, dict[str, Any]] | None = None) -> dict[str, dict[str, Any]]:
        root = tmp_path_factory.mktemp("together")
        dirs = {}
        for name, history in histories.items():
            dirs[name] = run = root / name
            run.mkdir()
            history.write(run / "history.jsonl")
            if runs and name in runs:
                (run / "run.json").write_text(json.dumps(runs[name]))
        answers = check_histories(list(dirs.values()), spark=spark,
                                  out_dirs=[run / "out" if name in out else run for name, run in dirs.items()])
        errors = {name: answer for name, answer in zip(dirs, answers) if not isinstance(answer, dict)}
        assert errors == {}
        return dict(zip(dirs, answers))

    return check


@pytest.fixture(scope="session")
def find_together(spark, tmp_path_factory):
    """The anomaly rows of a module's histories, found as one batch by every registered checker
    that reads them (checkers.registry.CHECKS, as `ordeal check` runs them, not a pipeline
    rebuilt by hand). Unlike results.json, each row keeps its own evidence. A module of anomaly
    tests builds its cases at import (name -> (HistoryBuilder, what its assertions name)) and
    finds them all with one call, as check_together checks them: tests/support.Found."""
    from checkers.check import _union, batch_tables
    from checkers.ingest.history import HISTORY, load_history
    from checkers.registry import CHECKS
    from checkers.runtime.session import fit_to_input
    from tests.support import Found

    def find(cases: Mapping[str, tuple[Any, Any]], default: Collection[str] = ()) -> Found:
        root = tmp_path_factory.mktemp("found")
        loaded = [load_history(history.write(root / f"{n}.jsonl"), root / f"{n}.parquet")
                  for n, (history, _) in enumerate(cases.values())]
        running = [c for c in CHECKS.values() if any(c.reads(h.counts) for h in loaded)]
        fit_to_input(spark, sum(h.counts.ops for h in loaded))
        tables = batch_tables(spark, loaded)
        names = list(cases)
        rows: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
        if running:
            frames = [c.find(tables).rows.select(HISTORY, "anomaly", "evidence", "example") for c in running]
            for r in _union(frames).collect():
                rows[names[r[HISTORY]]].append({"anomaly": r["anomaly"], "evidence": list(r["evidence"]),
                                                "example": json.loads(r["example"])})
        return Found({name: sorted(found, key=lambda a: (a["evidence"], a["anomaly"])) for name, found in rows.items()},
                     {name: built for name, (_, built) in cases.items()}, tuple(default))

    return find


@pytest.fixture
def check_server(_server, monkeypatch):
    """The checks a test's code starts (`ordeal run`'s at its end, a suite's, `ordeal check` in
    a process of its own) go to the tests' Spark server, warm, as to a user's --remote
    (ORDEAL_SPARK_REMOTE): not to a server of their own (a JVM each), nor to the user's shared
    server (checkers.runtime.connect), which an offline test must not wait for or hold, and
    which a check from another checkout stops and starts anew with that checkout's settings."""
    monkeypatch.setenv("ORDEAL_SPARK_REMOTE", _server[0].url)


@pytest.fixture
def registered(monkeypatch):
    """register(faults={name: factory}, workloads={name: factory}): a test's stand-ins added to
    the real registries (nemesis.registry.FAULTS, workloads.registry.WORKLOADS), where a
    scenario finds them by name, for this test only. Registered at a module's import instead,
    they would stay for every later test of the session. A module whose tests all need them
    registers them from an autouse fixture of its own."""
    from nemesis.registry import FAULTS
    from workloads.registry import WORKLOADS

    def register(*, faults: Mapping[str, Any] | None = None, workloads: Mapping[str, Any] | None = None) -> None:
        for registry, entries in ((FAULTS, faults), (WORKLOADS, workloads)):
            for name, factory in (entries or {}).items():
                monkeypatch.setitem(registry, name, factory)

    return register
