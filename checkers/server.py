"""The check server: one long-lived process that keeps a Spark session, and the code its
JVM has compiled, for the `ordeal check`s that follow the first.

Why: on this project's 2-core machine a check in a new JVM pays Spark's start and the
JIT's warm-up of Spark, Janino and Parquet on every run: some 10 s for a history of 3,000
ops, and some 70 of a 10M-op check's 160 JVM CPU seconds (bench/checkers.py). A JVM that
has checked once does neither again. The server is that JVM's Python side: `ordeal check`
(checkers.cli) sends it its arguments over a Unix socket and prints what it answers, so the
user sees the same lines and exit code as from a check in its own process.

One server per code and Spark master, found by a key made of them (`server_key`): a
change to the checkers' or the reports' code, or another Python, gets a new server, and
the first check that starts one tells the servers of other code to stop. Its JVM is the
one checkers.session starts for large histories (C2 and the parallel collector) for
every history: a check in a new process of its own is best served by C1 alone when it is
small, but a server lives for many checks, and C2's code pays over them (a 3,000-op
check in a warm server, the third to seventh: 6.3-8.6 s against 9.4-10.6 s with C1
alone, on a day the reference loop took 0.41-0.56 s).

Each server has a lock in `servers_dir()`, held while it lives (how a start knows that
files were left by a crash), a log beside it (the JVM's own output goes there), and a
socket in `sockets_dir()`.

A server checks one request at a time (a second client waits its turn; one JVM runs one
check best) and ends by itself: after `idle` seconds without a request
(ORDEAL_CHECK_SERVER_IDLE, read at the edge by checkers.cli), after a check that left
its JVM dead or a start of Spark that failed, or when told to stop. A client that goes
away mid-check does not stop the check: its results.json is still written.
"""
from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import io
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Any, TextIO

from checkers.class_archive import cache_dir

DEFAULT_IDLE = 300.0
# How long a client waits for a new server's socket (it binds before Spark starts).
START_TIMEOUT = 60.0
_REQUEST_TIMEOUT = 30.0
_LOG_KEPT = 86400.0


class ServerUnavailable(RuntimeError):
    """No server could be reached or started; str() is one line."""


def servers_dir() -> Path:
    """Where servers keep their sockets, locks and logs (private to this user)."""
    path = cache_dir() / "check-servers"
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path


def code_key() -> str:
    """A hash of what a server runs: the checkers' and reports' files, this Python and PySpark."""
    import checkers
    import reports

    digest = hashlib.sha256(f"{sys.prefix}\0{sys.version}\0{metadata.version('pyspark')}".encode())
    for package in (checkers, reports):
        root = Path(package.__file__).parent
        for path in sorted(root.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(f"\0{path.relative_to(root.parent)}\0".encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def server_key(master: str | None) -> str:
    """`<code>-<master and cache>`: the code part names what a new start prunes (servers of
    other code). The cache is in it as the sockets of all caches share one directory."""
    where = f"{master or ''}\0{servers_dir()}"
    return f"{code_key()}-{hashlib.sha256(where.encode()).hexdigest()[:8]}"


def sockets_dir() -> Path:
    """Where the servers' sockets are: a short path of this user's own (a socket's path has at
    most 107 bytes, which a cache deep in a tree can exceed)."""
    path = Path(os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()) / f"ordeal-{os.getuid()}"
    path.mkdir(mode=0o700, exist_ok=True)
    mode = path.lstat()
    if mode.st_uid != os.getuid() or mode.st_mode & 0o077 or not path.is_dir() or path.is_symlink():
        raise ServerUnavailable(f"{path}: not a private directory of this user's (mode {mode.st_mode:o})")
    return path


def _paths(key: str) -> tuple[Path, Path, Path]:
    """A server's socket, lock and log."""
    base = servers_dir() / key
    return sockets_dir() / f"{key}.sock", base.with_suffix(".lock"), base.with_suffix(".log")


def _held(lock: Path) -> bool:
    """Whether a live server holds `lock` (a crashed one's lock is free)."""
    try:
        with lock.open("a") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            fcntl.flock(handle, fcntl.LOCK_UN)
            return False
    except FileNotFoundError:
        return False


# -- the client side ------------------------------------------------------------------------

def check(request: dict[str, Any], master: str | None, idle: float,
          out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Have the server for `master` run `ordeal check` with `request` (the
    parsed arguments, paths absolute), starting it if there is none; print what it
    prints and return its exit code. Raises ServerUnavailable."""
    out, err = out or sys.stdout, err or sys.stderr
    key = server_key(master)
    sock_path, _, log = _paths(key)
    for _ in range(2):  # a server ending by its idle time can drop a request it never took
        conn = _connect(sock_path)
        if conn is None:
            _prune(key)
            conn = _start(key, master, idle)
        taken = False
        with conn:
            try:
                conn.sendall(json.dumps({"check": request}).encode() + b"\n")
                for message in _messages(conn):
                    if "taken" in message:
                        taken = True
                    elif "out" in message:
                        out.write(message["out"])
                        out.flush()
                    elif "err" in message:
                        err.write(message["err"])
                        err.flush()
                    elif "exit" in message:
                        return int(message["exit"])
            except OSError:
                pass  # told below
        if taken:
            raise ServerUnavailable(f"the check server ended without an answer (its log: {log})")
    raise ServerUnavailable(f"the check server did not take the request (its log: {log})")


def check_in_server(path: Path, *, out_dir: Path | None, idempotent: bool | None, idle: float) -> dict[str, Any]:
    """The results of checking the history at `path` in the server for the default master
    (checkers.check.check_run); its lines are not printed. Raises HistoryError with the
    check's own line for input it could not check, ServerUnavailable."""
    from checkers.check import RESULTS_FILE, results_dir
    from checkers.cli import EXIT_BAD_INPUT
    from checkers.history import HistoryError

    told = io.StringIO()
    request = {"paths": [str(path.resolve())], "out": str(out_dir.resolve()) if out_dir is not None else None,
               "idempotent": idempotent, "report": False, "spark_master": None}
    code = check(request, None, idle, out=io.StringIO(), err=told)
    if code == EXIT_BAD_INPUT:
        lines = told.getvalue().splitlines() or ["ordeal check: bad input"]
        raise HistoryError(lines[-1].removeprefix("ordeal check: "))
    return json.loads((results_dir(path, out_dir) / RESULTS_FILE).read_text())


def stop_all(reason: str = "told to stop") -> list[str]:
    """Tell every server of this user to stop; the keys of those told, and left-over files pruned."""
    told = []
    for lock in sorted(servers_dir().glob("*.lock")):
        if _stop(lock.stem, reason):
            told.append(lock.stem)
    _prune(None)
    return told


def _connect(sock_path: Path) -> socket.socket | None:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(str(sock_path))
    except (FileNotFoundError, ConnectionRefusedError):
        conn.close()
        return None
    return conn


def _messages(conn: socket.socket) -> Iterator[dict[str, Any]]:
    with conn.makefile("rb") as lines:
        for line in lines:
            yield json.loads(line)


def _stop(key: str, reason: str) -> bool:
    sock_path, lock, _ = _paths(key)
    conn = _connect(sock_path)
    if conn is None:
        return False
    with conn:
        conn.settimeout(5.0)
        try:
            conn.sendall(json.dumps({"stop": reason}).encode() + b"\n")
            # A busy server answers when its check is done; it stops then all the same.
            for _ in _messages(conn):
                break
        except OSError:
            pass
    return True


def _prune(keep: str | None) -> None:
    """Stop the servers of other code than `keep`'s, and remove the sockets and locks that
    ended servers left (a crashed one's log is kept a day: a failed check pointed to it)."""
    code = keep.split("-")[0] if keep else None
    for lock in sorted(servers_dir().glob("*.lock")):
        key = lock.stem
        if key == keep:
            continue
        sock_path, _, _ = _paths(key)
        if _held(lock):
            if code is not None and not key.startswith(f"{code}-"):
                _stop(key, f"a server for other code ({code}) started")
            continue
        sock_path.unlink(missing_ok=True)
        lock.unlink(missing_ok=True)
    for log in servers_dir().glob("*.log"):
        with contextlib.suppress(OSError):
            if not log.with_suffix(".lock").exists() and time.time() - log.stat().st_mtime > _LOG_KEPT:
                log.unlink()


def _start(key: str, master: str | None, idle: float) -> socket.socket:
    sock_path, lock, log = _paths(key)
    server = _spawn(key, master, idle, log)
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        conn = _connect(sock_path)
        if conn is not None:
            return conn
        if server.poll():
            raise ServerUnavailable(f"the check server exited at its start with {server.returncode} (its log: {log})")
        if server.returncode == 0 and not _held(lock):
            # It found the lock held: another start's server, or one ending by its idle
            # time that has let go of its socket and lock since. Start again.
            server = _spawn(key, master, idle, log)
        time.sleep(0.05)
    raise ServerUnavailable(f"the check server did not listen within {START_TIMEOUT:.0f} s (its log: {log})")


def _spawn(key: str, master: str | None, idle: float, log: Path) -> subprocess.Popen:
    with log.open("ab") as log_file:
        return subprocess.Popen(
            [sys.executable, "-m", "checkers.server", key, master or "", str(idle)],
            stdin=subprocess.DEVNULL, stdout=log_file, stderr=subprocess.STDOUT, start_new_session=True,
            cwd=Path(__file__).resolve().parent.parent)


# -- the server side ------------------------------------------------------------------------

class _Forward(io.TextIOBase):
    """A text stream whose writes go to the client as {name: text} lines; a client that is
    gone drops them (the check goes on)."""

    def __init__(self, conn: socket.socket, name: str, lock: threading.Lock) -> None:
        self.conn, self.name, self.lock = conn, name, lock

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        _send(self.conn, {self.name: text}, self.lock)
        return len(text)


def _send(conn: socket.socket, message: dict[str, Any], lock: threading.Lock) -> None:
    with lock:
        try:
            conn.sendall(json.dumps(message).encode() + b"\n")
        except OSError:
            pass


def serve(key: str, master: str | None, idle: float) -> int:
    """Serve checks until idle for `idle` seconds (see the module's docstring)."""
    from checkers.cli import _tell
    from checkers.session import SessionOnDemand

    sock_path, lock_path, _ = _paths(key)
    lock = lock_path.open("a")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return 0  # another start won the race: its server serves
    sock_path.unlink(missing_ok=True)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(sock_path))
    listener.listen(16)
    listener.settimeout(idle)
    print(f"{time.strftime('%H:%M:%S')} serving {key}: master {master or 'default'}, idle {idle:g} s", flush=True)
    spark = SessionOnDemand(master, lambda line: _tell(f"ordeal check: {line}"), small=False)
    try:
        while True:
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                print(f"{time.strftime('%H:%M:%S')} idle for {idle:g} s: exiting", flush=True)
                break
            with conn:
                if not _serve_one(conn, spark):
                    break
    finally:
        # Socket and lock go first, so that a new server can start while this JVM stops.
        sock_path.unlink(missing_ok=True)
        listener.close()
        lock.close()
        if spark.session is not None:
            with contextlib.suppress(Exception):
                spark.session.stop()
    return 0


def _serve_one(conn: socket.socket, spark) -> bool:
    """Answer one request; whether to go on serving."""
    from checkers.cli import EXIT_BAD_INPUT, _tell, run_check

    lock = threading.Lock()
    conn.settimeout(_REQUEST_TIMEOUT)
    try:
        with conn.makefile("rb") as lines:
            request = json.loads(lines.readline() or b"{}")
    except (OSError, ValueError):
        return True
    conn.settimeout(None)
    if not isinstance(request, dict) or not ("stop" in request or isinstance(request.get("check"), dict)):
        return True  # not a client of this module's
    if "stop" in request:
        print(f"{time.strftime('%H:%M:%S')} stopping: {request['stop']}", flush=True)
        _send(conn, {"exit": 0}, lock)
        return False
    _send(conn, {"taken": True}, lock)
    args = argparse.Namespace(**request["check"])
    args.paths = [Path(p) for p in args.paths]
    args.out = Path(args.out) if args.out is not None else None
    print(f"{time.strftime('%H:%M:%S')} checking {len(args.paths)} path(s)", flush=True)
    started = time.monotonic()
    code, go_on = EXIT_BAD_INPUT, True
    with contextlib.redirect_stdout(_Forward(conn, "out", lock)), contextlib.redirect_stderr(_Forward(conn, "err", lock)):
        try:
            code = run_check(args, spark=spark)
        except Exception as exc:  # noqa: BLE001 - told to the client; a fresh server serves the next
            traceback.print_exc(file=sys.__stdout__)
            _tell(f"ordeal check: the check server failed: {exc.__class__.__name__}: "
                  f"{str(exc).splitlines()[0] if str(exc) else ''}")
            go_on = False
    go_on = go_on and spark.failed is None and _alive(spark)
    print(f"{time.strftime('%H:%M:%S')} exit {code} after {time.monotonic() - started:.1f} s", flush=True)
    _send(conn, {"exit": code}, lock)
    return go_on


def _alive(spark) -> bool:
    """Whether the session's JVM still answers (a check that killed it ends the server)."""
    if spark.session is None:
        return True
    try:
        return not spark.session.sparkContext._jsc.sc().isStopped()
    except Exception:  # noqa: BLE001 - py4j's errors when the JVM is gone
        return False


def main(argv: list[str] | None = None) -> int:
    key, master, idle = (argv if argv is not None else sys.argv[1:])
    return serve(key, master or None, float(idle))


if __name__ == "__main__":
    sys.exit(main())
