"""What a fault request did, as the runner marks it on the nemesis op it records (the op's
`outcome` key; docs/history-format.md): the runner writes these words, checkers/faults.py
counts them into results.json's "faults", the report shows them. And, once, what those counts
mean for a run: whether its faults can be said to have happened (`faults_missed`)."""
from __future__ import annotations

from typing import Any

OUTCOME = "outcome"
# What a start did, and what a stop or heal did.
TOOK_EFFECT, FAILED, NO_TARGET = "took-effect", "failed", "no-target"
UNDONE, UNDO_FAILED = "undone", "undo-failed"
START_OUTCOMES = (TOOK_EFFECT, FAILED, NO_TARGET)
OUTCOMES = (*START_OUTCOMES, UNDONE, UNDO_FAILED)


def failure_summary(faults: Any, limit: int = 3) -> str:
    """The first failures of results.json's faults in one line, for a CLI or a suite table."""
    if not isinstance(faults, dict):
        return "no fault outcomes recorded"
    failures = [f for f in faults.get("failures") or [] if isinstance(f, dict)]
    if not failures:
        return "no start was made" if faults.get("took_effect") is None else "none failed"
    shown = [f"#{f.get('index')} {f.get('fault')} {f.get('outcome')}: {f.get('error') or '?'}" for f in failures[:limit]]
    more = len(failures) - limit + int(faults.get("more_failures") or 0)
    return "; ".join(shown) + (f"; {more} more" if more > 0 else "")


def faults_missed(fault_names: list[str], may_find_no_target: bool, faults: Any) -> str | None:
    """Why a run cannot count as having been under the faults its scenario names, given
    its results' "faults", or None when it can: no start took effect (every one failed or
    found no target, or none was made). A scenario whose faults may legitimately find
    nothing to hit (nemesis.may_find_no_target) is excused starts that found no target,
    never failures. Suites call such a run undecided, whatever its verdict allowed."""
    if not fault_names:
        return None
    if not isinstance(faults, dict) or "took_effect" not in faults:
        return "no fault outcome recorded"
    if faults["took_effect"] is True:
        return None
    if faults["took_effect"] is None:
        return "no fault was started"
    counts = [c for c in (faults.get("by_fault") or {}).values() if isinstance(c, dict)]
    if may_find_no_target and not any(c.get(FAILED) for c in counts):
        return None
    return f"no fault took effect ({failure_summary(faults)})"
