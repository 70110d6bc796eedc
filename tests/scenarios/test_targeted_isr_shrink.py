"""targeted-isr-shrink: Jepsen's 2013 Kafka loss: ISR shrunk to the leader's side, in-sync replicas killed."""
from __future__ import annotations

import pytest

from tests.scenarios.conftest import VARIANTS

KIND = "targeted-isr-shrink"
pytestmark = [pytest.mark.cluster, pytest.mark.chaos]


@pytest.mark.parametrize("variant", VARIANTS)
def test_targeted_isr_shrink(variant: str, judge) -> None:
    judge(KIND, variant)
