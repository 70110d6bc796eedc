"""link-faults: latency, bandwidth, timeout and reset_peer on client-to-broker links."""
from __future__ import annotations

import pytest

from tests.scenarios.conftest import variants_for

KIND = "link-faults"
pytestmark = [pytest.mark.cluster, pytest.mark.chaos]


@pytest.mark.parametrize("variant", variants_for(KIND))
def test_link_faults(variant: str, judge) -> None:
    judge(KIND, variant)
