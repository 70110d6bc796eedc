"""kill-leader: the leader of a random partition SIGKILLed, restarted an interval later."""
from __future__ import annotations

import pytest

from tests.scenarios.conftest import VARIANTS

KIND = "kill-leader"
pytestmark = [pytest.mark.cluster, pytest.mark.chaos]


@pytest.mark.parametrize("variant", VARIANTS)
def test_kill_leader(variant: str, judge) -> None:
    judge(KIND, variant)
