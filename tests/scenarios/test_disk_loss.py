"""disk-loss: one broker at a time loses its disk (SIGKILL, log directories emptied, started
at once). The replication factor is there for this: where the variant expects it to break
the configuration, what breaks must be loss."""
from __future__ import annotations

import pytest

from clusters.variant import load_variant
from tests.scenarios.conftest import variants_for

KIND = "disk-loss"
LOSS = {"lost-write", "lost-tx", "block-fork"}
pytestmark = [pytest.mark.cluster, pytest.mark.chaos]


@pytest.mark.parametrize("variant", variants_for(KIND))
def test_disk_loss(variant: str, judge) -> None:
    result = judge(KIND, variant)
    if load_variant(variant).expected(KIND) == "invalid":
        found = set((result.results or {}).get("anomalies") or {})
        assert found & LOSS, f"invalid, but through {sorted(found)}, not loss"
