"""Reading a history file (docs/history-format.md): one JSON object a line, in index order.

The torn-line rule, which every reader of a history follows:

- A run killed mid-write (SIGKILL, power loss) may leave its last line torn. A last line that
  is not JSON is therefore skipped, and said (a warning, and `skipped`), never an error.
- Any other line that is not a JSON object is a HistoryError naming the file and line: a
  line that is not JSON with more lines after it (corruption, not a torn tail), or a line of
  JSON that is not an object. A reader that must go on whatever it meets (the report of a
  broken run) passes `lenient=True`: such lines are then skipped and said too.
- Blank lines are nothing.

The checker's ingest reads histories in large chunks for Spark (checkers/ingest/history.py)
and applies the same rule there; tests/harness/test_history.py holds the two to it.
"""
from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

log = logging.getLogger("ordeal.history")

Skipped = Callable[[int, str], None]  # (line number, why) of a line not read


class HistoryError(ValueError):
    """A history file that breaks the torn-line rule; the message names the file and line."""


def parse_line(line: str | bytes) -> dict[str, Any] | None:
    """One line's op, or None when the line is not JSON; a HistoryError-worthy JSON value
    that is not an object comes back as None too (the caller says which it was)."""
    try:
        op = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return op if isinstance(op, dict) else None


def read_history(path: Path, *, lenient: bool = False, skipped: Skipped | None = None) -> Iterator[dict[str, Any]]:
    """Stream the ops of the history at `path` by the torn-line rule (module docstring)."""
    def skip(number: int, why: str) -> None:
        if skipped is not None:
            skipped(number, why)

    torn: tuple[int, str] | None = None
    with open(path, encoding="utf-8", errors="replace") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            if torn is not None:  # the line that was not JSON was not the last one
                if not lenient:
                    raise HistoryError(f"{path}:{torn[0]}: not a JSON object: {torn[1][:60]!r}")
                skip(torn[0], "not JSON")
                torn = None
            try:
                op = json.loads(line)
            except (ValueError, RecursionError):
                torn = (number, line)
                continue
            if not isinstance(op, dict):
                if not lenient:
                    raise HistoryError(f"{path}:{number}: not a JSON object")
                skip(number, "not a JSON object")
                continue
            yield op
    if torn is not None:
        log.warning("%s:%d: skipped a torn last line (the run stopped mid-write)", path, torn[0])
        skip(torn[0], "torn last line")
