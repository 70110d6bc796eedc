"""controller-quorum-loss: a majority of KRaft's controllers cut off, each alone: no metadata quorum."""
from __future__ import annotations

import pytest

from tests.scenarios.conftest import variants_for

KIND = "controller-quorum-loss"
pytestmark = [pytest.mark.cluster, pytest.mark.chaos]


@pytest.mark.parametrize("variant", variants_for(KIND))
def test_controller_quorum_loss(variant: str, judge) -> None:
    judge(KIND, variant)
