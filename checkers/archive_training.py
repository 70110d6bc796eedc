"""Training the checker JVMs' class archives (checkers/runtime/class_archive.py says what they
are and why): a small synthetic history checked in a JVM set as the one that will map the
archive, which writes what it loaded as it exits. `make bootstrap` runs it once per
checkout: `python -m checkers.archive_training`. It lives above the check it runs, so the
runtime that maps an archive never imports a check.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from checkers.check import check_history
from checkers.runtime.class_archive import LARGE_TRAINING_OPS, PID_LINE, TRAINING_OPS, archive_path, prune, used
from checkers.runtime.session import jvm_options, spark_session
from checkers.sample_histories import generate_history, generate_txn_history
from ground.cache import cache_dir
from ground.run_files import HISTORY


def _train(dump: Path, work: Path, large: bool) -> None:
    """In a child process: check the training histories in a JVM that dumps its classes to `dump`:
    for the small JVM two small synthetic ones (a plain and a transactional one), for the large
    JVM one of LARGE_TRAINING_OPS ops (as the bench's)."""
    spark, server = spark_session(small_inputs=not large, class_dump=dump)
    histories = ([("large", generate_history, LARGE_TRAINING_OPS)] if large else
                 [("plain", generate_history, TRAINING_OPS), ("txn", generate_txn_history, TRAINING_OPS)])
    for name, generate, ops in histories:
        run = work / name
        run.mkdir()
        generate(run / HISTORY, ops, seed=1)
        check_history(run, spark=spark)
    print(PID_LINE, server.pid, flush=True)
    spark.stop()
    server.stop(timeout=300)  # its JVM writes the archive as it exits (bounded as build() waits)


def build(cache: Path, *, large: bool = False, timeout: float = 600.0) -> str:
    """Build the archive for the JVM for small histories (or for large ones) unless it exists;
    returns what was done."""
    kind = "large" if large else "small"
    target = archive_path(jvm_options(small_inputs=not large), cache)
    if target is None:
        return "no java: no class archive"
    if target.is_file():
        used(target)
        return f"{kind} JVM's class archive ready ({target.name})"
    cache.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ordeal-cds-", dir=cache) as tmp:
        dump = Path(tmp) / "dump.aot"
        command = [sys.executable, "-m", "checkers.archive_training", "--train", str(dump), tmp, kind]
        child = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        if child.returncode != 0:
            raise RuntimeError(f"training check failed (exit {child.returncode}): "
                               f"{(child.stderr.strip().splitlines() or ['no output'])[-1]}")
        # The JVM says what it does as it writes the cache, on the same stdout, after this line.
        jvm = int(next(line.split()[1] for line in child.stdout.splitlines() if line.startswith(PID_LINE)))
        deadline = time.monotonic() + 300  # bounded: the JVM writes the archive as it exits
        while Path(f"/proc/{jvm}").exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        if not dump.is_file() or Path(f"/proc/{jvm}").exists():
            raise RuntimeError("the JVM wrote no class archive")
        os.replace(dump, target)
    prune(cache)
    return f"{kind} JVM's class archive built in {time.monotonic() - started:.0f} s ({target.name})"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m checkers.archive_training", description=__doc__.splitlines()[0])
    p.add_argument("--cache", type=Path, default=None, help="ordeal's cache (default $ORDEAL_CACHE or ~/.cache/ordeal)")
    p.add_argument("--only", choices=("small", "large"),
                   help="build one archive: the small JVM's (what a first run's check maps) or the large one's")
    p.add_argument("--train", nargs=3, metavar=("DUMP", "WORK", "KIND"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.train:
        _train(Path(args.train[0]), Path(args.train[1]), large=args.train[2] == "large")
        return 0
    done = []
    kinds = (False, True) if args.only is None else (args.only == "large",)
    for large in kinds:  # the small one first: every check maps it until the other is built
        try:
            done.append(build(args.cache or cache_dir(), large=large))
        except Exception as exc:  # noqa: BLE001 - whatever went wrong, checks still run, only slower
            done.append(f"warning: no {'large' if large else 'small'} JVM's class archive: "
                        f"{exc.__class__.__name__}: {exc}")
    print("; ".join(done))  # one line: the bootstrap's last line quotes it
    return 0


if __name__ == "__main__":
    sys.exit(main())
