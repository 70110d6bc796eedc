"""requirements.lock, the one list of Python packages ordeal runs on, read as data.

The lock is `uv pip compile` output (exact versions, every file's sha256, and a `# via`
note under each package saying what pulled it in). The bootstrap installs all of it into
.venv with pip in hash-checking mode. The model OSN's image takes the part of it that its
own runtime needs: the closure, along the `# via` notes, of the names in
osn/requirements.in. The image therefore has no pin list of its own, and it
cannot drift from the venv that generated its wire code.

    python -m clusters.images.pylock diff OLD NEW    what an update changed
    python -m clusters.images.pylock osn             the OSN's part, as pip reads it
    python clusters/images/pylock.py pins uv         one pin (standard library only: the
                                                     bootstrap runs it before .venv exists)
"""
from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / "requirements.lock"
OSN_ROOTS = ROOT / "osn" / "requirements.in"

_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s\\;]+)")
_HASH = re.compile(r"--hash=(sha256:[0-9a-f]{64})")


class LockError(Exception):
    """The lock cannot be read, or lacks what a build needs from it."""


@dataclass(frozen=True)
class Pin:
    name: str  # normalised (PEP 503): lower case, runs of -_. as one -
    version: str
    hashes: tuple[str, ...]
    via: tuple[str, ...]  # normalised names of what requires it; "" for the project itself

    def requirement(self) -> str:
        """This pin as pip reads it in hash-checking mode."""
        return " \\\n    ".join([f"{self.name}=={self.version}", *(f"--hash={h}" for h in self.hashes)])


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _via_name(note: str) -> str:
    """`ordeal (pyproject.toml)` is the project itself; any other note is a package name."""
    note = note.strip()
    return "" if "(" in note else normalise(note)


def parse(text: str) -> dict[str, Pin]:
    pins: dict[str, Pin] = {}
    current: dict | None = None
    in_via = False

    def close() -> None:
        if current is not None:
            pins[current["name"]] = Pin(current["name"], current["version"], tuple(current["hashes"]),
                                        tuple(current["via"]))

    for line in text.splitlines():
        match = _PIN.match(line)
        if match:
            close()
            current = {"name": normalise(match[1]), "version": match[2], "hashes": [], "via": []}
            in_via = False
        if current is None:
            continue
        current["hashes"].extend(_HASH.findall(line))
        stripped = line.strip()
        if stripped.startswith("# via"):
            rest = stripped[len("# via"):].strip()
            in_via = not rest
            if rest:
                current["via"].append(_via_name(rest))
        elif in_via and stripped.startswith("#   "):
            current["via"].append(_via_name(stripped[1:]))
        elif not stripped.startswith("--hash"):
            in_via = False
    close()
    return pins


def read(path: Path = LOCK) -> dict[str, Pin]:
    try:
        pins = parse(path.read_text())
    except OSError as exc:
        raise LockError(f"cannot read the lock {path}: {exc.strerror}") from exc
    if not pins:
        raise LockError(f"{path} pins no package")
    unhashed = sorted(p.name for p in pins.values() if not p.hashes)
    if unhashed:
        raise LockError(f"{path} has no hashes for {', '.join(unhashed)}: regenerate it with `make lock`")
    return pins


def roots(path: Path = OSN_ROOTS) -> list[str]:
    """The package names in a requirements.in: one a line, no versions (the lock has them)."""
    names = [ln.split("#", 1)[0].strip() for ln in path.read_text().splitlines()]
    return [normalise(n) for n in names if n]


def closure(pins: dict[str, Pin], wanted: list[str]) -> list[Pin]:
    """`wanted` and everything the lock says they pull in, in the lock's order."""
    missing = [n for n in wanted if n not in pins]
    if missing:
        raise LockError(f"the lock pins no {', '.join(missing)}")
    keep = set(wanted)
    grew = True
    while grew:
        grew = False
        for pin in pins.values():
            if pin.name not in keep and keep.intersection(pin.via):
                keep.add(pin.name)
                grew = True
    return [p for p in pins.values() if p.name in keep]


def osn_requirements(lock: Path = LOCK, osn_roots: Path = OSN_ROOTS) -> str:
    """The OSN image's requirements: its part of the lock, with hashes."""
    part = closure(read(lock), roots(osn_roots))
    return "".join(p.requirement() + "\n" for p in part)


def changes(old: dict[str, Pin], new: dict[str, Pin]) -> list[str]:
    """One line per package added, removed or moved to another version."""
    lines = []
    for name in sorted(old.keys() | new.keys()):
        a, b = old.get(name), new.get(name)
        if a is None:
            lines.append(f"+ {name} {b.version}")
        elif b is None:
            lines.append(f"- {name} {a.version}")
        elif a.version != b.version:
            lines.append(f"~ {name} {a.version} -> {b.version}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m clusters.images.pylock", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="verb", required=True)
    diff = sub.add_parser("diff", help="the packages an update of the lock adds, removes or moves")
    diff.add_argument("old", type=Path)
    diff.add_argument("new", type=Path)
    osn = sub.add_parser("osn", help="print the OSN image's part of the lock")
    osn.add_argument("--lock", type=Path, default=LOCK)
    pins = sub.add_parser("pins", help="print the named packages' pins (no dependencies)")
    pins.add_argument("names", nargs="+")
    pins.add_argument("--lock", type=Path, default=LOCK)
    args = parser.parse_args(argv)
    try:
        if args.verb == "diff":
            lines = changes(read(args.old) if args.old.exists() else {}, read(args.new))
            print("\n".join(lines) if lines else "no version changed")
        elif args.verb == "osn":
            sys.stdout.write(osn_requirements(args.lock))
        else:
            locked = read(args.lock)
            missing = [n for n in args.names if normalise(n) not in locked]
            if missing:
                raise LockError(f"the lock pins no {', '.join(missing)}")
            sys.stdout.write("".join(locked[normalise(n)].requirement() + "\n" for n in args.names))
    except LockError as exc:
        print(f"ordeal: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
