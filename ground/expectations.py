"""What a variant states for a fault kind, and whether a verdict meets it: the variant file
says it, the suite, the pytest plugin and the reports judge by it."""
from __future__ import annotations

from typing import Literal

# "valid" (nothing may be found), "invalid" (the fault is built to break this configuration:
# the checkers must find it), or "invalid-possible" (either verdict is allowed).
Expectation = Literal["valid", "invalid", "invalid-possible"]


def meets(expectation: str, verdict: str) -> bool | None:
    """Whether a verdict ("valid" / "invalid" / "unknown") is one the expectation allows;
    None when the run is undecided ("unknown") and so proves nothing either way."""
    if verdict == "unknown":
        return None
    return expectation == "invalid-possible" or verdict == expectation
