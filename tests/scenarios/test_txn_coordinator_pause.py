"""txn-coordinator-pause: kafka-txn while the transaction coordinator of one of its transactional.ids is frozen and resumed (KAFKA-17754's ground)."""
from __future__ import annotations

import pytest

from tests.scenarios.conftest import variants_for

KIND = "txn-coordinator-pause"
pytestmark = [pytest.mark.cluster, pytest.mark.chaos]


@pytest.mark.parametrize("variant", variants_for(KIND))
def test_txn_coordinator_pause(variant: str, judge) -> None:
    judge(KIND, variant)
