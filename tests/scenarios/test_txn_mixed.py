"""txn-mixed: kafka-txn (offsets committed in its txns) under kills, pauses and isolations of transaction and group coordinators, broker kills and halves."""
from __future__ import annotations

import pytest

from tests.scenarios.conftest import variants_for

KIND = "txn-mixed"
pytestmark = [pytest.mark.cluster, pytest.mark.chaos]


@pytest.mark.parametrize("variant", variants_for(KIND))
def test_txn_mixed(variant: str, judge) -> None:
    judge(KIND, variant)
