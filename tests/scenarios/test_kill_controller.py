"""kill-controller: the Kafka controller SIGKILLed, restarted an interval later."""
from __future__ import annotations

import pytest

from tests.scenarios.conftest import variants_for

KIND = "kill-controller"
pytestmark = [pytest.mark.cluster, pytest.mark.chaos]


@pytest.mark.parametrize("variant", variants_for(KIND))
def test_kill_controller(variant: str, judge) -> None:
    judge(KIND, variant)
