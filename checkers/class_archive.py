"""An ahead-of-time cache of the classes a check loads, for the checker's JVM.

A fresh `ordeal check` of a small history (and the check at the end of every `ordeal
run`) spends most of its time in a JVM that loads and links some 20,000 classes of
Spark, Scala and Hadoop before its first job. The JVM can map them from a cache instead,
loaded and linked already (JDK 25's AOT cache, JEP 483: -XX:AOTCacheOutput, then
-XX:AOTCache; checkers.java_runtime says why the checker's Java is that one).
`make bootstrap` builds the cache once by checking two small synthetic histories (a
plain one and a transactional one) in a JVM that writes what it loaded as it exits;
every later checker JVM maps it (one for large histories, and a check server's, too).
Measured on the 2-core machine, in one process: with JDK 17's class-data-sharing archive
before it, session start 2.9 s -> 1.4 s and a first check of a 3,000-op history 13.2 s
-> 10.1 s; the AOT cache took that check (`ordeal check`, own process) from 12.7-13.9 s
to 10.8-11.6 s (checkers.java_runtime; bench/checkers.py prints a fresh `ordeal check` of one).

The cache also holds the methods' profiles of its training run, which the JIT would use
to compile early. The JVM for large histories replays none (`NO_REPLAY`): trained on
small histories, the profiles had it leave hot loops in quick code (a 10M-op check in a
new JVM, compiling 50 -> 22 CPU-s, 88 -> 94-99 s); without them it was as fast as on JDK
17 with its archive (87.8 and 90.1 s against 89.1).

The archive is kept in ordeal's cache (`ORDEAL_CACHE`, default ~/.cache/ordeal, as for
the images) under a hash of its inputs: the java binary, the Spark jars and the JVM
options (so each checkout has its own); the few used last are kept (`prune`). A JVM
whose classpath or options do not match an archive ignores it (and is told to say
nothing about it), so a stale or missing archive costs speed, never a check.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from checkers import java_runtime

ARCHIVE_PREFIX = "spark-classes-"
# The JVM ignores a cache that does not match it; these keep it quiet about that.
QUIET_CDS = "-Xlog:aot*=off -Xlog:cds*=off"
# For the JVM for large histories (see above).
NO_REPLAY = "-XX:+UnlockDiagnosticVMOptions -XX:-AOTReplayTraining"
TRAINING_OPS = 3000
KEEP = 3  # archives kept (some 200 MB each)
_PID_LINE = "training-jvm"


def cache_dir() -> Path:
    """ordeal's cache, as clusters/bootstrap.sh sets it ($ORDEAL_CACHE, or ~/.cache/ordeal): the
    images' inputs, Fabric's tools, the class archives, the check servers' sockets. The one
    place Python reads it, so that a boot finds what the bootstrap built."""
    return Path(os.environ.get("ORDEAL_CACHE") or Path.home() / ".cache" / "ordeal")


def _java() -> Path | None:
    found = java_runtime.java()
    return found.resolve() if found.exists() else None


def archive_path(jvm_options: str, cache: Path | None = None) -> Path | None:
    """Where the archive for a JVM started with `jvm_options` is (or goes); None without java."""
    import pyspark

    java = _java()
    if java is None:
        return None
    jars = Path(pyspark.__file__).parent / "jars"
    key = hashlib.sha256()
    stat = java.stat()
    key.update(f"{java}:{stat.st_size}:{stat.st_mtime_ns}\n{jars}\n{pyspark.__version__}\n{jvm_options}\n".encode())
    for jar in sorted(jars.glob("*.jar")) if jars.is_dir() else []:
        key.update(f"{jar.name}:{jar.stat().st_size}\n".encode())
    return (cache or cache_dir()) / f"{ARCHIVE_PREFIX}{key.hexdigest()[:16]}.aot"


def java_options(jvm_options: str) -> str:
    """What to add to `jvm_options` so that the JVM maps the archive built for them ("" if none is built)."""
    path = archive_path(jvm_options)
    if path is None or not path.is_file():
        return ""
    _used(path)
    return f"-XX:AOTCache={path} {QUIET_CDS}"


def _used(path: Path) -> None:
    """Mark the archive used now (its mtime), so that `prune` keeps it over those no JVM maps.
    Every checkout has an archive of its own (the jars' path is in its key): by build time
    alone, a CI clone's bootstrap evicted the archive of the checkout it was cloned from,
    which had been built first, and that checkout's fresh 3,000-op check then took 17.9 s
    instead of 14.4 until its next bootstrap."""
    try:
        os.utime(path)
    except OSError:
        pass  # a cache that is not ours to write: the archive is still mapped


def prune(cache: Path, keep: int = KEEP) -> None:
    """Drop all but the `keep` archives used or built last: the others are of other inputs (an
    older Spark or java, a checkout since deleted) and only take space."""
    for old in sorted(cache.glob(f"{ARCHIVE_PREFIX}*"), key=lambda p: p.stat().st_mtime)[:-keep]:
        old.unlink(missing_ok=True)


def _train(dump: Path, work: Path) -> None:
    """In a child process: check the training histories in a JVM that dumps its classes to `dump`."""
    from checkers.check import check_history
    from checkers.session import spark_session
    from checkers.synthetic import generate_history, generate_txn_history

    spark = spark_session(small_inputs=True, class_dump=dump)
    for name, generate in (("plain", generate_history), ("txn", generate_txn_history)):
        run = work / name
        run.mkdir()
        generate(run / "history.jsonl", TRAINING_OPS, seed=1)
        check_history(run, spark=spark)
    print(_PID_LINE, spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid(), flush=True)
    spark.stop()


def build(cache: Path, timeout: float = 600.0) -> str:
    """Build the archive for the small-history JVM unless it exists; returns what was done."""
    from checkers.session import small_jvm_options

    options = small_jvm_options()
    target = archive_path(options, cache)
    if target is None:
        return "no java: no class archive"
    if target.is_file():
        _used(target)
        return f"class archive ready ({target.name})"
    cache.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ordeal-cds-", dir=cache) as tmp:
        dump = Path(tmp) / "dump.aot"
        child = subprocess.run([sys.executable, "-m", "checkers.class_archive", "--train", str(dump), tmp],
                               capture_output=True, text=True, timeout=timeout)
        if child.returncode != 0:
            raise RuntimeError(f"training check failed (exit {child.returncode}): "
                               f"{(child.stderr.strip().splitlines() or ['no output'])[-1]}")
        # The JVM says what it does as it writes the cache, on the same stdout, after this line.
        jvm = int(next(line.split()[1] for line in child.stdout.splitlines() if line.startswith(_PID_LINE)))
        deadline = time.monotonic() + 120  # bounded: the JVM writes the archive as it exits
        while Path(f"/proc/{jvm}").exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        if not dump.is_file() or Path(f"/proc/{jvm}").exists():
            raise RuntimeError("the JVM wrote no class archive")
        os.replace(dump, target)
    prune(cache)
    return f"class archive built in {time.monotonic() - started:.0f} s ({target.name})"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m checkers.class_archive", description=__doc__.splitlines()[0])
    p.add_argument("--cache", type=Path, default=None, help="ordeal's cache (default $ORDEAL_CACHE or ~/.cache/ordeal)")
    p.add_argument("--train", nargs=2, metavar=("DUMP", "WORK"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.train:
        _train(Path(args.train[0]), Path(args.train[1]))
        return 0
    try:
        print(build(args.cache or cache_dir()))
    except Exception as exc:  # noqa: BLE001 - whatever went wrong, checks still run, only slower
        print(f"warning: no class archive: {exc.__class__.__name__}: {exc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
