"""The session's small-machine settings."""
from __future__ import annotations

import subprocess
import threading
from pathlib import Path

import pytest

from checkers.runtime import java_runtime, session
from checkers.runtime.session import SessionOnDemand, SparkUnavailable, local_cores, session_settings


def test_local_masters_are_read_for_their_worker_threads():
    assert [local_cores(m) for m in ("local", "local[3]", "local[4,2]")] == [1, 3, 4]


def test_a_server_for_small_histories_runs_a_jvm_with_c1_only_and_half_the_heap_of_one_for_large_ones(_server):
    """What the settings say reaches the JVM Spark's launcher starts (the tests' server is one for
    small histories; tests/checkers/test_connect.py reads the shared one's, for large ones)."""
    server, _ = _server
    jvm = Path(f"/proc/{server.pid}/cmdline").read_bytes().decode().split("\0")
    assert "-Xmx3g" in jvm and "-XX:TieredStopAtLevel=1" in jvm and "-XX:+UseParallelGC" not in jvm
    assert session_settings("local[2]")["spark.driver.memory"] == "6g"


def test_a_session_started_early_starts_in_the_background_for_large_histories_and_get_tells_its_failure(
        monkeypatch):
    starts = []

    def no_jvm(master, settings):
        starts.append((threading.current_thread().name, settings["spark.driver.memory"]))
        raise SparkUnavailable("Spark (master local[2]) did not start: no JVM here")

    monkeypatch.setattr(session.connect, "Private", no_jvm)
    on_demand = SessionOnDemand("local[2]")
    on_demand.start_early().join(timeout=30)
    with pytest.raises(SparkUnavailable, match="no JVM here"):
        on_demand.get(10)  # a small history's ops: the start tried for a large one is not tried again
    assert starts == [("ordeal-spark-start", "6g")]  # the JVM for large histories


def test_the_large_jvm_takes_its_jit_directives_and_says_nothing_on_standard_output():
    """A directives file the JVM cannot read stops every large check's JVM from starting; one
    it reads makes the JVM say so where the user reads ordeal's output, unless kept quiet."""
    options = session.large_jvm_options().split()
    quiet = subprocess.run([str(java_runtime.java()), *options, "-version"], capture_output=True, text=True,
                           timeout=60)
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stdout == ""
    loud = [o for o in options if o != "-XX:-DisplayVMOutput"]
    told = subprocess.run([str(java_runtime.java()), *loud, "-version"], capture_output=True, text=True, timeout=60)
    assert "1 compiler directives added" in told.stdout
