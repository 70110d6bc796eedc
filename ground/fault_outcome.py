"""What a fault request did, as the runner marks it on the nemesis op it records (the op's
`outcome` key; docs/history-format.md): the runner writes these words, checkers/faults.py
counts them, the report shows them."""
from __future__ import annotations

OUTCOME = "outcome"
# What a start did, and what a stop or heal did.
TOOK_EFFECT, FAILED, NO_TARGET = "took-effect", "failed", "no-target"
UNDONE, UNDO_FAILED = "undone", "undo-failed"
START_OUTCOMES = (TOOK_EFFECT, FAILED, NO_TARGET)
OUTCOMES = (*START_OUTCOMES, UNDONE, UNDO_FAILED)
