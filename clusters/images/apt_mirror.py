"""The Debian mirror and suite this machine's apt already uses.

The base image is debootstrapped from the same mirror, read at run time so that no
registry host is ever written into the project.
"""
from __future__ import annotations

import re
from pathlib import Path

SOURCES = (Path("/etc/apt/sources.list"), Path("/etc/apt/sources.list.d"))


def _os_codename() -> str:
    for line in Path("/etc/os-release").read_text().splitlines():
        if line.startswith("VERSION_CODENAME="):
            return line.split("=", 1)[1].strip().strip('"')
    raise RuntimeError("cannot tell the Debian suite: no VERSION_CODENAME in /etc/os-release")


def _entries() -> list[tuple[str, list[str]]]:
    """(uri, suites) of every `deb` source, one-line and deb822 formats alike."""
    files: list[Path] = []
    for src in SOURCES:
        if src.is_file():
            files.append(src)
        elif src.is_dir():
            files.extend(sorted(p for p in src.iterdir() if p.suffix in (".list", ".sources")))
    entries: list[tuple[str, list[str]]] = []
    for f in files:
        text = f.read_text(errors="replace")
        if f.suffix == ".sources":
            for stanza in re.split(r"\n\s*\n", text):
                fields = dict(
                    (k.strip().lower(), v.strip())
                    for k, v in (ln.split(":", 1) for ln in stanza.splitlines() if ":" in ln and not ln.startswith("#"))
                )
                if "deb" in fields.get("types", "").split() and "uris" in fields:
                    for uri in fields["uris"].split():
                        entries.append((uri, fields.get("suites", "").split()))
        else:
            for ln in text.splitlines():
                parts = re.sub(r"\[[^\]]*\]", "", ln).split()
                if len(parts) >= 3 and parts[0] == "deb":
                    entries.append((parts[1], [parts[2]]))
    return entries


def debian_mirror() -> tuple[str, str]:
    """(mirror URI, suite) of the source that serves this machine's own Debian release."""
    suite = _os_codename()
    for uri, suites in _entries():
        if suite in suites:
            return uri.rstrip("/"), suite
    raise RuntimeError(f"no apt source serves the suite {suite!r}; cannot debootstrap the base image")
