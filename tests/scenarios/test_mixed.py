"""mixed: a seeded pick of kills, pauses, partitions and link faults, one at a time."""
from __future__ import annotations

import pytest

from tests.scenarios.conftest import variants_for

KIND = "mixed"
pytestmark = [pytest.mark.cluster, pytest.mark.chaos]


@pytest.mark.parametrize("variant", variants_for(KIND))
def test_mixed(variant: str, judge) -> None:
    judge(KIND, variant)
