"""pause-broker: a random broker paused (SIGSTOP), resumed an interval later."""
from __future__ import annotations

import pytest

from tests.scenarios.conftest import variants_for

KIND = "pause-broker"
pytestmark = [pytest.mark.cluster, pytest.mark.chaos]


@pytest.mark.parametrize("variant", variants_for(KIND))
def test_pause_broker(variant: str, judge) -> None:
    judge(KIND, variant)
