"""ordeal's cache directory (images' inputs, Fabric's tools, the class archives, the Spark
Connect servers' state), and how two processes share what is built into it.

Two runs may start at once on a machine where an artifact or image must first be built (a
fresh machine, a changed input, two users). Each artifact is built under an exclusive lock
named for its key: the first process builds, the others wait for it and then use its result.
Each build works in a folder of its own and appears under its final name only once
complete, so a build killed half-way leaves nothing that looks finished.
"""
from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

COMPLETE = ".complete"


def cache_dir() -> Path:
    """ordeal's cache, as clusters/bootstrap.sh sets it ($ORDEAL_CACHE, or ~/.cache/ordeal).
    The one place Python reads it, so that a boot finds what the bootstrap built."""
    return Path(os.environ.get("ORDEAL_CACHE") or Path.home() / ".cache" / "ordeal")


@contextlib.contextmanager
def exclusive(lock_file: Path, what: str) -> Iterator[None]:
    """Hold an exclusive lock on `lock_file` (made if missing) for the block. A process that
    must wait says once, on stderr, what it waits for; the lock goes with the process, so a
    killed builder never leaves it held."""
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_file, "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"ordeal: waiting for another process building {what}", file=sys.stderr, flush=True)
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def complete(folder: Path) -> bool:
    return (folder / COMPLETE).exists()


def built_once(final: Path, build: Callable[[Path], None], what: str | None = None) -> Path:
    """`final`, built by `build(work_folder)` unless a complete one exists. Concurrent callers
    for the same `final` build it once: the others wait and return the first one's result."""
    if complete(final):
        return final
    with exclusive(final.with_name(final.name + ".lock"), what or final.name):
        if complete(final):
            return final
        work = Path(tempfile.mkdtemp(prefix=final.name + ".", suffix=".tmp", dir=final.parent))
        try:
            build(work)
            (work / COMPLETE).touch()
            if final.exists():
                shutil.rmtree(final)
            work.rename(final)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return final
