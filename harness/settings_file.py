"""Scenario, variant and suite files: a TOML file given by path, or a shipped one by name.

One way to find such a file and read it, so that every kind says a missing file or bad
TOML in the same single line.
"""
from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any


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
        return path, tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{kind} {path}: not valid TOML: {exc}") from None
