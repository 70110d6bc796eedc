"""Scenario, variant and suite files: a TOML file given by path, or a shipped one by name.

One way to find such a file and read it, so that every kind says a missing file or bad
TOML in the same single line.
"""
from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

# A name that becomes part of a path, a container label or a config line: one safe word.
SAFE_NAME = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"


def settings_path(name_or_path: str, shipped: Path) -> Path:
    """A file path as given, or <shipped>/<name>.toml (shown relative to the working
    directory when it is below it, as from the repository)."""
    path = Path(name_or_path)
    if path.suffix == ".toml" or path.is_file():  # a folder of that name (findings/) is no settings file
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


def to_toml(data: dict[str, Any], header: str = "") -> str:
    """`data` (what a settings model dumps: scalars, lists, tables, lists of tables; None left
    out) as TOML that read_settings reads back to the same data: what `ordeal shrink` and
    `ordeal reproduce` write. The standard library reads TOML but does not write it."""
    lines = [f"# {line}" if line else "#" for line in header.splitlines()]

    def value(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (int, float)):
            return repr(v)
        if isinstance(v, str):
            return json.dumps(v)  # a JSON string is a TOML basic string
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        if isinstance(v, dict):
            return "{ " + ", ".join(f"{json.dumps(k)} = {value(x)}" for k, x in v.items() if x is not None) + " }"
        raise TypeError(f"cannot write {type(v).__name__} as TOML")

    def table(path: list[str], d: dict[str, Any]) -> None:
        scalars = {k: v for k, v in d.items() if v is not None and not _is_table(v) and not _is_tables(v)}
        if path and (scalars or not d):
            lines.extend(["", "[" + ".".join(json.dumps(p) if not p.replace("-", "").replace("_", "").isalnum() else p
                                            for p in path) + "]"])
        lines.extend(f"{json.dumps(k) if not k.replace('-', '').replace('_', '').isalnum() else k} = {value(v)}"
                     for k, v in scalars.items())
        for k, v in d.items():
            if _is_table(v):
                table([*path, k], v)
            elif _is_tables(v):
                for item in v:
                    lines.extend(["", "[[" + ".".join([*path, k]) + "]]"])
                    lines.extend(f"{ik} = {value(iv)}" for ik, iv in item.items() if iv is not None)

    table([], data)
    return "\n".join(lines).lstrip("\n") + "\n"


def _is_table(v: Any) -> bool:
    return isinstance(v, dict) and bool(v) and all(isinstance(k, str) for k in v)


def _is_tables(v: Any) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(x, dict) for x in v)
