"""isolate-controller: the Kafka controller cut off from every other node."""
from __future__ import annotations

import pytest

from tests.scenarios.conftest import variants_for

KIND = "isolate-controller"
pytestmark = [pytest.mark.cluster, pytest.mark.chaos]


@pytest.mark.parametrize("variant", variants_for(KIND))
def test_isolate_controller(variant: str, judge) -> None:
    judge(KIND, variant)
