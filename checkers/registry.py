"""Every checker by name (redpanda's CHECKS): what `ordeal check` runs over a history, each
where the history holds ops it can judge (checkers/checker.py). Nothing registers itself on
import; a new checker is added here."""
from __future__ import annotations

from checkers import kafka, liveness, nodes, ordering
from checkers.checker import Checker

CHECKS: dict[str, Checker] = {
    "kafka": kafka.CHECKER,  # sends, polls and final reads of Kafka (formats 1 and 2)
    "ordering": ordering.CHECKER,  # Broadcast acks and every OSN's blocks
    "nodes": nodes.CHECKER,  # nodes that exited while no fault had stopped them
    "liveness": liveness.CHECKER,  # what did not serve again once the faults were healed
}
