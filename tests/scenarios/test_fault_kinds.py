"""Every fault kind on every variant that can run it, asserting the verdict that variant's
[expect] table allows under that fault (clusters/variants/*.toml): one test per cell of
ground/fault_kinds.py's kinds x the variants, run only with `--suite NAME` (conftest.py).

    .venv/bin/pytest tests/scenarios --suite smoke
    .venv/bin/pytest tests/scenarios --suite nightly -k "kill-broker and unclean"
"""
from __future__ import annotations

import pytest

from ground.variant import load_variant
from ground.fault_kinds import FAULT_KINDS
from tests.scenarios.conftest import variants_for

pytestmark = [pytest.mark.cluster, pytest.mark.chaos]

# The fault kinds built to lose data: where a variant expects them to break it, what breaks
# must be loss (of acknowledged writes, of acknowledged txs, or of one chain), not anything else.
BUILT_TO_LOSE = ("targeted-isr-shrink", "disk-loss", "disk-loss-sole-in-sync")
LOSS = {"lost-write", "lost-tx", "block-fork"}

CELLS = [pytest.param(kind, variant, id=f"{kind}-{variant}") for kind in FAULT_KINDS for variant in variants_for(kind)]


@pytest.mark.parametrize(("kind", "variant"), CELLS)
def test_the_verdict_under_the_fault_is_one_the_variant_expects(kind: str, variant: str, judge) -> None:
    result = judge(kind, variant)
    if kind in BUILT_TO_LOSE and load_variant(variant).expected(kind) == "invalid":
        found = set((result.results or {}).get("anomalies") or {})
        assert found & LOSS, f"invalid, but through {sorted(found)}, not loss"
