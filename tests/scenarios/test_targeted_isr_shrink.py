"""targeted-isr-shrink: Jepsen's 2013 Kafka loss: ISR shrunk to the leader's side, in-sync replicas killed.

Where the variant expects it to break the configuration, what breaks must be loss: of
acknowledged writes, or on the ordering service of acknowledged txs or of one chain.
"""
from __future__ import annotations

import pytest

from clusters.variant import load_variant
from tests.scenarios.conftest import variants_for

KIND = "targeted-isr-shrink"
LOSS = {"lost-write", "lost-tx", "block-fork"}
pytestmark = [pytest.mark.cluster, pytest.mark.chaos]


@pytest.mark.parametrize("variant", variants_for(KIND))
def test_targeted_isr_shrink(variant: str, judge) -> None:
    result = judge(KIND, variant)
    if load_variant(variant).expected(KIND) == "invalid":
        found = set((result.results or {}).get("anomalies") or {})
        assert found & LOSS, f"invalid, but through {sorted(found)}, not loss"
