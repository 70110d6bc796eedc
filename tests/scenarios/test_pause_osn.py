"""pause-osn: a random ordering service node paused, resumed an interval later."""
from __future__ import annotations

import pytest

from tests.scenarios.conftest import VARIANTS

KIND = "pause-osn"
pytestmark = [pytest.mark.cluster, pytest.mark.chaos]


@pytest.mark.parametrize("variant", VARIANTS)
def test_pause_osn(variant: str, judge) -> None:
    judge(KIND, variant)
