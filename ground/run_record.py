"""run.json and results.json as models, and the facts every reader of them must agree on,
each stated once: the verdict word, the exit status, whether a verdict meets what the variant
expects ("met unless the faults missed"), and whether the faults took effect at all.

The runner writes run.json twice (when the run starts, and when it has ended and been
checked); the checker writes results.json once. The checker, the report, the suite, compare
and the pytest plugin read them through these models. Both keep fields they do not name
(`extra="allow"`), so a newer file read by an older ordeal loses nothing.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, ValidationError

from ground.anomalies import MAKES_UNKNOWN
from ground.expectations import meets
from ground.fault_outcome import faults_missed
from ground.run_files import RESULTS_JSON, RUN_JSON
from ground.validation_message import one_line

VALID, INVALID, UNKNOWN = "valid", "invalid", "unknown"
# Exit statuses of a run and of `ordeal check` (README, "The two commands"): 0 only for valid.
EXIT_VALID, EXIT_INVALID, EXIT_USAGE, EXIT_UNKNOWN, EXIT_NOT_CHECKED = 0, 1, 2, 3, 4
_EXITS = {VALID: EXIT_VALID, INVALID: EXIT_INVALID, UNKNOWN: EXIT_UNKNOWN}


def verdict_of(valid: Any) -> str:
    """Jepsen's three-valued verdict (true, false, "unknown") as one word."""
    if valid is True:
        return VALID
    if valid is False:
        return INVALID
    return UNKNOWN


def exit_code_of(verdict: str) -> int:
    return _EXITS[verdict]


def met(expectation: str, verdict: str, missed: str | None) -> bool | None:
    """Whether a verdict meets the variant's expectation: None when undecided, that is when
    the run is unknown, or when an allowed verdict came without any fault taking effect (such
    a run says nothing of the faults it was for; a forbidden verdict stays a miss)."""
    ok = meets(expectation, verdict)
    return None if ok and missed else ok


class RunFileError(ValueError):
    """run.json or results.json exists but cannot be read as one (one line)."""


class _File(BaseModel):
    model_config = ConfigDict(extra="allow")
    FILE: ClassVar[str] = ""

    @classmethod
    def read(cls, run_dir: Path):
        """The file in `run_dir`; None when it is absent. RunFileError when unreadable."""
        path = Path(run_dir) / cls.FILE
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise RunFileError(f"{path}: unreadable ({exc.__class__.__name__})") from None
        if not isinstance(raw, dict):
            raise RunFileError(f"{path}: not a JSON object")
        try:
            return cls.model_validate(raw)
        except ValidationError as exc:
            raise RunFileError(f"{path}: {one_line(exc)}") from None

    def write(self, run_dir: Path) -> Path:
        """Written whole or not at all (a rename), so a reader never sees half a file."""
        path = Path(run_dir) / self.FILE
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(self.model_dump(mode="json"), indent=2) + "\n")
        tmp.replace(path)
        return path


def _name(part: Any) -> str | None:
    return part.get("name") if isinstance(part, dict) and isinstance(part.get("name"), str) else None


class RunRecord(_File):
    """run.json: what ran (the resolved scenario and variant, the client, the seed), on which
    cluster and ordering service, and how it ended."""

    FILE: ClassVar[str] = RUN_JSON
    scenario: dict[str, Any] = {}
    source: str | None = None
    variant: dict[str, Any] = {}
    client: dict[str, Any] | None = None
    seed: int | None = None
    started: str | None = None
    cluster: str | None = None
    orderer: dict[str, Any] | None = None
    finished: str | None = None
    completions: dict[str, int] | None = None
    signal: int | None = None
    crashed: str | None = None
    lost: str | None = None
    check: dict[str, Any] | None = None
    # How the variant judges this run (ground.variant.Judgement: the scenario's fault kinds,
    # the strictest expectation, the availability promise, the kinds its tables do not cover).
    judgement: dict[str, Any] | None = None

    @property
    def scenario_name(self) -> str | None:
        return _name(self.scenario)

    @property
    def variant_name(self) -> str | None:
        return _name(self.variant)

    @property
    def nemesis(self) -> dict[str, Any]:
        n = self.scenario.get("nemesis")
        return n if isinstance(n, dict) else {}

    @property
    def fault_names(self) -> list[str] | None:
        """The faults the scenario names; None when run.json does not say."""
        faults = self.nemesis.get("faults")
        return [str(f) for f in faults] if isinstance(faults, list) else None

    @property
    def idempotent(self) -> bool:
        """Whether the variant's producer is idempotent: duplicates then fail the verdict."""
        producer = self.variant.get("producer")
        return bool(producer.get("enable_idempotence")) if isinstance(producer, dict) else False

    @property
    def available(self) -> bool:
        """Whether the variant promises to serve again after this scenario's faults (a run.json
        older than the judgement: the promise named as the scenario)."""
        if self.judgement is not None:
            return self.judgement.get("available") is True
        promised = self.variant.get("available")
        return isinstance(promised, dict) and promised.get(self.scenario_name) is True

    @property
    def expectation(self) -> str | None:
        """What the variant expects of this run (valid, invalid, invalid-possible): the
        judgement's, or (an older run.json) what it states under the scenario's name, if anything."""
        if self.judgement is not None and isinstance(self.judgement.get("expectation"), str):
            return self.judgement["expectation"]
        expect = self.variant.get("expect")
        stated = expect.get(self.scenario_name) if isinstance(expect, dict) else None
        return str(stated) if stated is not None else None

    @property
    def uncovered(self) -> list[str]:
        """The scenario's fault kinds the variant's tables do not cover (judged as valid, unpromised)."""
        kinds = (self.judgement or {}).get("uncovered")
        return [str(k) for k in kinds] if isinstance(kinds, list) else []


class CheckResults(_File):
    """results.json: the checkers' verdict, anomalies with their evidence, and the faults'
    outcomes."""

    FILE: ClassVar[str] = RESULTS_JSON
    valid: bool | str | None = None
    anomalies: dict[str, Any] = {}
    checkers: dict[str, Any] = {}
    faults: dict[str, Any] | None = None
    unknown: list[Any] = []
    warnings: list[Any] = []
    idempotent: bool | None = None
    available: bool | None = None
    history: str | None = None

    @property
    def verdict(self) -> str:
        return verdict_of(self.valid)

    @property
    def exit_code(self) -> int:
        return exit_code_of(self.verdict)

    def unknown_reason(self) -> str:
        """Why the verdict is unknown, in one sentence that names which checker could not
        decide and on what ("" for a decided verdict): what the report's banner, a suite's line,
        a JUnit failure and `ordeal run` say."""
        if self.verdict != UNKNOWN:
            return ""
        if self.unknown:
            return "the history cannot be judged: " + "; ".join(str(u) for u in self.unknown)
        parts = []
        for name, checker in self.checkers.items():
            if not isinstance(checker, dict) or checker.get("valid") not in (UNKNOWN, None):
                continue
            undecided = [a for a in checker.get("anomalies") or [] if a in MAKES_UNKNOWN]
            said = [f"found {', '.join(undecided)}, which leaves it undecided"] if undecided else []
            not_judged = checker.get("not_judged") if isinstance(checker.get("not_judged"), dict) else {}
            for anomaly, why in not_judged.items():
                reasons = [str(w) for w in why] if isinstance(why, list) else [str(why)]
                if reasons:
                    more = f" (and {len(reasons) - 1} more)" if len(reasons) > 1 else ""
                    said.append(f"could not judge {anomaly}: {reasons[0]}{more}")
            if said:
                parts.append(f"{name} " + "; ".join(said))
        return "; ".join(parts) if parts else "no checker reached a verdict"

    def faults_missed(self, record: RunRecord | None) -> str | None:
        """Why this run cannot count as under its scenario's faults, or None (also when
        run.json does not say which faults the scenario named)."""
        if record is None or record.fault_names is None:
            return None
        return faults_missed(record.fault_names, record.nemesis.get("may_find_no_target") is True, self.faults)
