"""The SparkSession every checker runs in, and its settings for the history at hand.

Every session is a Spark Connect client's (checkers.runtime.connect): of a server ordeal starts on
this machine, or of one a user runs (`remote`). The server ordeal starts runs local[*] by
default, tuned for a small machine (few shuffle partitions, no UI, quiet logs); a Spark
cluster is reached by passing its master URL. The caller decides the master and the
server: this module reads no environment variable.

A small history (most runs: thousands of ops) costs Spark's fixed overheads only, so it
is checked with settings that cut them (`fit_to_input`): one shuffle partition, no
adaptive re-planning and no broadcast joins (each runs as Spark jobs of their own), no
whole-stage code generation (compiling it costs more than it saves on so few rows), no
filters inferred from constraints. A JVM started for small histories compiles with C1
only: its quicker start and warm-up pay, and C2's faster code would not. It also maps the
classes a check loads from an archive built once (checkers.runtime.class_archive). A JVM started
for large ones is set for throughput (`_THROUGHPUT`, `_THROUGHPUT_HEAP`) and maps an
archive of its own; so does the shared Connect server's (checkers.runtime.connect), which is such a JVM.
"""
from __future__ import annotations

import contextlib
import os
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

from pyspark.sql import SparkSession

from checkers.runtime import connect
from checkers.runtime.class_archive import NO_REPLAY, QUIET_CDS
from checkers.runtime.class_archive import java_options as class_archive_options
from checkers.runtime.connect import SparkUnavailable

LOCAL_MASTER = "local[*]"
_LOG_CONFIG = Path(__file__).with_name("log4j2.properties")

# Small-machine defaults: the UI only costs start-up time and a port.
_DEFAULTS: dict[str, str] = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.adaptive.enabled": "true",
    "spark.sql.session.timeZone": "UTC",
    "spark.driver.memory": "3g",
    "spark.sql.files.maxPartitionBytes": str(64 * 1024 * 1024),
    # A check compiles some 350 classes; with Spark's 100 kept, a re-check in the same
    # session compiles (and the JVM JIT-compiles) them all again.
    "spark.sql.codegen.cache.maxEntries": "2000",
    # The checks group millions of distinct keys: the small first-level map in front of
    # the main one (2^16 keys) only adds a miss per row (offset summary of 10M ops: -18%).
    "spark.sql.codegen.aggregate.map.twolevel.enabled": "false",
    "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile=file:{_LOG_CONFIG}",
    # Spark Connect re-resolves each action's whole plan unless its parts are in the session's
    # plan cache (32 by default): a batch of 20 histories reads some 100 Parquet tables, and
    # with 32 each history after the first cost 0.38-0.40 s against the old py4j server's
    # 0.32; with 1024, 0.32 (bench/checks.py, 3,000-op histories).
    "spark.connect.session.planCache.maxSize": "1024",
}

# A local session talks to itself only, over loopback.
_LOCAL_ONLY: dict[str, str] = {
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
}


# Below this many ops a history is small (see the module's docstring); a history file of
# this many bytes holds about that many.
SMALL_INPUT_OPS = 200_000
SMALL_INPUT_BYTES = 50 * 2**20
_SMALL_INPUT: dict[str, str] = {
    "spark.sql.shuffle.partitions": "1",
    "spark.sql.adaptive.enabled": "false",
    "spark.sql.autoBroadcastJoinThreshold": "-1",
    "spark.sql.optimizer.disableHints": "true",
    "spark.sql.codegen.wholeStage": "false",
    # Inferring filters from each operator's constraints is planning work that pays only where
    # it prunes many rows: a warm 3,000-op check was about 6% faster without it (median of 12
    # alternating checks, 6.21 against 6.60 s), with the same results.
    "spark.sql.constraintPropagation.enabled": "false",
}
# Below this many ops, expressions are evaluated without generated code: compiling a
# check's classes (Janino) costs a first check of 3,000 ops about 1.5 s of its 10 s, and
# evaluating its rows costs little; from some 20,000 ops generated code pays once compiled
# (the classes are cached for later checks in the session).
INTERPRETED_OPS = 10_000
_INTERPRETED: dict[str, str] = {"spark.sql.codegen.factoryMode": "NO_CODEGEN"}
# C1 alone gets the JVM's non-tiered code cache of 48 MiB, which Spark's generated classes
# fill after a few checks in one session ("CodeCache is full. Compiler has been disabled":
# every later check runs interpreted); the tiered default of 240 MiB is kept.
_C1_ONLY = "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m"
# For large histories (figures: 10M ops, first check in a new JVM, quiet machine): the
# parallel collector, as a check is a batch job and G1's barriers and concurrent work
# cost it throughput (61 -> 53 s); and methods compiled at 3 times the usual invocation
# counts, as 41 of the check's 85 JVM CPU seconds went to the JIT compilers, much of it on
# code that runs briefly (the code generator's own compiler, planning), while the hot
# loops still get compiled at once (compiling 41 -> 28-37 s, 45 -> 40-42 s). And C2
# inlines a callee already compiled only when its code is under 500 bytes (2,500 by
# default), so that it copies fewer large methods into each one it compiles: the JIT
# still took 39-46 s of the JVM's 92-105 CPU seconds (10M ops, Parquet copy kept, new JVM,
# 6 runs each alternating, /tmp A/B, 2026-11-28: compiling 39-46 -> 25-28 s, JVM CPU
# 92-105 -> 81-91 s, wall 49-57 -> 45-51 s; 1,000 bytes compiled for 33 s, 250 bytes for
# 21-23 s but its tasks ran slower, and lower FreqInlineSize, MaxInlineSize or
# MaxInlineLevel, or no SuperWord, added nothing).
#
# And C2 leaves alone the code that runs briefly in a check, however often it is called:
# the code generator's compiler (Janino), the closure cleaner's class reader, class loading
# and class-file writing, Java serialization of tasks, ICU (`_JIT_DIRECTIVES`); C1 alone
# compiles it. C2 spent some 6 of its 22 s on it (a flight recording of a 10M-op check),
# and the JVM runs that code no slower that the wall shows (10M ops, Parquet copy kept, new
# JVM, each with its own class archive, 3 pairs alternating, /tmp A/B, 2026-11-28:
# compiling 24.0-27.1 -> 21.4-24.1 s, JVM CPU 81.7-94.8 -> 79.7-88.1 s, every pair
# quicker; the same classes compiled at a 20 times higher threshold instead compiled for
# 19.4-20.6 s but ran slower, JVM CPU no lower). The JVM says
# "1 compiler directives added" on its standard output, where the user reads ordeal's:
# `-DisplayVMOutput` keeps its own messages there quiet (its warnings and errors still go to
# standard error).
_JIT_DIRECTIVES = Path(__file__).with_name("jit_directives.json")
_THROUGHPUT = ("-XX:+UseParallelGC -XX:CompileThresholdScaling=3 -XX:InlineSmallCode=500 "
               "-XX:+UnlockDiagnosticVMOptions -XX:-DisplayVMOutput "
               f"-XX:CompilerDirectivesFile={_JIT_DIRECTIVES}")
# And twice the heap: the parallel collector gives the young generation a third of it, so a
# large check collects half as often and promotes less (10M ops, Parquet copy kept, first
# check in a new JVM, 4 runs each alternating, /tmp A/B script: GC 8.1/6.9/6.9/7.4 ->
# 5.7/5.8/5.1/7.0 s, JVM CPU 172 -> 163 s mean, wall 95.5 -> 90.8 s mean at a reference
# loop of 0.34-0.55 s). A 10M check's JVM then peaks at about 6 GiB of RSS, against 3.4
# before; the JVM commits heap only as its collections ask for more.
_THROUGHPUT_HEAP = "6g"


def small_input(ops: int) -> bool:
    return ops < SMALL_INPUT_OPS


def small_file(history: Path) -> bool:
    """Whether the history file at `history` is small by its size, known before it is read."""
    return history.stat().st_size < SMALL_INPUT_BYTES


class SessionOnDemand:
    """One Spark Connect session for several checks: had on first use (saying so to
    `announce`), then the same one, so that a small history no checker needs to judge
    starts no JVM (a large one starts it early, `start_early`, as its check all but surely
    needs it). `close()` ends it, and lets the server go (see below).

    Where the session's server is: `remote` (sc://HOST:PORT), a server someone else runs;
    else, when `idle` > 0, the shared local server of `master` (checkers.runtime.connect: warm from
    the last check, held for this one until close(), stopped by itself after `idle` seconds
    without a check); else a server of this session's own, stopped by close().

    `small` says whether every history it will serve is small (a server of its own then
    compiles with C1 only); None leaves that to the first history that starts it. A shared
    server is set for every history, as a large one (C2: its code pays over many checks)."""

    def __init__(self, master: str | None = None, announce: Callable[[str], None] | None = None, *,
                 small: bool | None = None, remote: str | None = None, idle: float = 0.0) -> None:
        self.master, self.announce, self.small = master, announce or (lambda _: None), small
        self.remote, self.idle = remote, idle
        self.session: SparkSession | None = None
        self.failed: SparkUnavailable | None = None
        self.server: connect.Lease | connect.Private | None = None
        self._lock = threading.Lock()  # the early start (start_early) and a check ask at once

    def get(self, ops: int) -> SparkSession:
        """The session, started for a history of `ops` ops if there is none yet (a start that
        failed is not tried again: SparkUnavailable each time)."""
        with self._lock:
            if self.failed is not None:
                raise self.failed
            if self.session is None:
                try:
                    self.session = self._start(small_input(ops) if self.small is None else self.small)
                except SparkUnavailable as exc:
                    self.failed = exc
                    raise
            return self.session

    def _start(self, small: bool) -> SparkSession:
        master = self.master or LOCAL_MASTER
        if self.remote is not None:
            return connect_session(self.remote, f"the Spark Connect server {self.remote}")
        if self.idle > 0:
            self.server = connect.shared(master, session_settings(master), self.idle, self.announce)
        else:
            self.announce("starting Spark")
            self.server = connect.Private(master, session_settings(master, small_inputs=small))
        return connect_session(self.server.url, f"Spark (master {master})")

    def close(self) -> None:
        """End the session; a shared server is marked used now and let go, one of its own stopped."""
        with self._lock:
            if self.session is not None:
                with contextlib.suppress(Exception):
                    self.session.stop()
                self.session = None
            if isinstance(self.server, connect.Lease):
                self.server.release()
            elif self.server is not None:
                self.server.stop()
            self.server = None

    def start_early(self) -> threading.Thread:
        """Start the session for large histories now, in the background (the thread returned):
        a large history's convert (Python and Arrow, checkers.ingest.history) then hides the JVM's
        start, which get() waits for. A start that fails is told by get()."""
        thread = threading.Thread(target=self._start_for_large, name="ordeal-spark-start", daemon=True)
        thread.start()
        return thread

    def _start_for_large(self) -> None:
        try:
            self.get(SMALL_INPUT_OPS)
        except SparkUnavailable:
            pass  # kept in self.failed: the check's get() raises it


def warm_shared(idle: float, master: str | None = None) -> None:
    """Start the shared server of `master` now (or find it running) and let it go at once, so
    that the next check finds its JVM up: `ordeal run` calls this while its cluster boots. A
    server that cannot be had is left for that check to meet, and to say why."""
    master = master or LOCAL_MASTER
    with contextlib.suppress(Exception):
        connect.shared(master, session_settings(master), idle, lambda _: None).release()


def connect_session(url: str, what: str) -> SparkSession:
    """A new session of the Spark Connect server at `url` (`what` names it in the one line of a
    SparkUnavailable when it cannot be reached)."""
    # PySpark's client retries a server that does not answer for some ten minutes: one that
    # refuses the connection is told at once.
    where = urlsplit(url.replace("sc://", "http://", 1))
    try:
        socket.create_connection((where.hostname, where.port or 15002), timeout=30).close()
    except (OSError, ValueError) as exc:
        raise SparkUnavailable(f"{what} could not be reached: {exc.strerror or exc}") from None
    try:
        # A new session each time (the builder marks this process as a Connect client's).
        session = SparkSession.builder.remote(url).create()
        session.version  # noqa: B018 - the first call: a server that cannot be reached says so here
    except Exception as exc:  # noqa: BLE001 - gRPC's and Spark's errors alike: one line for the user
        raise SparkUnavailable(f"{what} could not be reached: {_first_line(exc)}") from None
    return session


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else exc.__class__.__name__


def local_cores(master: str) -> int:
    """The worker threads of a local master: local, local[N], local[*], local[N,F]."""
    inside = master[len("local["):-1].split(",")[0] if master.startswith("local[") else "1"
    return int(inside) if inside.isdigit() else os.cpu_count() or 1  # "*" (Spark rejects the rest)


def small_jvm_options() -> str:
    """The driver JVM's options in a session for small histories (the class archive's aside)."""
    return f"{_DEFAULTS['spark.driver.extraJavaOptions']} {_C1_ONLY}"


def large_jvm_options() -> str:
    """The driver JVM's options in a session for large histories (the class archive's aside; its
    heap is `spark.driver.memory`, which Spark gives it apart)."""
    return f"{_DEFAULTS['spark.driver.extraJavaOptions']} {_THROUGHPUT}"


def jvm_options(small_inputs: bool) -> str:
    """The driver JVM's options for small histories or for large ones: the key its class archive
    is kept under (checkers.runtime.class_archive)."""
    return small_jvm_options() if small_inputs else large_jvm_options()


def _large_archive_options() -> str:
    """The large JVM's own archive, profiles and all; until that is built, the small JVM's
    without its profiles: the archive built by the JVM for small histories maps into this one
    too (which classes a check loads does not depend on the compiler or the collector: a check
    server's first check of 3,000 ops, in a new process, 32.5/33.7 -> 27.2/22.3 s, /tmp A/B,
    alternating), but its profiles mislead this JVM's compiler (checkers.runtime.class_archive)."""
    own = class_archive_options(large_jvm_options())
    if own:
        return own
    small = class_archive_options(small_jvm_options())
    return f"{small} {NO_REPLAY}" if small else ""


def session_settings(master: str, *, small_inputs: bool = False, class_dump: Path | None = None) -> dict[str, str]:
    """The settings a new session for `master` starts with (see `spark_session`)."""
    settings = dict(_DEFAULTS)
    options = jvm_options(small_inputs)
    if class_dump:
        archive = f"-XX:AOTCacheOutput={class_dump} {QUIET_CDS}"
    else:
        archive = class_archive_options(options) if small_inputs else _large_archive_options()
    settings["spark.driver.extraJavaOptions"] = f"{options} {archive}".strip()
    if not small_inputs:
        settings["spark.driver.memory"] = _THROUGHPUT_HEAP
    if master.startswith("local"):
        settings.update(_LOCAL_ONLY)
        # Two tasks per core: fewer leaves a core idle behind a slow task, more only adds
        # per-task overhead (Spark's default of 200 is for clusters).
        partitions = str(2 * local_cores(master))
        settings.update({"spark.sql.shuffle.partitions": partitions, "spark.default.parallelism": partitions})
    return settings


def spark_session(master: str | None = None, *, small_inputs: bool = False,
                  class_dump: Path | None = None) -> tuple[SparkSession, connect.Private]:
    """A session of a new Connect server of this process's own for `master` (local[*] when
    None), and that server (stop() it when done). `small_inputs`: its JVM will check small
    histories only (C1 compiler only); else it is set for throughput. Either maps its classes
    of checkers.runtime.class_archive if they are built. `class_dump`: instead, the JVM writes the
    classes it loaded there as it exits (how those archives are built)."""
    master = master or LOCAL_MASTER
    server = connect.Private(master, session_settings(master, small_inputs=small_inputs, class_dump=class_dump))
    try:
        return connect_session(server.url, f"Spark (master {master})"), server
    except SparkUnavailable:
        server.stop()
        raise


def fit_to_input(spark: SparkSession, ops: int) -> None:
    """Set the session's SQL settings for a history of `ops` ops: those for small inputs (and
    for the smallest, interpreted expressions), or the session's own (kept in its conf the
    first time, "" where it had none)."""
    conf = spark.conf
    small = small_input(ops)
    for key, value, wanted in [*((k, v, small) for k, v in _SMALL_INPUT.items()),
                               *((k, v, ops < INTERPRETED_OPS) for k, v in _INTERPRETED.items())]:
        kept = f"ordeal.base.{key}"
        base = conf.get(kept, None)
        if base is None:
            base = conf.get(key, None) or ""
            conf.set(kept, base)
        if wanted:
            conf.set(key, value)
        elif base:
            conf.set(key, base)
        else:
            conf.unset(key)
