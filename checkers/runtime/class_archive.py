"""An ahead-of-time cache of the classes a check loads, for the checker's JVM.

A fresh `ordeal check` of a small history (and the check at the end of every `ordeal
run`) spends most of its time in a JVM that loads and links some 20,000 classes of
Spark, Scala and Hadoop before its first job. The JVM can map them from a cache instead,
loaded and linked already (JDK 25's AOT cache, JEP 483: -XX:AOTCacheOutput, then
-XX:AOTCache; checkers.runtime.java_runtime says why the checker's Java is that one).
`make bootstrap` builds the cache once by checking two small synthetic histories (a
plain one and a transactional one) in a Spark Connect server's JVM (checkers.runtime.connect: the
driver every check runs in) that writes what it loaded as it exits;
every later checker JVM for small histories maps it.
Measured on the 2-core machine, in one process: with JDK 17's class-data-sharing archive
before it, session start 2.9 s -> 1.4 s and a first check of a 3,000-op history 13.2 s
-> 10.1 s; the AOT cache took that check (`ordeal check`, own process) from 12.7-13.9 s
to 10.8-11.6 s (checkers.java_runtime; bench/checks.py prints a fresh `ordeal check` of one).

The cache also holds the methods' profiles of its training run, which the JIT uses to
compile early. Those of small histories mislead the JVM for large ones: they had it leave
hot loops in quick code (a 10M-op check in a new JVM, 88 -> 94-99 s). So that JVM has an
archive of its own, trained on a check of 1M ops in a JVM set as it is (`large=True`);
until that one is built it maps the small one's and replays none of its profiles
(`NO_REPLAY`). With its own, a 10M-op check's JVM part was about 10% quicker (Parquet copy
kept, new JVM, 3 pairs alternating: 42.3-45.3 s against 48.0-48.8 s, JVM CPU 77-82 against
85-87 s), and so was a new check server's first check of 3,000 ops (11.9-12.9 s against
14.1-14.9 s). It costs `make bootstrap` about 65 s more, once per checkout.

The archives are kept in ordeal's cache (`ORDEAL_CACHE`, default ~/.cache/ordeal, as for
the images) under a hash of its inputs: the java binary, the Spark jars and the JVM
options and the driver's class (so each checkout has its own pair); the few used last are kept (`prune`). A JVM
whose classpath or options do not match an archive ignores it (and is told to say
nothing about it), so a stale or missing archive costs speed, never a check.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

from checkers.runtime import java_runtime
from ground.cache import cache_dir

ARCHIVE_PREFIX = "spark-classes-"
# The driver every check runs in (checkers.runtime.connect starts it): its classes are in the archive.
SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
# The JVM ignores a cache that does not match it; these keep it quiet about that.
QUIET_CDS = "-Xlog:aot*=off -Xlog:cds*=off"
# For the JVM for large histories while it has no archive of its own (see above).
NO_REPLAY = "-XX:+UnlockDiagnosticVMOptions -XX:-AOTReplayTraining"
TRAINING_OPS = 3000
LARGE_TRAINING_OPS = 1_000_000
KEEP = 6  # archives kept (some 210 MB each): a pair for each of the last three checkouts
PID_LINE = "training-jvm"


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
    # The driver it is for (a Connect server's loads classes a py4j-started driver's did not).
    key.update(f"{java}:{stat.st_size}:{stat.st_mtime_ns}\n{jars}\n{pyspark.__version__}\n{jvm_options}\n"
               f"{SERVER_CLASS}\n".encode())
    for jar in sorted(jars.glob("*.jar")) if jars.is_dir() else []:
        key.update(f"{jar.name}:{jar.stat().st_size}\n".encode())
    return (cache or cache_dir()) / f"{ARCHIVE_PREFIX}{key.hexdigest()[:16]}.aot"


def java_options(jvm_options: str) -> str:
    """What to add to `jvm_options` so that the JVM maps the archive built for them ("" if none is built)."""
    path = archive_path(jvm_options)
    if path is None or not path.is_file():
        return ""
    used(path)
    return f"-XX:AOTCache={path} {QUIET_CDS}"


def used(path: Path) -> None:
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
