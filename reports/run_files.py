"""What a run directory holds, read once at the report's edge.

A report is built from results.json, run.json and history.jsonl only, never from
the cluster; any of them may be missing, and the report says which. The history is the
run's history.jsonl, or the one its results.json names (a history checked elsewhere).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checkers.faults import faults_missed
from checkers.verdict import INFORMATIONAL, KAFKA, LIVENESS, NODES, ORDERING, fails
from ground.expectations import meets
from ground.run_files import HISTORY, RESULTS_JSON, RUN_JSON

# Which checker owns which anomaly, and which fail a verdict: the checkers' own rules.
KAFKA_ANOMALIES = KAFKA
ORDERING_ANOMALIES = ORDERING
NODE_ANOMALIES = NODES
LIVENESS_ANOMALIES = LIVENESS

ANOMALY_MEANINGS = {
    "lost-write": "a send acknowledged at an offset whose value is missing from the final read of that partition",
    "inconsistent-offsets": "two different values seen at the same (partition, offset), by acks or by reads",
    "duplicate": "one sent value at more than one offset (allowed unless the producer is idempotent)",
    "realtime-order": "send A completed before send B was invoked, same partition, but offset(B) < offset(A)",
    "nonmonotonic-poll": "a consumer's next poll returned an offset not after the last one, with no seek between",
    "poll-skip": "a consumer's consecutive polls jumped over offsets that hold values in the final read",
    "nonmonotonic-send": "a process's later send to a partition landed at or before its earlier one",
    "aborted-read": "a send that completed fail, or of a txn that completed fail (aborted), was seen by a "
                    "(read_committed) read",
    "unseen": "acknowledged but never read by any poll (informational)",
    "group-rewind": "a consumer group assigned a partition at a position below its last acknowledged commit "
                    "there (a commit was lost)",
    "group-skip": "a consumer group assigned a partition at a position no commit explains",
    "unprocessed-input": "records a committed txn committed the group past that no committed txn polled "
                         "(informational: the consumer did not seek back after an abort)",
    "torn-txn": "the final reads hold some but not all sends of a committed or indeterminate txn",
    "precommitted-read": "a txn's poll returned a value the same txn sent (sends are invisible until their txn commits)",
    "int-nonmonotonic-send": "within one txn, a later send to a partition landed at or before an earlier one",
    "int-poll-skip": "within one txn, a consumer's records of a partition jumped over offsets the final read holds",
    "int-nonmonotonic-poll": "within one txn, a consumer's next record of a partition was not after the last one",
    "G0": "a cycle of write-write dependencies between txns (allowed: Kafka promises no serializable order)",
    "G1c": "a cycle of write-write and write-read dependencies between txns (allowed: Kafka promises no "
           "serializable order)",
    "G0-realtime": "a write-write cycle closed by realtime order between txns (allowed: Kafka promises no "
                   "strict serializability)",
    "G1c-realtime": "a write-write / write-read cycle closed by realtime order between txns (allowed: Kafka "
                    "promises no strict serializability)",
    "block-fork": "two OSNs hold different blocks (header hash) at the same number",
    "broken-chain": "previous_hash or data_hash does not match",
    "lost-tx": "Broadcast answered SUCCESS, yet the tx is in no block of any OSN after recovery",
    "duplicate-tx": "one tx id in more than one place of the chain (allowed unless idempotence is promised)",
    "config-not-alone": "an acknowledged channel config update shares its block with another tx (Fabric orders it alone)",
    "batch-overflow": "a block cut after a config update holds more txs than the MaxMessageCount it set",
    "lagging-osn": "an OSN did not catch up after recovery (makes the verdict unknown, not false)",
    "node-crash": "a node exited while no fault had stopped it (a panic, an assertion, an OOM), "
                  "with its exit code and last log lines",
    "unavailable-partition": "no final read of a partition completed ok: it never served again after the faults "
                             "(fails only where the variant promises availability under the fault)",
    "halted-channel": "a channel's final Deliver from an OSN never completed and its chain refused a strict read: "
                      "halted for good (fails only where availability is promised)",
    "hang": "after the final heal, client ops were invoked and none completed ok (fails only where availability "
            "is promised)",
}


class RunDirError(ValueError):
    """The directory cannot be reported on (it does not exist, or holds no history)."""


def verdict_of(valid: Any) -> str:
    """Jepsen's three-valued verdict as one word: valid, invalid or unknown."""
    if valid is True:
        return "valid"
    if valid is False:
        return "invalid"
    return "unknown"


@dataclass(frozen=True)
class Anomaly:
    """One anomaly type as results.json states it."""

    name: str
    count: int
    examples: list[dict[str, Any]]
    evidence: list[int]

    @property
    def family(self) -> str:
        if self.name in ORDERING_ANOMALIES:
            return "ordering"
        if self.name in KAFKA_ANOMALIES:
            return "kafka"
        if self.name in NODE_ANOMALIES:
            return "nodes"
        if self.name in LIVENESS_ANOMALIES:
            return "liveness"
        return "other"

    @property
    def meaning(self) -> str:
        return ANOMALY_MEANINGS.get(self.name, "not described in docs/anomalies.md")


@dataclass
class RunFiles:
    """The parsed run.json and results.json of one run, with what was missing or unreadable."""

    path: Path
    run: dict[str, Any] = field(default_factory=dict)
    results: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @property
    def history(self) -> Path:
        """history.jsonl of the run, else the history results.json names: `ordeal check
        SOME.jsonl --out DIR` writes DIR/results.json beside no history, and names it."""
        beside = self.path / HISTORY
        named = self.results.get("history")
        if beside.is_file() or not isinstance(named, str) or not named:
            return beside
        elsewhere = self.path / named  # an absolute path stays as it is
        return elsewhere if elsewhere.is_file() else beside

    @property
    def has_history(self) -> bool:
        return self.history.is_file()

    @property
    def verdict(self) -> str:
        if not self.results:
            return "unknown"
        return verdict_of(self.results.get("valid"))

    @property
    def variant(self) -> dict[str, Any]:
        v = self.run.get("variant")
        return v if isinstance(v, dict) else {}

    @property
    def scenario(self) -> dict[str, Any]:
        s = self.run.get("scenario")
        return s if isinstance(s, dict) else {}

    @property
    def variant_name(self) -> str:
        return str(self.variant.get("name") or self.results.get("variant") or "unnamed variant")

    @property
    def scenario_name(self) -> str:
        return str(self.scenario.get("name") or self.results.get("scenario") or "unnamed scenario")

    @property
    def checkers(self) -> dict[str, dict[str, Any]]:
        c = self.results.get("checkers")
        if not isinstance(c, dict):
            return {}
        return {str(k): (v if isinstance(v, dict) else {"valid": v}) for k, v in c.items()}

    @property
    def anomalies(self) -> list[Anomaly]:
        """Anomaly types ordered as checkers.verdict lists them, unknown names last."""
        raw = self.results.get("anomalies")
        if not isinstance(raw, dict):
            return []
        order = {name: i for i, name in enumerate(KAFKA_ANOMALIES + ORDERING_ANOMALIES + NODE_ANOMALIES + LIVENESS_ANOMALIES)}
        found = []
        for name, body in raw.items():
            body = body if isinstance(body, dict) else {}
            examples = [e for e in body.get("examples") or [] if isinstance(e, dict)]
            evidence = [int(i) for i in body.get("evidence") or [] if _is_int(i)]
            count = body.get("count")
            found.append(
                Anomaly(
                    name=str(name),
                    count=int(count) if _is_int(count) else len(examples),
                    examples=examples,
                    evidence=evidence,
                )
            )
        return sorted(found, key=lambda a: (order.get(a.name, len(order)), a.name))

    @property
    def expectation(self) -> str | None:
        """What the variant states for this scenario ("valid", "invalid", "invalid-possible"), if it says."""
        expect = self.variant.get("expect")
        if not isinstance(expect, dict):
            return None
        stated = expect.get(self.scenario_name)
        return str(stated) if stated is not None else None

    @property
    def as_expected(self) -> bool | None:
        """Whether the verdict is one the variant allows under this scenario; None when either
        is unknown, or when an allowed verdict was reached without any fault taking effect
        (undecided: the run says nothing of the faults it was for)."""
        if self.expectation is None:
            return None
        met = meets(self.expectation, self.verdict)
        return None if met and self.faults_missed else met

    @property
    def faults(self) -> dict[str, Any]:
        """results.json's "faults" (checkers.faults): each fault's outcomes and failures."""
        f = self.results.get("faults")
        return f if isinstance(f, dict) else {}

    @property
    def faults_missed(self) -> str | None:
        """Why this run cannot count as under its scenario's faults (none took effect), or
        None; None also when run.json does not say which faults the scenario named."""
        nemesis = self.scenario.get("nemesis")
        if not isinstance(nemesis, dict) or not isinstance(nemesis.get("faults"), list) or not self.results:
            return None
        return faults_missed([str(f) for f in nemesis["faults"]], nemesis.get("may_find_no_target") is True,
                             self.results.get("faults"))

    @property
    def idempotent(self) -> bool:
        """Whether duplicates fail the verdict: results.json's say, else the variant's producer."""
        if isinstance(self.results.get("idempotent"), bool):
            return self.results["idempotent"]
        producer = self.variant.get("producer")
        return bool(producer.get("enable_idempotence")) if isinstance(producer, dict) else False

    def effect(self, anomaly: Anomaly) -> str:
        """What an anomaly does to this run's verdict, by the checkers' rule (checkers/verdict.py):
        fails, allowed (duplicates without idempotence), informational (unseen, unprocessed-input) or
        unknown (lagging-osn)."""
        if anomaly.name in INFORMATIONAL:
            return "informational"
        if anomaly.name == "lagging-osn":
            return "unknown"
        return "fails" if fails(anomaly.name, self.idempotent, self.results.get("available") is True) else "allowed"

    @property
    def unknown(self) -> list[str]:
        """Why the whole history is unknown, beside what each checker could not judge (it
        proves nothing, say)."""
        u = self.results.get("unknown")
        return [str(x) for x in u] if isinstance(u, list) else []

    @property
    def warnings(self) -> list[str]:
        w = self.results.get("warnings")
        return [str(x) for x in w] if isinstance(w, list) else []

    @property
    def cluster_size(self) -> dict[str, int]:
        c = self.variant.get("cluster")
        if not isinstance(c, dict):
            return {}
        return {k: int(c[k]) for k in ("zookeepers", "controllers", "brokers", "osns") if _is_int(c.get(k))}


def _is_int(x: Any) -> bool:
    if isinstance(x, bool):
        return False
    if isinstance(x, int):
        return True
    return isinstance(x, str) and x.strip().lstrip("-").isdigit()


def _read_json(path: Path, problems: list[str]) -> dict[str, Any]:
    if not path.is_file():
        problems.append(f"{path.name} is missing")
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        problems.append(f"{path.name} is unreadable ({exc.__class__.__name__})")
        return {}
    if not isinstance(data, dict):
        problems.append(f"{path.name} is not a JSON object")
        return {}
    return data


def load_run(path: Path, need_history: bool = True) -> RunFiles:
    """Read a run directory; raise RunDirError when there is nothing to report on."""
    path = Path(path)
    if not path.is_dir():
        raise RunDirError(f"{path} is not a directory")
    problems: list[str] = []
    run = _read_json(path / RUN_JSON, problems)
    results = _read_json(path / RESULTS_JSON, problems)
    files = RunFiles(path=path, run=run, results=results, problems=problems)
    if not files.has_history:
        if need_history:
            named = f", nor does its {RESULTS_JSON} name one that exists" if files.results.get("history") else ""
            raise RunDirError(f"{path} holds no {HISTORY}{named}")
        problems.append(f"{HISTORY} is missing")
    return files
