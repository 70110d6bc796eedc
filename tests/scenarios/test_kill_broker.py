"""kill-broker: a random broker SIGKILLed, restarted an interval later."""
from __future__ import annotations

import pytest

from tests.scenarios.conftest import VARIANTS

KIND = "kill-broker"
pytestmark = [pytest.mark.cluster, pytest.mark.chaos]


@pytest.mark.parametrize("variant", VARIANTS)
def test_kill_broker(variant: str, judge) -> None:
    judge(KIND, variant)
