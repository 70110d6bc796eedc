"""unclean-toggle: unclean.leader.election.enable switched at run time, then back."""
from __future__ import annotations

import pytest

from tests.scenarios.conftest import variants_for

KIND = "unclean-toggle"
pytestmark = [pytest.mark.cluster, pytest.mark.chaos]


@pytest.mark.parametrize("variant", variants_for(KIND))
def test_unclean_toggle(variant: str, judge) -> None:
    judge(KIND, variant)
