"""pause-broker: a random broker paused (SIGSTOP), resumed an interval later."""
from __future__ import annotations

import pytest

from tests.scenarios.conftest import VARIANTS

KIND = "pause-broker"
pytestmark = [pytest.mark.cluster, pytest.mark.chaos]


@pytest.mark.parametrize("variant", VARIANTS)
def test_pause_broker(variant: str, judge) -> None:
    judge(KIND, variant)
