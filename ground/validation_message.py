"""A pydantic validation error as the one line a user reads: `field.path: message`.

Scenario and variant files are both refused this way (exit 2), so they share it.
"""
from __future__ import annotations

from pydantic import ValidationError

_MESSAGES = {
    "missing": "required",
    "extra_forbidden": "unknown key",
    "greater_than": "must be > {gt}",
    "greater_than_equal": "must be >= {ge}",
    "less_than_equal": "must be <= {le}",
    "too_short": "must not be empty",
    "string_too_short": "must not be empty",
}


def one_line(exc: ValidationError) -> str:
    """The first error of a pydantic validation as `field.path: message`."""
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"])
    template = _MESSAGES.get(err["type"])
    ctx = {k: int(v) if isinstance(v, float) and v.is_integer() else v for k, v in err.get("ctx", {}).items()}
    msg = template.format(**ctx) if template else err["msg"].removeprefix("Value error, ")
    return f"{where}: {msg}" if where else msg
