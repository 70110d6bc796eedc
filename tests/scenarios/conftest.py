"""test_fault_kinds.py: one test per fault kind and variant, asserting the verdict that
variant's [expect] table allows under that fault (clusters/variants/*.toml).

They run real scenarios (scenarios/<kind>.toml) on real clusters, so they are opt-in:
`--suite NAME` keeps the variant x fault cells of that suite's matrix (with its durations)
and deselects the rest; without --suite every one of them is deselected.

    .venv/bin/pytest tests/scenarios --suite smoke
    .venv/bin/pytest tests/scenarios --suite nightly -k "kill-broker and unclean"
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ground.variant import load_variant, shipped_variants

HERE = Path(__file__).resolve().parent
VARIANTS = shipped_variants()


def variants_for(kind: str) -> list[str]:
    """The variants a fault kind can run on (zk-quorum-loss needs ZooKeeper, the KRaft
    controller faults need KRaft: ground/variant.py MODE_FAULT_KINDS)."""
    return [v for v in VARIANTS if load_variant(v).refuses_fault_kind(kind) is None]


def _cell(item: pytest.Item) -> tuple[str, str] | None:
    if HERE not in Path(str(item.path)).resolve().parents:
        return None
    params = item.callspec.params if hasattr(item, "callspec") else {}
    kind, variant = params.get("kind"), params.get("variant")
    return (variant, kind) if kind and variant else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    from harness.suite import SuiteError, cells, load_suite

    name = config.getoption("--suite")
    durations: dict[tuple[str, str], float | None] = {}
    if name:
        try:
            for c in cells(load_suite(name)):
                durations.setdefault((c.variant, c.scenario), c.duration)
        except SuiteError as exc:
            raise pytest.UsageError(str(exc)) from None
    keep, drop = [], []
    for item in items:
        cell = _cell(item)
        if cell is None or cell in durations:
            keep.append(item)
            if cell is not None:
                item.stash[DURATION] = durations[cell]
        else:
            drop.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
    # Grouped by variant, so that the session keeps one cluster at a time.
    order = {v: i for i, v in enumerate(VARIANTS)}
    items[:] = sorted(keep, key=lambda it: order.get((_cell(it) or ("",))[0], -1))


DURATION = pytest.StashKey[float | None]()


@pytest.fixture
def judge(request: pytest.FixtureRequest, run_scenario: Callable[..., Any]) -> Callable[[str, str], Any]:
    """judge(kind, variant): run scenarios/<kind>.toml on the variant, with the suite's
    duration unless --duration says otherwise, and fail unless the verdict is one the
    variant expects under that fault."""

    def run(kind: str, variant: str) -> Any:
        duration = request.config.getoption("--duration") or request.node.stash.get(DURATION, None)
        return run_scenario(kind, variant=variant, duration=duration,
                            expect=load_variant(variant).expected(kind))

    return run
