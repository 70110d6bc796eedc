"""kafka-loss-probed: every OSN cut off from Kafka while a liveness probe of /healthz
restarts the ones that fail it; Fabric 1.4.12's orderer then crashes on the next probe."""
from __future__ import annotations

import pytest

from tests.scenarios.conftest import VARIANTS

KIND = "kafka-loss-probed"
pytestmark = [pytest.mark.cluster, pytest.mark.chaos]
# The model's twin of fabric-recommended too: the fault is where the two implementations differ.
CELLS = [*VARIANTS, *(v for v in ["fabric-recommended-model"] if v not in VARIANTS)]


@pytest.mark.parametrize("variant", CELLS)
def test_kafka_loss_probed(variant: str, judge) -> None:
    judge(KIND, variant)
