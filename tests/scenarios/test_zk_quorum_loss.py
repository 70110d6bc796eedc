"""zk-quorum-loss: ZooKeeper split so that no side holds a quorum."""
from __future__ import annotations

import pytest

from tests.scenarios.conftest import VARIANTS

KIND = "zk-quorum-loss"
pytestmark = [pytest.mark.cluster, pytest.mark.chaos]


@pytest.mark.parametrize("variant", VARIANTS)
def test_zk_quorum_loss(variant: str, judge) -> None:
    judge(KIND, variant)
