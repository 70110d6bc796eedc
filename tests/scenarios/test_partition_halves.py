"""partition-halves: the cluster's nodes cut into two halves."""
from __future__ import annotations

import pytest

from tests.scenarios.conftest import variants_for

KIND = "partition-halves"
pytestmark = [pytest.mark.cluster, pytest.mark.chaos]


@pytest.mark.parametrize("variant", variants_for(KIND))
def test_partition_halves(variant: str, judge) -> None:
    judge(KIND, variant)
