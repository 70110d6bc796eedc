"""kafka-loss-probed: every OSN cut off from Kafka while a liveness probe of /healthz
restarts the ones that fail it; Fabric 1.4.12's orderer then crashes on the next probe."""
from __future__ import annotations

import pytest

from tests.scenarios.conftest import variants_for

KIND = "kafka-loss-probed"
pytestmark = [pytest.mark.cluster, pytest.mark.chaos]
@pytest.mark.parametrize("variant", variants_for(KIND))
def test_kafka_loss_probed(variant: str, judge) -> None:
    judge(KIND, variant)
