"""The check server (checkers.server) as `ordeal check` and `ordeal run` use it: a real
server process and its real JVM, in a cache of the test's own."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from checkers import server
from checkers.check import check_run
from checkers.history import HistoryError
from checkers.synthetic import HistoryBuilder
from harness.cli import main


@pytest.fixture
def servers(tmp_path, monkeypatch):
    """A cache of the test's own (so no other server answers), and every server in it stopped after."""
    monkeypatch.setenv("ORDEAL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("ORDEAL_CHECK_SERVER_IDLE", "120")
    yield server.servers_dir()
    server.stop_all()


def _history(path: Path, *, lost: bool = False) -> Path:
    h = HistoryBuilder()
    h.send(0, "t0", 1, offset=0)
    h.final_read(9, "t0", 0, [] if lost else [(0, 1)])
    path.mkdir(parents=True)
    return h.write(path / "history.jsonl")


def _gone(path: Path, within: float) -> bool:
    deadline = time.monotonic() + within
    while path.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    return not path.exists()


def test_checks_are_answered_by_one_server_that_ends_when_told(servers, tmp_path, capsys):
    assert main(["check", str(_history(tmp_path / "a"))]) == 0
    out = capsys.readouterr().out
    assert "valid: true" in out and str(tmp_path / "a" / "results.json") in out
    assert main(["check", str(_history(tmp_path / "b", lost=True))]) == 1
    assert json.loads((tmp_path / "b" / "results.json").read_text())["valid"] is False
    lines = _history(tmp_path / "c").read_text().splitlines()
    bad = tmp_path / "c" / "history.jsonl"
    bad.write_text("\n".join([lines[0], "{not json", *lines[1:]]) + "\n")
    assert main(["check", str(bad)]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith("ordeal check: ")
    # ordeal run's check at its end: results from the same server, bad input as HistoryError
    assert check_run(tmp_path / "a", server_idle=120)["valid"] is True
    with pytest.raises(HistoryError, match="line 2"):
        check_run(bad, server_idle=120)
    (log,) = servers.glob("*.log")
    text = log.read_text()
    assert (text.count(" serving "), text.count(" checking ")) == (1, 5), text
    (lock,) = servers.glob("*.lock")
    sock = server._paths(lock.stem)[0]
    assert server.stop_all() == [lock.stem]
    assert _gone(sock, 60)


def test_a_server_ends_by_itself_when_idle(servers):
    key = server.server_key(None)
    proc = subprocess.run([sys.executable, "-m", "checkers.server", key, "", "2"], capture_output=True, text=True,
                          timeout=60)
    assert (proc.returncode, "idle for 2 s: exiting" in proc.stdout) == (0, True), proc.stdout + proc.stderr
    assert not server._paths(key)[0].exists()


def test_a_start_stops_servers_of_other_code_and_removes_what_crashed_ones_left(servers):
    other = f"{'0' * 12}-{'1' * 8}"
    proc = subprocess.Popen([sys.executable, "-m", "checkers.server", other, "", "60"],
                            stdout=subprocess.PIPE, text=True)
    crashed = list(server._paths(f"{'2' * 12}-{'3' * 8}"))
    for path in crashed:
        path.write_text("")
    kept = crashed.pop()  # its log, kept a day (a failed check names it)
    old = server._paths(f"{'4' * 12}-{'5' * 8}")[2]
    old.write_text("")
    os.utime(old, (time.time() - 2 * 86400,) * 2)
    try:
        assert "serving" in proc.stdout.readline()  # bound, listening; no JVM until a request
        server._prune(server.server_key(None))
        assert proc.wait(timeout=30) == 0
        assert (any(path.exists() for path in crashed), kept.exists(), old.exists()) == (False, True, False)
    finally:
        proc.kill()


def test_a_second_start_of_the_same_server_leaves_the_first_serving(servers):
    key = server.server_key(None)
    first = subprocess.Popen([sys.executable, "-m", "checkers.server", key, "", "60"], stdout=subprocess.PIPE, text=True)
    try:
        assert "serving" in first.stdout.readline()
        second = subprocess.run([sys.executable, "-m", "checkers.server", key, "", "60"], timeout=60)
        assert (second.returncode, first.poll()) == (0, None)
        for junk in (b"not json\n", b"[1, 2]\n", b'{"check": 5}\n'):  # answered by nothing, and survived
            with socket.socket(socket.AF_UNIX) as conn:
                conn.connect(str(server._paths(key)[0]))
                conn.sendall(junk)
                assert conn.recv(100) == b""
        assert server.stop_all() == [key] and first.wait(timeout=30) == 0
    finally:
        first.kill()


def test_idle_that_is_not_seconds_is_one_line_and_exit_2(servers, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ORDEAL_CHECK_SERVER_IDLE", "soon")
    assert main(["check", str(_history(tmp_path / "a"))]) == 2
    assert capsys.readouterr().err == ("ordeal check: ORDEAL_CHECK_SERVER_IDLE='soon': not a number of seconds "
                                       "(0: no check server)\n")
    assert not list(servers.glob("*.lock"))


def test_a_run_checked_without_a_server_says_why_in_one_note(servers, tmp_path, monkeypatch, spark):
    def unavailable(*args, **kwargs):
        raise server.ServerUnavailable("no server started within 60 s")

    monkeypatch.setattr(server, "check_in_server", unavailable)
    notes: list[str] = []
    results = check_run(_history(tmp_path / "a", lost=True), server_idle=120, note=notes.append)
    assert results["valid"] is False  # checked all the same, here
    assert notes == ["no check server (no server started within 60 s): checked in the run's own process"]
