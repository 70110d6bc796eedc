"""Every anomaly ordeal names: its family (which checker finds it), what it means, and what it
does to a verdict. The one home of these facts is anomalies.toml beside this file, read here:
the checkers take their names and the verdict rule from here, the report its meanings and
effects, and docs/anomalies.md its tables (written from here by `python -m ground.anomalies`,
and held to it by a test).

Effects: most anomalies fail their checker. Duplicates fail only where the producer is
idempotent. Dependency cycles between transactions are reported and never fail: Kafka promises
atomic, read_committed transactions, not a serializable order across partitions. lagging-osn
makes its checker unknown, not false. unseen and unprocessed-input are informational. The
liveness anomalies fail only where the variant promises availability under the run's faults.
"""
from __future__ import annotations

import re
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Family = Literal["kafka", "txn", "ordering", "nodes", "liveness"]
Effect = Literal["fails", "fails-if-idempotent", "never-fails", "unknown", "informational", "fails-if-available",
                 "fails-if-available-else-unknown"]

EFFECT_WORDS: dict[Effect, str] = {
    "fails": "fails",
    "fails-if-idempotent": "fails only where the producer is idempotent",
    "never-fails": "reported, never fails",
    "unknown": "makes the verdict unknown, not false",
    "informational": "informational, never changes a verdict",
    "fails-if-available": "fails where availability is promised",
    "fails-if-available-else-unknown": "fails where availability is promised; elsewhere makes the verdict unknown",
}


@dataclass(frozen=True)
class Anomaly:
    name: str
    family: Family
    effect: Effect
    meaning: str


TABLE = Path(__file__).with_name("anomalies.toml")
ANOMALIES: tuple[Anomaly, ...] = tuple(Anomaly(**row) for row in tomllib.loads(TABLE.read_text())["anomaly"])

BY_NAME: dict[str, Anomaly] = {a.name: a for a in ANOMALIES}


def names(*families: Family) -> tuple[str, ...]:
    """The anomalies of `families`, in the order listed here."""
    return tuple(a.name for a in ANOMALIES if a.family in families)


KAFKA = names("kafka", "txn")  # the kafka checker's (formats 1 and 2)
ORDERING = names("ordering")
NODES = names("nodes")
LIVENESS = names("liveness")
INFORMATIONAL = frozenset(a.name for a in ANOMALIES if a.effect == "informational")
# Unknown unless they fail (checkers.verdict.checker_valid asks `fails` first).
MAKES_UNKNOWN = frozenset(a.name for a in ANOMALIES if a.effect in ("unknown", "fails-if-available-else-unknown"))


def fails(anomaly: str, idempotent: bool, available: bool = False) -> bool:
    """Whether one occurrence of `anomaly` makes its checker invalid."""
    effect = BY_NAME[anomaly].effect if anomaly in BY_NAME else "fails"
    if effect == "fails-if-idempotent":
        return idempotent
    if effect in ("fails-if-available", "fails-if-available-else-unknown"):
        return available
    return effect == "fails"


def effect_on(anomaly: str, idempotent: bool, available: bool) -> str:
    """What `anomaly` did to one run's verdict, in the report's words: fails, allowed,
    informational or unknown."""
    effect = BY_NAME[anomaly].effect if anomaly in BY_NAME else "fails"
    if effect in ("informational", "unknown"):
        return effect
    if fails(anomaly, idempotent, available):
        return "fails"
    return "unknown" if anomaly in MAKES_UNKNOWN else "allowed"


def meaning(anomaly: str) -> str:
    known = BY_NAME.get(anomaly)
    return known.meaning if known else "not described in docs/anomalies.md"


# -- docs/anomalies.md's tables ---------------------------------------------------------
DOC = Path(__file__).resolve().parents[1] / "docs" / "anomalies.md"
_TABLE = re.compile(r"(<!-- anomalies: (\w+) -->\n)(.*?)(<!-- end -->)", re.DOTALL)


def markdown_table(family: str) -> str:
    rows = ["| anomaly | meaning | verdict |", "| --- | --- | --- |"]
    rows += [f"| {a.name} | {a.meaning} | {EFFECT_WORDS[a.effect]} |" for a in ANOMALIES if a.family == family]
    return "\n".join(rows) + "\n"


def render_doc(text: str) -> str:
    """docs/anomalies.md with each marked table written from ANOMALIES."""
    return _TABLE.sub(lambda m: m[1] + markdown_table(m[2]) + m[4], text)


def main() -> int:
    text = DOC.read_text()
    DOC.write_text(render_doc(text))
    print(f"{DOC}: tables written from ground/anomalies.py")
    return 0


if __name__ == "__main__":
    sys.exit(main())
