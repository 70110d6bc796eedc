"""isolate-leader: the leader of a random partition cut off from every other node."""
from __future__ import annotations

import pytest

from tests.scenarios.conftest import variants_for

KIND = "isolate-leader"
pytestmark = [pytest.mark.cluster, pytest.mark.chaos]


@pytest.mark.parametrize("variant", variants_for(KIND))
def test_isolate_leader(variant: str, judge) -> None:
    judge(KIND, variant)
