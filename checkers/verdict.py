"""From anomalies found to Jepsen's verdict: true, false or "unknown".

A failing anomaly makes its checker false. Duplicates fail only when the run's
producer is idempotent (Fabric's is not: peers drop repeated tx ids). Dependency cycles
between transactions (G0, G1c and their realtime variants) are reported and never fail:
Kafka does not promise serializable transactions. lagging-osn and
partitions or channels nobody read to the end make a checker unknown, not false.
unseen and unprocessed-input are informational and never change a verdict. The liveness anomalies (a partition never
read again, a halted channel, a hang after the final heal) fail only where the variant promises
availability under the run's fault kind ([available]); elsewhere they are reported and the
data checks they left unjudged stay unknown. node-crash (a node exited while
no fault had stopped it) always fails. A history that proves nothing is unknown, never
valid.
"""
from __future__ import annotations

from typing import Literal

from ground.anomalies import INFORMATIONAL, KAFKA, LIVENESS, MAKES_UNKNOWN, NODES, ORDERING, fails

Valid = bool | Literal["unknown"]
UNKNOWN: Literal["unknown"] = "unknown"

# The anomalies, their families and effects have one home: ground/anomalies.py.
__all__ = ["KAFKA", "ORDERING", "NODES", "LIVENESS", "INFORMATIONAL", "fails", "checker_valid", "overall_valid"]


def checker_valid(found: set[str], unknown_reasons: list[str], idempotent: bool, available: bool = False) -> Valid:
    """One checker's verdict from the anomaly names it found and why it could not judge."""
    if any(fails(a, idempotent, available) for a in found):
        return False
    if unknown_reasons or found & MAKES_UNKNOWN:
        return UNKNOWN
    return True


def overall_valid(verdicts: list[Valid], *, proven: bool = True) -> Valid:
    """False if any checker is false, else unknown if any is unknown, or none ran, or the
    history proves nothing (no client op completed ok that sent or read anything: its
    checkers found nothing because there was nothing to find), else true."""
    if any(v is False for v in verdicts):
        return False
    if not verdicts or not proven or any(v == UNKNOWN for v in verdicts):
        return UNKNOWN
    return True
