"""pause-controller: the controller (the controller broker, or KRaft's active controller) frozen, then resumed."""
from __future__ import annotations

import pytest

from tests.scenarios.conftest import variants_for

KIND = "pause-controller"
pytestmark = [pytest.mark.cluster, pytest.mark.chaos]


@pytest.mark.parametrize("variant", variants_for(KIND))
def test_pause_controller(variant: str, judge) -> None:
    judge(KIND, variant)
