"""kill-controller: the Kafka controller SIGKILLed, restarted an interval later."""
from __future__ import annotations

import pytest

from tests.scenarios.conftest import VARIANTS

KIND = "kill-controller"
pytestmark = [pytest.mark.cluster, pytest.mark.chaos]


@pytest.mark.parametrize("variant", VARIANTS)
def test_kill_controller(variant: str, judge) -> None:
    judge(KIND, variant)
