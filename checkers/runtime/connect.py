"""The Spark Connect server the checks run in: a Spark driver that PySpark's thin client
(`SparkSession.builder.remote("sc://host:port")`) sends its DataFrame plans to.

A check in a new JVM pays Spark's start and the JIT's warm-up on every run (some 10 s of a
3,000-op check on the 2-core machine); a JVM that has checked once does neither again. So
`ordeal check` and `ordeal run`'s check at its end use one long-lived Connect server per
Spark master (`shared`): the first check starts it (Spark's own launcher, `spark-submit
--class SparkConnectServer`, with the JVM settings and class archives of checkers.runtime.session
as the driver's options), the next ones find it warm, and it stops by itself after `idle`
seconds without a check (ORDEAL_CHECK_SERVER_IDLE, read at the edge by cli.check), or
at once when its JVM dies. The checks' Python runs in the command's own process; only
Spark's work runs in the server.

Each server has a watchdog (`python -m checkers.runtime.connect --serve`), the JVM's parent, that
keeps its state file (port, token, pids; private to this user: it holds the token the
server asks every client for) and stops the JVM when it has been idle long enough. A check
holds the master's `busy` lock while it runs, so that the server checks one command at a
time (one JVM runs one check best on a small machine; a second `ordeal check` waits its
turn) and the watchdog never stops a server a check is using. A server whose settings are
not those wanted (a class archive built since it started) is stopped and started anew.

`private` starts a server for one command alone (ORDEAL_CHECK_SERVER_IDLE=0, the tests,
the class archives' training runs), stopped when the command ends (and by the kernel if
the command dies first). A server a user runs (`--remote`) is not this module's.
"""
from __future__ import annotations

import atexit
import contextlib
import ctypes
import fcntl
import hashlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from checkers.runtime import java_runtime
from checkers.runtime.class_archive import SERVER_CLASS
from ground.cache import cache_dir

DEFAULT_IDLE = 300.0
START_TIMEOUT = 180.0
_STOP_TIMEOUT = 60.0
_PR_SET_PDEATHSIG = 1


class SparkUnavailable(RuntimeError):
    """No Spark could be had (a server that would not start, or could not be reached); str() is one line."""


def servers_dir() -> Path:
    """Where the local servers keep their state, locks and logs (private to this user)."""
    path = cache_dir() / "connect-servers"
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path


def _master_key(master: str) -> str:
    return hashlib.sha256(master.encode()).hexdigest()[:12]


def settings_key(settings: dict[str, str]) -> str:
    return hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:12]


def url(port: int, token: str) -> str:
    """The client's address of a local server (the token in the address, not in an environment
    variable every later client of the process would send)."""
    return f"sc://localhost:{port}/;token={token}"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _listening(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _die_with_parent() -> None:
    """In the child before exec: the kernel sends it SIGTERM when its parent dies."""
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def spark_home() -> Path:
    import pyspark

    return Path(os.environ.get("SPARK_HOME") or Path(pyspark.__file__).parent)


def server_environment(token: str | None = None) -> dict[str, str]:
    """The environment Spark's scripts start a server in: ordeal's Java (checkers.runtime.java_runtime)."""
    env = dict(os.environ, JAVA_HOME=str(java_runtime.java_home(cache_dir())))
    for name in ("SPARK_REMOTE", "SPARK_LOCAL_REMOTE", "SPARK_CONNECT_MODE_ENABLED", "SPARK_CONNECT_AUTHENTICATE_TOKEN"):
        env.pop(name, None)
    if token is not None:
        env["SPARK_CONNECT_AUTHENTICATE_TOKEN"] = token  # not on the command line, where `ps` shows it
    return env


def launch(master: str, settings: dict[str, str], log: Path, *, die_with_parent: bool) -> tuple[subprocess.Popen, int, str]:
    """Start a Connect server for `master` with `settings` (its JVM's output to `log`) and
    wait until it listens: (its process, which is the JVM, its port, its token). Raises
    SparkUnavailable."""
    token = secrets.token_hex(16)
    port = _free_port()
    command = [str(spark_home() / "bin" / "spark-submit"), "--master", master, "--name", "ordeal-check",
               "--class", SERVER_CLASS,
               "--conf", "spark.connect.grpc.binding.address=127.0.0.1",
               "--conf", f"spark.connect.grpc.binding.port={port}",
               "--conf", "spark.connect.grpc.port.maxRetries=0"]
    for key, value in settings.items():
        command += ["--conf", f"{key}={value}"]
    with log.open("ab") as out:
        proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                env=server_environment(token), start_new_session=True,
                                preexec_fn=_die_with_parent if die_with_parent else None)
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SparkUnavailable(f"Spark (master {master}) did not start: its Connect server exited with "
                                   f"{proc.returncode} (its log: {log})")
        if _listening(port):
            return proc, port, token
        time.sleep(0.1)
    stop_process(proc)
    raise SparkUnavailable(f"Spark (master {master}) did not start: its Connect server did not listen within "
                           f"{START_TIMEOUT:.0f} s (its log: {log})")


def stop_process(proc: subprocess.Popen, timeout: float = _STOP_TIMEOUT) -> None:
    """Stop a server's JVM: SIGTERM (Spark stops, the JVM exits and writes what it writes at its
    exit), SIGKILL if it has not ended in `timeout` seconds."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            proc.terminate()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# -- a server for one command ------------------------------------------------------------------

class Private:
    """A server for this process alone; `stop()` ends it, and so does this process's exit (the
    kernel's SIGTERM when this process dies, where the main thread started it: the kernel
    tells a child of its parent thread's end, and an early start's thread ends at once)."""

    def __init__(self, master: str, settings: dict[str, str]) -> None:
        self.log = servers_dir() / f"private-{os.getpid()}-{time.monotonic_ns()}.log"  # kept where it failed
        self.proc, self.port, token = launch(master, settings, self.log,
                                             die_with_parent=threading.current_thread() is threading.main_thread())
        self.url = url(self.port, token)
        self.pid = self.proc.pid
        atexit.register(self.stop)

    def stop(self, timeout: float = _STOP_TIMEOUT) -> None:
        stop_process(self.proc, timeout)
        atexit.unregister(self.stop)
        self.log.unlink(missing_ok=True)


# -- the shared server of a master ---------------------------------------------------------------

def _paths(master: str) -> tuple[Path, Path, Path, Path]:
    """A master's busy lock, state file, watchdog lock and log."""
    base = servers_dir() / _master_key(master)
    return (base.with_suffix(".busy"), base.with_suffix(".json"), base.with_suffix(".lock"),
            base.with_suffix(".log"))


def _read_state(path: Path) -> dict[str, Any] | None:
    try:
        state = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return state if isinstance(state, dict) else None


def _write_state(path: Path, state: dict[str, Any]) -> None:
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(state, f)
    os.replace(tmp, path)


def _alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


class Lease:
    """The use of a master's shared server by one command: its address, held (the busy lock)
    until `release()`, which marks the server used now (its idle time starts again)."""

    def __init__(self, busy, stamp: Path, url_: str, pid: int) -> None:
        self._busy, self._stamp, self.url, self.pid = busy, stamp, url_, pid

    def release(self) -> None:
        if self._busy is None:
            return
        with contextlib.suppress(OSError):
            os.utime(self._stamp)
        self._busy.close()
        self._busy = None


def shared(master: str, settings: dict[str, str], idle: float, announce: Callable[[str], None]) -> Lease:
    """The shared server of `master`, started with `settings` unless one with them runs, held
    for this command (see the module's docstring). Raises SparkUnavailable."""
    busy_path, state_path, _, log = _paths(master)
    busy = busy_path.open("a")
    try:
        try:
            fcntl.flock(busy, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            announce("waiting for another check to end (one at a time)")
            fcntl.flock(busy, fcntl.LOCK_EX)
        state = _read_state(state_path)
        wanted = settings_key(settings)
        if state is not None and _alive(state.get("watchdog", -1)) and _listening(state.get("port", 0)):
            if state.get("settings") == wanted:
                return Lease(busy, busy_path, url(state["port"], state["token"]), state["jvm"])
            _stop_watchdog(state["watchdog"])
        announce("starting Spark")
        state = _start_watchdog(master, settings, idle, state_path, log)
        return Lease(busy, busy_path, url(state["port"], state["token"]), state["jvm"])
    except BaseException:
        busy.close()
        raise


def _start_watchdog(master: str, settings: dict[str, str], idle: float, state_path: Path, log: Path) -> dict[str, Any]:
    request = json.dumps({"master": master, "settings": settings, "idle": idle})
    with log.open("ab") as out:
        watchdog = subprocess.Popen([sys.executable, "-m", "checkers.runtime.connect", "--serve", master],
                                    stdin=subprocess.PIPE, stdout=out, stderr=subprocess.STDOUT,
                                    start_new_session=True, cwd=Path(__file__).resolve().parent.parent)
    assert watchdog.stdin is not None
    watchdog.stdin.write(request.encode())
    watchdog.stdin.close()
    deadline = time.monotonic() + START_TIMEOUT + 10
    while time.monotonic() < deadline:
        state = _read_state(state_path)
        if state is not None and state.get("watchdog") == watchdog.pid:
            if "error" in state:
                raise SparkUnavailable(state["error"])
            return state
        if watchdog.poll() is not None:
            raise SparkUnavailable(f"Spark (master {master}) did not start: its Connect server's watchdog exited "
                                   f"with {watchdog.returncode} (its log: {log})")
        time.sleep(0.1)
    raise SparkUnavailable(f"Spark (master {master}) did not start within {START_TIMEOUT:.0f} s (its log: {log})")


def _stop_watchdog(pid: int, wait: float = _STOP_TIMEOUT + 10) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + wait
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)


def stop_all() -> list[str]:
    """Stop every shared server of this user's (in this cache); the masters of those stopped."""
    stopped = []
    for state_path in sorted(servers_dir().glob("*.json")):
        state = _read_state(state_path)
        if state is not None and "watchdog" in state and _alive(state["watchdog"]):
            _stop_watchdog(state["watchdog"])
            stopped.append(state.get("master", state_path.stem))
    return stopped


def running(master: str) -> dict[str, Any] | None:
    """The state of `master`'s shared server if it runs (port, jvm, watchdog pids)."""
    state = _read_state(_paths(master)[1])
    return state if state is not None and _alive(state.get("watchdog", -1)) else None


def serve(master: str, request: dict[str, Any]) -> int:
    """The watchdog (see the module's docstring): start the JVM, then stop it after `idle`
    seconds without a check, when told to (SIGTERM), or end when it dies."""
    busy_path, state_path, lock_path, log = _paths(master)
    lock = lock_path.open("a")
    fcntl.flock(lock, fcntl.LOCK_EX)  # a watchdog told to stop may still be stopping its JVM
    told: list[int] = []
    signal.signal(signal.SIGTERM, lambda signum, _: told.append(signum))
    idle = float(request["idle"])
    mine = os.getpid()
    say = lambda line: print(f"{time.strftime('%H:%M:%S')} {line}", flush=True)  # noqa: E731
    try:
        proc, port, token = launch(master, request["settings"], log, die_with_parent=True)
    except SparkUnavailable as exc:
        _write_state(state_path, {"watchdog": mine, "error": str(exc)})
        return 1
    _write_state(state_path, {"watchdog": mine, "jvm": proc.pid, "port": port, "token": token, "master": master,
                              "settings": settings_key(request["settings"]), "idle": idle})
    say(f"serving master {master} on port {port} (JVM {proc.pid}), idle {idle:g} s")
    busy = busy_path.open("a")
    started = time.time()
    why = "JVM exited"
    try:
        while proc.poll() is None:
            if told:
                why = "told to stop"
                break
            try:
                fcntl.flock(busy, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                time.sleep(0.5)
                continue
            try:
                last = max(started, busy_path.stat().st_mtime)
                if time.time() - last >= idle:
                    why = f"idle for {idle:g} s"
                    _forget(state_path, mine)  # under the busy lock: no check can find it meanwhile
                    break
            finally:
                fcntl.flock(busy, fcntl.LOCK_UN)
            time.sleep(0.5)
    finally:
        _forget(state_path, mine)
        say(f"stopping: {why}")
        stop_process(proc)
        say(f"JVM ended with {proc.returncode}")
    return 0


def _forget(state_path: Path, mine: int) -> None:
    state = _read_state(state_path)
    if state is not None and state.get("watchdog") == mine:
        state_path.unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> int:
    args = argv if argv is not None else sys.argv[1:]
    if len(args) == 2 and args[0] == "--serve":
        return serve(args[1], json.loads(sys.stdin.read()))
    print("usage: python -m checkers.runtime.connect --serve MASTER  (the request as JSON on stdin)", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
