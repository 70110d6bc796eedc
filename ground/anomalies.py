"""Every anomaly ordeal names: its family (which checker finds it), what it means, and what it
does to a verdict. The one home of these facts: the checkers take their names and the verdict
rule from here, the report its meanings and effects, and docs/anomalies.md its tables
(written from here by `python -m ground.anomalies`, and held to it by a test).

Effects: most anomalies fail their checker. Duplicates fail only where the producer is
idempotent. Dependency cycles between transactions are reported and never fail: Kafka promises
atomic, read_committed transactions, not a serializable order across partitions. lagging-osn
makes its checker unknown, not false. unseen and unprocessed-input are informational. The
liveness anomalies fail only where the variant promises availability under the run's faults.
"""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Family = Literal["kafka", "txn", "ordering", "nodes", "liveness"]
Effect = Literal["fails", "fails-if-idempotent", "never-fails", "unknown", "informational", "fails-if-available"]

EFFECT_WORDS: dict[Effect, str] = {
    "fails": "fails",
    "fails-if-idempotent": "fails only where the producer is idempotent",
    "never-fails": "reported, never fails",
    "unknown": "makes the verdict unknown, not false",
    "informational": "informational, never changes a verdict",
    "fails-if-available": "fails where availability is promised",
}


@dataclass(frozen=True)
class Anomaly:
    name: str
    family: Family
    effect: Effect
    meaning: str


ANOMALIES: tuple[Anomaly, ...] = (
    Anomaly("lost-write", "kafka", "fails",
            "a send acknowledged at an offset (or a send of a committed txn) is missing from the final read of its "
            "partition"),
    Anomaly("inconsistent-offsets", "kafka", "fails",
            "one partition and offset seen holding two different values, whether in acknowledgements or in reads"),
    Anomaly("duplicate", "kafka", "fails-if-idempotent", "a value sent once stored at two or more offsets"),
    Anomaly("realtime-order", "kafka", "fails",
            "on one partition, a send invoked after another send completed got a lower offset"),
    Anomaly("nonmonotonic-poll", "kafka", "fails",
            "a consumer's next record of a partition is at or before the previous one, with no seek in between"),
    Anomaly("poll-skip", "kafka", "fails",
            "between two consecutive records of a partition, a consumer missed offsets the final read shows "
            "holding values"),
    Anomaly("nonmonotonic-send", "kafka", "fails",
            "one process's send to a partition got an offset at or below that of its own earlier send there"),
    Anomaly("aborted-read", "kafka", "fails",
            "a read (read_committed, for txns) returns a value whose send, or whose txn, completed `fail`"),
    Anomaly("unseen", "kafka", "informational", "acknowledged, but no poll ever read it"),
    Anomaly("group-rewind", "kafka", "fails",
            "a consumer group assigned a partition at a position below the last commit of it acknowledged before "
            "the poll that saw the assignment, and no later or indeterminate commit was at that position"),
    Anomaly("group-skip", "kafka", "fails",
            "a consumer group assigned a partition at a position no commit explains: above the last acknowledged "
            "commit, or anywhere but the beginning when none was acknowledged"),
    Anomaly("unprocessed-input", "kafka", "informational",
            "in consume-transform-produce on subscribe, offsets the final read holds below what committed txns "
            "committed the group to, that no committed txn polled (one row per partition)"),
    Anomaly("torn-txn", "txn", "fails",
            "the final reads hold some but not all sends of a committed or indeterminate txn"),
    Anomaly("precommitted-read", "txn", "fails",
            "a txn's poll returns a value the same txn sent (invisible until commit)"),
    Anomaly("int-nonmonotonic-send", "txn", "fails",
            "inside one txn, a send to a partition got an offset at or below an earlier send's of the same txn"),
    Anomaly("int-poll-skip", "txn", "fails",
            "within one txn, a consumer's records of a partition jump over offsets the final read holds"),
    Anomaly("int-nonmonotonic-poll", "txn", "fails",
            "within one txn, a consumer's next record of a partition is not after the last one"),
    Anomaly("G0", "txn", "never-fails", "a cycle of write-write (ww) dependencies between txns"),
    Anomaly("G1c", "txn", "never-fails",
            "a cycle of ww and write-read (wr) dependencies, with at least one wr"),
    Anomaly("G0-realtime", "txn", "never-fails",
            "a ww cycle that needs a realtime (rt) edge: one txn completed before the other was invoked"),
    Anomaly("G1c-realtime", "txn", "never-fails",
            "a ww / wr cycle that needs a realtime (rt) edge: one txn completed before the other was invoked"),
    Anomaly("block-fork", "ordering", "fails",
            "at one block number, two OSNs hold blocks with different header hashes"),
    Anomaly("broken-chain", "ordering", "fails",
            "a block's previous_hash is not the hash of the block before it; or, where the block carries its data, "
            "its data_hash or header hash differs from the one recomputed"),
    Anomaly("lost-tx", "ordering", "fails",
            "a tx Broadcast answered with SUCCESS is, after recovery, in no OSN's blocks"),
    Anomaly("duplicate-tx", "ordering", "fails-if-idempotent",
            "a tx id appears at two or more places in a channel's chain"),
    Anomaly("lagging-osn", "ordering", "unknown",
            "after recovery an OSN's chain stays behind the others' while it still delivers"),
    Anomaly("config-not-alone", "ordering", "fails",
            "a block of an OSN's chain holds a config update of this history and some other tx"),
    Anomaly("batch-overflow", "ordering", "fails",
            "a block holds more txs than the MaxMessageCount a config update before it on that OSN's chain set"),
    Anomaly("node-crash", "nodes", "fails",
            "a node's process ended though no fault had stopped it (a panic, a failed assertion, the kernel's OOM "
            "killer); evidence: its exit code and last log lines"),
    Anomaly("unavailable-partition", "liveness", "fails-if-available",
            "no final read of a topic-partition completed ok (leaderless to the end, or its replicas gone); "
            "evidence: its failed final reads"),
    Anomaly("halted-channel", "liveness", "fails-if-available",
            "a final Deliver from an OSN did not end and its chain refused a strict read (Fabric 1.4's Kafka chain, "
            "halted for good, which still answers Broadcast with SUCCESS); evidence: those delivers"),
    Anomaly("hang", "liveness", "fails-if-available",
            "after the final heal client ops were invoked and none completed ok (redpanda's HANG); evidence: the "
            "heal and the first of those ops"),
)

BY_NAME: dict[str, Anomaly] = {a.name: a for a in ANOMALIES}


def names(*families: Family) -> tuple[str, ...]:
    """The anomalies of `families`, in the order listed here."""
    return tuple(a.name for a in ANOMALIES if a.family in families)


KAFKA = names("kafka", "txn")  # the kafka checker's (formats 1 and 2)
ORDERING = names("ordering")
NODES = names("nodes")
LIVENESS = names("liveness")
INFORMATIONAL = frozenset(a.name for a in ANOMALIES if a.effect == "informational")
MAKES_UNKNOWN = frozenset(a.name for a in ANOMALIES if a.effect == "unknown")


def fails(anomaly: str, idempotent: bool, available: bool = False) -> bool:
    """Whether one occurrence of `anomaly` makes its checker invalid."""
    effect = BY_NAME[anomaly].effect if anomaly in BY_NAME else "fails"
    if effect == "fails-if-idempotent":
        return idempotent
    if effect == "fails-if-available":
        return available
    return effect == "fails"


def effect_on(anomaly: str, idempotent: bool, available: bool) -> str:
    """What `anomaly` did to one run's verdict, in the report's words: fails, allowed,
    informational or unknown."""
    effect = BY_NAME[anomaly].effect if anomaly in BY_NAME else "fails"
    if effect in ("informational", "unknown"):
        return effect
    return "fails" if fails(anomaly, idempotent, available) else "allowed"


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
