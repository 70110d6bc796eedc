"""The Spark Connect servers `ordeal check` and `ordeal run` use (checkers.runtime.connect): a real
shared local server started by a first check, found warm by the next, held one check at a
time, stopped by its idle time or `ordeal clean`; and a server a user starts with
PySpark's own script, reached with --remote."""
from __future__ import annotations

import fcntl
import os
import select
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from checkers.check import check_run
from ground.history_file import HistoryError
from checkers.runtime import connect, java_runtime
from checkers.runtime.class_archive import ARCHIVE_PREFIX
from tests.histories import HistoryBuilder
from ground.cache import cache_dir
from cli.main import main

MASTER = "local[2]"
_TOP = Path(__file__).resolve().parents[2]


def _history(run: Path, *, lost: bool = False) -> Path:
    h = HistoryBuilder()
    h.send(0, "t0", 1, offset=0)
    h.send(0, "t0", 2, offset=1)
    h.final_read(9, "t0", 0, [(0, 1)] if lost else [(0, 1), (1, 2)])
    run.mkdir(parents=True, exist_ok=True)
    return h.write(run / "history.jsonl")


@pytest.fixture
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache of the test's own (with links to the user's class archives), so that no server of
    the user's answers; every server of it is stopped at the end."""
    cache = tmp_path / "cache"
    cache.mkdir()
    for archive in cache_dir().glob(f"{ARCHIVE_PREFIX}*.aot"):
        (cache / archive.name).symlink_to(archive)
    monkeypatch.setenv("ORDEAL_CACHE", str(cache))
    monkeypatch.delenv("ORDEAL_SPARK_REMOTE", raising=False)
    yield cache
    connect.stop_all()


def _ordeal_check(*args: str, idle: str = "120", env: dict[str, str] | None = None,
                  timeout: float = 600) -> subprocess.CompletedProcess:
    env = dict(env or os.environ, ORDEAL_CHECK_SERVER_IDLE=idle)
    return subprocess.run([sys.executable, "-m", "cli.main", "check", *args], capture_output=True, text=True,
                          env=env, cwd=_TOP, timeout=timeout)


def _gone(pid: int) -> bool:
    """The process has ended: no longer there, or a zombie (a JVM this test's own process
    started, check_run's, stays one until reaped)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def _cmdline(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")


def _lines_until(proc: subprocess.Popen, text: str, timeout: float) -> str:
    """`proc`'s standard error up to `text` (all of it, if it ends first or `timeout` passes),
    read past the pipe's buffered reader, which communicate() then reads the rest through."""
    said = b""
    deadline = time.monotonic() + timeout
    while text.encode() not in said and time.monotonic() < deadline:
        if not select.select([proc.stderr], [], [], max(0.0, deadline - time.monotonic()))[0]:
            break
        chunk = os.read(proc.stderr.fileno(), 65536)
        if not chunk:
            break
        said += chunk
    return said.decode()


def test_a_first_check_starts_the_shared_server_the_next_ones_find_it_warm_and_wait_their_turn(
        own_cache: Path, tmp_path: Path) -> None:
    """One server's life, told in order (each server start costs a JVM's): started by a first
    check, found warm by the next, held one check at a time, stopped by `ordeal clean`; then
    the check at the end of a run starts one of its own that stops when idle."""
    first = _ordeal_check("--spark-master", MASTER, str(_history(tmp_path / "a")), idle="120")
    assert (first.returncode, first.stdout.startswith("valid: true")) == (0, True), first.stderr
    assert "ordeal check: starting Spark" in first.stderr
    server = connect.running(MASTER)
    assert server is not None
    # The JVM is the one for large histories (checkers.runtime.session), as the driver's options say.
    jvm = _cmdline(server["jvm"])
    assert "-Xmx6g" in jvm and "-XX:+UseParallelGC" in jvm and "-XX:TieredStopAtLevel=1" not in jvm
    assert "org.apache.spark.sql.connect.service.SparkConnectServer" in jvm

    second = _ordeal_check("--spark-master", MASTER, str(_history(tmp_path / "b", lost=True)), idle="120")
    assert (second.returncode, second.stdout.startswith("valid: false")) == (1, True), second.stderr
    assert "starting Spark" not in second.stderr
    assert connect.running(MASTER)["jvm"] == server["jvm"]

    busy, _, _, _ = connect._paths(MASTER)
    with busy.open("a") as held:  # a check in progress
        fcntl.flock(held, fcntl.LOCK_EX)
        waiting = subprocess.Popen([sys.executable, "-m", "cli.main", "check", "--spark-master", MASTER,
                                    str(_history(tmp_path / "c"))], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True, env=dict(os.environ, ORDEAL_CHECK_SERVER_IDLE="120"), cwd=_TOP)
        # Until it says it waits (then it blocks on the lock held here), not a fixed time.
        said = _lines_until(waiting, "waiting for another check to end", timeout=300)
        time.sleep(2)
        assert waiting.poll() is None, said  # still waiting while the check before it holds the server
    out, err = waiting.communicate(timeout=600)
    err = said + err
    assert (waiting.returncode, out.startswith("valid: true")) == (0, True), err
    assert "waiting for another check to end" in err
    assert connect.running(MASTER)["jvm"] == server["jvm"]

    cleaned = subprocess.run([sys.executable, "-c", "from checkers.runtime.connect import stop_all; print(stop_all())"],
                             capture_output=True, text=True, cwd=_TOP, timeout=120)
    assert cleaned.stdout.strip() == repr([MASTER])
    assert connect.running(MASTER) is None and _gone(server["jvm"])

    # The check at the end of a run, in the same way (the default master: a server of its own).
    assert check_run(tmp_path / "a", server_idle=10)["valid"] is True
    lines = _history(tmp_path / "bad").read_text().splitlines()
    bad = tmp_path / "bad" / "history.jsonl"
    bad.write_text("\n".join([lines[0], "{not json", *lines[1:]]) + "\n")
    with pytest.raises(HistoryError, match="line 2"):
        check_run(bad, server_idle=10)
    default = connect.running("local[*]")
    assert default is not None

    deadline = time.monotonic() + 120
    while connect.running("local[*]") and time.monotonic() < deadline:
        time.sleep(1)
    assert connect.running("local[*]") is None and _gone(default["jvm"])


def test_bad_settings_of_the_servers_are_refused_in_one_line(tmp_path: Path) -> None:
    history = str(_history(tmp_path / "a"))
    for args, idle, said in (
            ([history], "soon", "ORDEAL_CHECK_SERVER_IDLE='soon': not a number of seconds (0: no shared check server)"),
            (["--remote", "http://localhost:15002", history], "120", "not an address (sc://HOST:PORT)"),
            (["--remote", "sc://localhost:15002", "--spark-master", MASTER, history], "120", "exclude each other")):
        done = _ordeal_check(*args, idle=idle)
        assert (done.returncode, done.stderr.count("\n")) == (2, 1), done.stderr
        assert said in done.stderr


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_ordeal_check_remote_reaches_a_server_started_by_pysparks_own_script(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """As a user with a Spark cluster would: its Connect server started by PySpark's
    sbin/start-connect-server.sh, and `ordeal check --remote sc://localhost:PORT` (the
    command's main() in this process: what is tested is the server it reaches, and the
    tests above start `ordeal check` processes already)."""
    port = _free_port()
    sbin = connect.spark_home() / "sbin"
    env = dict(os.environ, JAVA_HOME=str(java_runtime.java_home(cache_dir())), SPARK_PID_DIR=str(tmp_path),
               SPARK_LOG_DIR=str(tmp_path / "logs"), SPARK_IDENT_STRING="ordeal-test")

    def ordeal_check(*args: str) -> tuple[int, str, str]:
        capsys.readouterr()
        code = main(["check", *args])
        out, err = capsys.readouterr()
        return code, out, err

    code, _, err = ordeal_check("--remote", f"sc://localhost:{port}", str(_history(tmp_path / "a")))
    assert code == 2 and "could not be reached" in err
    subprocess.run([str(sbin / "start-connect-server.sh"), "--master", "local[1]",
                    "--conf", f"spark.connect.grpc.binding.port={port}", "--conf", "spark.ui.enabled=false"],
                   env=env, check=True, capture_output=True, timeout=120)
    try:
        deadline = time.monotonic() + 180
        while not connect._listening(port) and time.monotonic() < deadline:
            time.sleep(0.5)
        code, out, err = ordeal_check("--remote", f"sc://localhost:{port}", str(_history(tmp_path / "a")),
                                      str(_history(tmp_path / "b", lost=True)))
        assert code == 1, err
        assert "starting Spark" not in err
        assert [line.split()[:2] for line in out.splitlines()[:2]] == [["valid:", "true"], ["valid:", "false"]]
        monkeypatch.setenv("ORDEAL_SPARK_REMOTE", f"sc://localhost:{port}")
        code, _, err = ordeal_check(str(_history(tmp_path / "c")))
        assert code == 0, err
        assert (tmp_path / "c" / "results.json").is_file()
    finally:
        subprocess.run([str(sbin / "stop-connect-server.sh")], env=env, capture_output=True, timeout=120)
