"""disk-loss-sole-in-sync: a partition's leader, once the only in-sync replica, loses its
disk and comes back empty; in ZooKeeper mode it is elected again and its followers truncate
to it. Where the variant expects it to break the configuration, what breaks must be loss."""
from __future__ import annotations

import pytest

from clusters.variant import load_variant
from tests.scenarios.conftest import variants_for

KIND = "disk-loss-sole-in-sync"
LOSS = {"lost-write", "lost-tx", "block-fork"}
pytestmark = [pytest.mark.cluster, pytest.mark.chaos]


@pytest.mark.parametrize("variant", variants_for(KIND))
def test_disk_loss_sole_in_sync(variant: str, judge) -> None:
    result = judge(KIND, variant)
    if load_variant(variant).expected(KIND) == "invalid":
        found = set((result.results or {}).get("anomalies") or {})
        assert found & LOSS, f"invalid, but through {sorted(found)}, not loss"
