"""isolate-broker-from-controllers: one broker cut off from KRaft's controllers only; they must fence it."""
from __future__ import annotations

import pytest

from tests.scenarios.conftest import variants_for

KIND = "isolate-broker-from-controllers"
pytestmark = [pytest.mark.cluster, pytest.mark.chaos]


@pytest.mark.parametrize("variant", variants_for(KIND))
def test_isolate_broker_from_controllers(variant: str, judge) -> None:
    judge(KIND, variant)
