"""zk-quorum-loss: ZooKeeper split so that no side holds a quorum."""
from __future__ import annotations

import pytest

from tests.scenarios.conftest import variants_for

KIND = "zk-quorum-loss"
pytestmark = [pytest.mark.cluster, pytest.mark.chaos]


@pytest.mark.parametrize("variant", variants_for(KIND))
def test_zk_quorum_loss(variant: str, judge) -> None:
    judge(KIND, variant)
