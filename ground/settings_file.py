"""Scenario, variant and suite files: a TOML file given by path, or a shipped one by name.

One way to find such a file and read it, so that every kind says a missing file or bad
TOML in the same single line.
"""
from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

# A name that becomes part of a path, a container label or a config line: one safe word.
SAFE_NAME = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"


def settings_path(name_or_path: str, shipped: Path) -> Path:
    """A file path as given, or <shipped>/<name>.toml (shown relative to the working
    directory when it is below it, as from the repository)."""
    path = Path(name_or_path)
    if path.suffix == ".toml" or path.exists():
        return path
    found = shipped / f"{name_or_path}.toml"
    try:
        return found.relative_to(Path.cwd())
    except ValueError:
        return found


def read_settings(name_or_path: str, shipped: Path, kind: str, error: type[ValueError]) -> tuple[Path, dict[str, Any]]:
    """(path, TOML table); `error` with one line when the file is missing or not TOML."""
    path = settings_path(name_or_path, shipped)
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in shipped.glob("*.toml")))
        raise error(f"{kind} {name_or_path}: no such file or shipped {kind} (known: {known})")
    try:
        return path, tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{kind} {path}: not valid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise error(f"{kind} {path}: not UTF-8 text (byte {exc.start}: {exc.reason})") from None
    except OSError as exc:
        raise error(f"{kind} {path}: cannot read: {exc.strerror or exc}") from None
