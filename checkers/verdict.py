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

Valid = bool | Literal["unknown"]
UNKNOWN: Literal["unknown"] = "unknown"

KAFKA = ("lost-write", "inconsistent-offsets", "duplicate", "realtime-order", "nonmonotonic-poll",
         "poll-skip", "nonmonotonic-send", "aborted-read", "unseen",
         # consumer groups (checkers.consumer_groups)
         "group-rewind", "group-skip", "unprocessed-input",
         # transactions (history format 2: checkers.txn, checkers.txn_cycles)
         "torn-txn", "precommitted-read", "int-nonmonotonic-send", "int-poll-skip", "int-nonmonotonic-poll",
         "G0", "G1c", "G0-realtime", "G1c-realtime")
ORDERING = ("block-fork", "broken-chain", "lost-tx", "duplicate-tx", "lagging-osn",
            # config updates (checkers.ordering)
            "config-not-alone", "batch-overflow")
NODES = ("node-crash",)
LIVENESS = ("unavailable-partition", "halted-channel", "hang")

_DUPLICATES = frozenset({"duplicate", "duplicate-tx"})
_MAKES_UNKNOWN = frozenset({"lagging-osn"})
INFORMATIONAL = frozenset({"unseen", "unprocessed-input"})
# Dependency cycles between txns: Kafka promises atomic, read_committed transactions, not a
# serializable order across partitions, so no configuration here can be held to them.
_CYCLES = frozenset({"G0", "G1c", "G0-realtime", "G1c-realtime"})


def fails(anomaly: str, idempotent: bool, available: bool = False) -> bool:
    """Whether one occurrence of `anomaly` makes its checker invalid: duplicates where the
    producer is idempotent, the liveness anomalies where availability was promised."""
    if anomaly in _DUPLICATES:
        return idempotent
    if anomaly in LIVENESS:
        return available
    return anomaly not in _MAKES_UNKNOWN | INFORMATIONAL | _CYCLES


def checker_valid(found: set[str], unknown_reasons: list[str], idempotent: bool, available: bool = False) -> Valid:
    """One checker's verdict from the anomaly names it found and why it could not judge."""
    if any(fails(a, idempotent, available) for a in found):
        return False
    if unknown_reasons or found & _MAKES_UNKNOWN:
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
