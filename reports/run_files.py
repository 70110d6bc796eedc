"""What a run directory holds, read once at the report's edge.

A report is built from results.json, run.json and history.jsonl only, never from
the cluster; any of them may be missing, and the report says which. The history is the
run's history.jsonl, or the one its results.json names (a history checked elsewhere).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ground.anomalies import BY_NAME, KAFKA, LIVENESS, NODES, ORDERING, effect_on, meaning
from ground.run_files import HISTORY, RESULTS_JSON
from ground.run_record import CheckResults, RunFileError, RunRecord, met, verdict_of
from ground.variant import ClientSettings


class RunDirError(ValueError):
    """The directory cannot be reported on (it does not exist, or holds no history)."""


@dataclass(frozen=True)
class Anomaly:
    """One anomaly type as results.json states it."""

    name: str
    count: int
    examples: list[dict[str, Any]]
    evidence: list[int]

    @property
    def family(self) -> str:
        """The checker's family (format 2's transactions are the kafka checker's); other if unnamed."""
        known = BY_NAME.get(self.name)
        return "other" if known is None else "kafka" if known.family == "txn" else known.family

    @property
    def meaning(self) -> str:
        return meaning(self.name)


@dataclass
class RunFiles:
    """The run.json and results.json of one run (ground/run_record.py's models, and as plain
    data for the templates), with what was missing or unreadable."""

    path: Path
    record: RunRecord = field(default_factory=RunRecord)
    checked: CheckResults | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def run(self) -> dict[str, Any]:
        return self.record.model_dump(mode="json", exclude_none=True)

    @property
    def results(self) -> dict[str, Any]:
        return self.checked.model_dump(mode="json", exclude_none=True) if self.checked is not None else {}

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
        return self.checked.verdict if self.checked is not None else verdict_of(None)

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
    def configuration(self) -> str:
        """What the compare page's row names: the variant (named for its Kafka release on a
        suite's kafka_versions axis), and the client where the scenario chose one (a suite's
        clients axis): "kraft-recommended-kafka-3.9.2 (librdkafka@2.3.0)"."""
        client = self.scenario.get("client")
        if not isinstance(client, dict):
            return self.variant_name
        try:
            return f"{self.variant_name} ({ClientSettings.model_validate(client).label})"
        except ValidationError:
            return self.variant_name

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
        order = {name: i for i, name in enumerate(KAFKA + ORDERING + NODES + LIVENESS)}
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
        return self.record.expectation

    @property
    def as_expected(self) -> bool | None:
        """Whether the verdict is one the variant allows under this scenario (ground.run_record.met);
        None when either is unknown."""
        if self.expectation is None:
            return None
        return met(self.expectation, self.verdict, self.faults_missed)

    @property
    def faults(self) -> dict[str, Any]:
        """results.json's "faults" (checkers.faults): each fault's outcomes and failures."""
        f = self.results.get("faults")
        return f if isinstance(f, dict) else {}

    @property
    def faults_missed(self) -> str | None:
        """Why this run cannot count as under its scenario's faults (none took effect), or
        None; None also when run.json does not say which faults the scenario named."""
        return self.checked.faults_missed(self.record) if self.checked is not None else None

    @property
    def idempotent(self) -> bool:
        """Whether duplicates fail the verdict: results.json's say, else the variant's producer."""
        if self.checked is not None and self.checked.idempotent is not None:
            return self.checked.idempotent
        return self.record.idempotent

    def effect(self, anomaly: Anomaly) -> str:
        """What an anomaly does to this run's verdict, by the checkers' rule (checkers/verdict.py):
        fails, allowed (duplicates without idempotence), informational (unseen, unprocessed-input) or
        unknown (lagging-osn)."""
        return effect_on(anomaly.name, self.idempotent, self.results.get("available") is True)

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


def _read(model, path: Path, problems: list[str]):
    try:
        found = model.read(path)
    except RunFileError as exc:
        problems.append(f"{model.FILE} is unreadable ({str(exc).rsplit(': ', 1)[-1]})")
        return None
    if found is None:
        problems.append(f"{model.FILE} is missing")
    return found


def load_run(path: Path, need_history: bool = True) -> RunFiles:
    """Read a run directory; raise RunDirError when there is nothing to report on."""
    path = Path(path)
    if not path.is_dir():
        raise RunDirError(f"{path} is not a directory")
    problems: list[str] = []
    record = _read(RunRecord, path, problems) or RunRecord()
    checked = _read(CheckResults, path, problems)
    files = RunFiles(path=path, record=record, checked=checked, problems=problems)
    if not files.has_history:
        if need_history:
            named = f", nor does its {RESULTS_JSON} name one that exists" if files.results.get("history") else ""
            raise RunDirError(f"{path} holds no {HISTORY}{named}")
        problems.append(f"{HISTORY} is missing")
    return files
