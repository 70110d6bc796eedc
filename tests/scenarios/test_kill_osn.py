"""kill-osn: a random ordering service node SIGKILLed, restarted an interval later."""
from __future__ import annotations

import pytest

from tests.scenarios.conftest import variants_for

KIND = "kill-osn"
pytestmark = [pytest.mark.cluster, pytest.mark.chaos]


@pytest.mark.parametrize("variant", variants_for(KIND))
def test_kill_osn(variant: str, judge) -> None:
    judge(KIND, variant)
