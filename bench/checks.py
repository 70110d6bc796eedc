"""Benchmark of the PySpark checkers on large synthetic histories.

Generates (once, with a seed, in a child process so its memory is not counted) a
valid Kafka-log plus ordering history per size, then times `check_history` in a new
process per cold run (`--cold N`), each with its own JVM, as a user's first `ordeal check`
meets it: cold (the history streamed into Parquet by Arrow in that Python process while
the JVM starts beside it, then every checker in the JVM, which has compiled nothing yet;
the JVM's CPU seconds are those of its whole life), then warm (the Parquet copy reused,
as a re-check does) `--repeat` times, after the first cold run only. Prints seconds,
ops/s, the CPU seconds of the JVM and of the Python process (the machine may be shared:
CPU seconds say what the check cost when wall time is inflated by others), the load
average, the verdict, the peak RSS of both. Of the JVM's time, the seconds its JIT
compilers spent compiling (summed over their threads) and its collector's pauses are
printed apart: a cold check pays most of the compilers' work.

This machine's speed drifts, from day to day and within an hour, by up to 3x and more
with nothing else running (quiet-machine figures of one code differed that much). So
every figure comes with a same-run ratio: its seconds divided by those of a fixed
reference loop (pure Python, one core) timed just before and just after it (`ref`: the
mean of the two). Compare figures of different days by that ratio, not by seconds; a
ratio is approximate, as the loop is not the check (a 10M-op check slowed 2.1x where the
loop slowed 2.8x), but seconds alone mislead far more.

Small histories, where Spark's fixed cost is all there is (`--small 3000`, `--batch 20`):
a fresh `ordeal check` of one such history (a new command, no Parquet copy) three ways:
in its own process and JVM (ORDEAL_CHECK_SERVER_IDLE=0: a Connect server of the command's
own), as the first check of a new shared Spark Connect server (checkers.connect, which it
starts), and as a later one (another history,
the server warm: its 2nd to 5th check, as C2 has compiled more of what a check runs after
each); then `ordeal check` of `--batch` distinct ones in one call to the warm
server (checked as one batch), against one of them alone just before it: the time per
history after the first is the difference over `--batch` - 1. Each
figure comes with CPU seconds: of the whole process tree in its own process (the JVM
included: this process becomes the subreaper of the command's descendants and reaps
them), of the command and the server's tree (its JVM) with a server. The server is the
bench's own, in a cache of its own, stopped at the end. `--small 0` skips them.

`--compare CHECKOUT`: the same figures (the small ones, and each size's cold and warm in a
process of its own) of an older checkout, one with its own check server (checkers.server)
and py4j, run by its own code (PYTHONPATH) figure by figure beside this one's, then a table
of both with Connect's over the old one's: of seconds, and of their ratios to the reference
loop (`by ref`, which takes out the machine's drift between the two).

Large histories with a server (`--server`, after the cold runs): the first check of the
history (no Parquet copy) by `ordeal check` in that warm server, which has checked only
small histories (or none, with `--small 0`), then of a second copy of it (hard-linked,
no Parquet copy): the server has then checked a large history too.
`--txn` also checks a transactional history (format 2, kafka-txn's shape:
checkers.sample_histories.generate_txn_history) of each size, after the plain one.

Usage: .venv/bin/python bench/checks.py [--sizes 1000000,10000000] [--cold 3] [--repeat 1] [--txn] [--small 3000]
       [--batch 20] [--server] [--compare CHECKOUT]
"""
from __future__ import annotations

import argparse
import ctypes
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from checkers.sample_histories import generate_history, generate_txn_history
from reference import Speed  # bench/reference.py: the scripts run with bench/ first on their path

GENERATORS = {"plain": generate_history, "txn": generate_txn_history}
_TOP = Path(__file__).resolve().parent.parent


def _generate(path: Path, n_ops: int, seed: int, kind: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, __file__, "--generate", str(n_ops), str(path), str(seed), kind], check=True)


def _ratio(seconds: float, ref: float) -> str:
    return f"{seconds / ref:6.0f} ref"


# -- one cold run, in a process of its own (--measure) --

def _jvm_peak_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _jvm_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of the JVM so far (/proc/PID/stat fields 14 and 15)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _jvm_overheads(pid: int) -> tuple[float, float]:
    """Seconds the JVM has spent so far in its JIT compilers and in garbage collection: the
    Connect server's JVM is reached by no py4j, so these are not read (nan)."""
    return float("nan"), float("nan")


def _measure(run: Path, master: str, repeat: int) -> None:
    """Check `run` cold (its Parquet copy removed) as `ordeal check` does, the JVM started on
    demand (beside the convert, for a large history), then `repeat` times warm in that JVM;
    print one JSON line per figure. The cold figure's JVM seconds are the JVM's whole life."""
    from checkers.check import check_history
    from checkers.runtime.session import SessionOnDemand, small_file

    shutil.rmtree(run / "history.parquet", ignore_errors=True)
    on_demand = SessionOnDemand(master, small=small_file(run / "history.jsonl"))  # a Connect server of its own
    so_far = (0.0, 0.0, 0.0)  # the JVM's CPU, compiling and GC seconds (none before it starts)
    for label in ["cold"] + ["warm"] * repeat:
        started, own = time.perf_counter(), time.process_time()
        results = check_history(run, spark=on_demand)
        seconds, own = time.perf_counter() - started, time.process_time() - own
        pid = on_demand.server.pid
        now = (_jvm_cpu_seconds(pid), *_jvm_overheads(pid))
        (cpu, jit, gc), so_far = (a - b for a, b in zip(now, so_far)), now
        print(json.dumps({"label": label, "seconds": seconds, "jvm_cpu": cpu, "python_cpu": own, "jit": jit, "gc": gc,
                          "ops": results["stats"]["ops"], "valid": results["valid"],
                          "anomalies": {k: v["count"] for k, v in results["anomalies"].items()}}), flush=True)
    print(json.dumps({"label": "peak", "python_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                      "jvm_mib": _jvm_peak_mib(pid)}), flush=True)
    on_demand.close()


def _large(args: argparse.Namespace, speed: Speed, n: int, kind: str, server: Server) -> None:
    """`--cold` cold runs of the `n`-op history of `kind`, each in a new process, the first
    followed by `--repeat` warm ones; then the cold runs' median and range. With --compare,
    each run is made by each side in turn (its own bench script's --measure)."""
    run = args.workdir / (f"n{n}-seed{args.seed}" + ("" if kind == "plain" else f"-{kind}"))
    history = run / "history.jsonl"
    if not history.exists():
        started = time.perf_counter()
        _generate(history, n, args.seed, kind)
        print(f"{n:>11,} ops ({kind}): generated {history.stat().st_size / 2**20:,.0f} MiB "
              f"in {time.perf_counter() - started:.1f} s", flush=True)
    colds: list[tuple[float, float]] = []
    for i, side in ((i, side) for i in range(args.cold) for side in SIDES):
        before = speed.read()
        measure = [sys.executable, str(side.top / "bench" / side.script), "--measure", str(run),
                   "--spark-master", args.spark_master, "--repeat", str(args.repeat if i == 0 else 0)]
        done = subprocess.run(measure, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=side.top,
                              env=side.env(dict(os.environ)))
        figures = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        if done.returncode or not figures:
            said = (done.stderr.strip().splitlines() or ["(nothing on stderr)"])[-1]
            print(f"{side.name:>8} {n:>11,} ops {kind:>5}: cold run {i + 1} failed (exit {done.returncode}): {said}",
                  flush=True)
            continue
        ref = speed.around(before)
        for f in figures:
            if f["label"] == "peak":
                print(f"{side.name:>8} {'':>11} peak RSS: Python {f['python_mib']:,.0f} MiB, JVM {f['jvm_mib']:,.0f} MiB", flush=True)
            else:
                label = ("cold, own process" if f["label"] == "cold" else "warm (Parquet reused)")
                if f["label"] == "cold" and side is SIDES[0]:
                    colds.append((f["seconds"], f["seconds"] / ref))
                if f["label"] == "warm" and i == 0:
                    FIGURES.setdefault(f"{n:,} ops {kind}: warm (Parquet reused)", {})[side.name] = (f["seconds"], ref)
                print(f"{side.name:>8} {f['ops']:>11,} ops {kind:>5}: {label:<24} {f['seconds']:7.1f} s {_ratio(f['seconds'], ref)}  "
                      f"{f['ops'] / f['seconds']:>9,.0f} ops/s  CPU JVM {f['jvm_cpu']:6.1f} s, Python "
                      f"{f['python_cpu']:5.1f} s; JVM compiling {f['jit']:4.1f} s, in GC {f['gc']:4.1f} s  ref "
                      f"{ref:.2f} s  load {os.getloadavg()[0]:4.1f}  valid={f['valid']}  anomalies={f['anomalies']}",
                      flush=True)
    if len(colds) > 1:
        seconds, ratios = [s for s, _ in colds], [r for _, r in colds]
        print(f"{n:>11,} ops {kind:>5}: cold, {len(colds)} runs: median {statistics.median(seconds):.1f} s "
              f"(min {min(seconds):.1f}, max {max(seconds):.1f}), median {statistics.median(ratios):.0f} ref "
              f"(min {min(ratios):.0f}, max {max(ratios):.0f})", flush=True)
    if args.server:
        _large_in_server(run, n, kind, speed, server)


# -- small histories: the real `ordeal check` command --

_PR_SET_CHILD_SUBREAPER = 36


def _become_subreaper() -> None:
    """Orphaned descendants (the JVM of a checked command) are reparented to this process, so
    that reaping them counts their CPU seconds in RUSAGE_CHILDREN."""
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def _timed(command: list[str], env: dict[str, str] | None = None, cwd: Path = _TOP) -> tuple[
        float, float, subprocess.CompletedProcess, list[float]]:
    """(wall seconds, CPU seconds of the whole process tree, the finished process, the
    seconds at which each line of its stdout arrived) of `command`. A check server it starts
    is not reaped here (it outlives the command): its CPU is Server's to count. Descendants
    of earlier commands that end only now (an orphaned JVM shutting down) are reaped first,
    so that their CPU is not counted as this command's (a 10M check's first figure in a
    server once came out at 517 CPU-s in 136 s: the JVM of the cold run before it)."""
    _reap()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=err, text=True, cwd=cwd, env=env)
        lines, at = [], []
        for line in proc.stdout:  # ends with the command's stdout
            lines.append(line)
            at.append(time.perf_counter() - started)
        proc.wait()
        seconds = time.perf_counter() - started
        err.seek(0)
        done = subprocess.CompletedProcess(command, proc.returncode, "".join(lines), err.read())
    _reap()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return seconds, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), done, at


def _reap() -> None:
    """Reap this process's children that have ended, waiting for those still ending (a JVM
    shutting down after its command), but not for a check server."""
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG) == (0, 0):
                if not _ending_children():
                    break
                time.sleep(0.1)
        except ChildProcessError:
            break


@dataclass(frozen=True)
class Side:
    """A checkout whose `ordeal check` is timed: this one (Spark Connect), or with --compare an
    older one (its own check server, checkers.server): its directory, how its server's
    processes are known (`marker` in their command line) and how they are all stopped."""

    name: str
    top: Path
    marker: bytes
    stop_code: str
    script: str  # this bench in that checkout (bench/checkers.py before the rename)

    def env(self, env: dict[str, str]) -> dict[str, str]:
        return dict(env, PYTHONPATH=str(self.top))


CONNECT = Side("connect", _TOP, b"checkers.runtime.connect", "from checkers.runtime.connect import stop_all; stop_all()",
               Path(__file__).name)
SIDES: list[Side] = [CONNECT]
# Per figure (a label), per side: (seconds, ref) of the run (for --compare's table).
FIGURES: dict[str, dict[str, tuple[float, float]]] = {}


def old_side(top: Path) -> Side:
    return Side("old", top.resolve(), b"checkers.server",
                "from checkers.server import stop_all; stop_all('the bench ended')", "checkers.py")


class Server:
    """A side's check server: a cache of its own (with links to the class archives of the
    user's), so that no server of the user's answers and the bench's is new; CPU seconds of
    its process tree (its watchdog or server process and the JVM under it)."""

    def __init__(self, workdir: Path, master: str, side: Side = CONNECT) -> None:
        from checkers.runtime.class_archive import ARCHIVE_PREFIX
        from ground.cache import cache_dir

        self.side = side
        self.cache = workdir / f"server-cache-{side.name}"
        shutil.rmtree(self.cache, ignore_errors=True)
        self.cache.mkdir(parents=True)
        for archive in cache_dir().glob(f"{ARCHIVE_PREFIX}*.aot"):  # the user's class archives, as theirs would map
            (self.cache / archive.name).symlink_to(archive)
        self.env = side.env(dict(os.environ, ORDEAL_CACHE=str(self.cache), ORDEAL_CHECK_SERVER_IDLE="600"))
        self.master = master
        self.used = False  # whether it has checked anything yet (then warm)

    def command(self, *paths: Path) -> list[str]:
        return [sys.executable, "-m", "cli.main", "check", "--spark-master", self.master, *map(str, paths)]

    def cpu_seconds(self) -> float:
        """User + system CPU seconds so far of the server and its descendants (0 if none runs)."""
        stats: dict[int, tuple[int, float]] = {}  # pid: (parent pid, CPU seconds)
        servers = []
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            try:
                fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue  # ended meanwhile
            stats[int(proc.name)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"))
            if self._serves(proc):
                servers.append(int(proc.name))
        tree, total = set(servers), 0.0
        while servers:
            parent = servers.pop()
            total += stats[parent][1]
            for pid, (ppid, _) in stats.items():
                if ppid == parent and pid not in tree:
                    tree.add(pid)
                    servers.append(pid)
        return total

    def _serves(self, proc: Path) -> bool:
        try:
            return (self.side.marker in (proc / "cmdline").read_bytes()
                    and f"ORDEAL_CACHE={self.cache}".encode() in (proc / "environ").read_bytes().split(b"\0"))
        except OSError:
            return False

    def timed(self, *paths: Path) -> tuple[float, float, subprocess.CompletedProcess, list[float]]:
        """_timed of `ordeal check PATHS` with this server, CPU seconds of the server's tree added."""
        before = self.cpu_seconds()
        seconds, cpu, done, at = _timed(self.command(*paths), self.env, cwd=self.side.top)
        self.used = True
        return seconds, cpu + self.cpu_seconds() - before, done, at

    def stop(self) -> None:
        subprocess.run([sys.executable, "-c", self.side.stop_code], env=self.env, cwd=self.side.top, check=False)


def _ending_children() -> bool:
    """Whether a child of this process is other than a check server (a JVM shutting down after
    a check in its own process: reaped when it ends, its CPU counted)."""
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        for pid in (task / "children").read_text().split():
            try:
                if not any(side.marker in Path(f"/proc/{pid}/cmdline").read_bytes() for side in SIDES):
                    return True
            except OSError:
                continue
    return False


def _small_runs(args: argparse.Namespace, side: Side) -> list[Path]:
    """max(`--batch`, 4) + 2 small histories (generated once; each side has hard links of its
    own), without Parquet copies or results."""
    runs = []
    for i in range(max(args.batch, 4) + 2):
        source = args.workdir / f"small-n{args.small}-seed{args.seed + i}" / "history.jsonl"
        if not source.exists():
            _generate(source, args.small, args.seed + i, "plain")
        run = args.workdir / side.name / source.parent.name
        shutil.rmtree(run, ignore_errors=True)
        run.mkdir(parents=True)
        os.link(source, run / "history.jsonl")
        runs.append(run)
    return runs


def _small(args: argparse.Namespace, speed: Speed, servers: list[Server]) -> None:
    """A fresh check of one small history three ways; `--batch` small histories in one call;
    each figure by each side in turn (--compare), each side with its own server and copies."""
    n = args.small
    runs = {server.side.name: _small_runs(args, server.side) for server in servers}
    own = [sys.executable, "-m", "cli.main", "check", "--spark-master", args.spark_master]

    def in_own_process(server: Server) -> Callable[[Path], tuple]:
        return lambda r: _timed([*own, str(r)], dict(server.env, ORDEAL_CHECK_SERVER_IDLE="0"), cwd=server.side.top)

    # A server's code is warm after a few checks (C2 compiles what they run): its 2nd to 5th.
    figures = [("fresh, own process", 0, in_own_process), ("fresh, new server", 1, lambda server: server.timed),
               *((f"fresh, warm server, #{k}", k, lambda server: server.timed) for k in range(2, 6))]
    for label, k, how in figures:
        for server in servers:
            before = speed.read()
            seconds, cpu, done, _ = how(server)(runs[server.side.name][k])
            ref = speed.around(before)
            FIGURES.setdefault(f"{n:,} ops: {label}", {})[server.side.name] = (seconds, ref)
            print(f"{server.side.name:>8} {n:>11,} ops: {label:<24} {seconds:7.1f} s {_ratio(seconds, ref)}  "
                  f"CPU (all processes) {cpu:6.1f} s  ref {ref:.2f} s  load {os.getloadavg()[0]:4.1f}  "
                  f"exit {done.returncode}", flush=True)
    # The batch's figure: one call with every history, less one with one of them, over the
    # histories after the first (small ones are checked as one batch: no line comes per history
    # as its check ends, and none has a time of its own).
    for server in servers:
        batch = runs[server.side.name][2:2 + args.batch]
        if len(batch) < 2:
            return
        for run in batch:
            shutil.rmtree(run / "history.parquet", ignore_errors=True)
        before = speed.read()
        one, _, _, _ = server.timed(batch[0])
        shutil.rmtree(batch[0] / "history.parquet", ignore_errors=True)
        seconds, cpu, done, _ = server.timed(*batch)
        ref = speed.around(before)
        verdicts = [line for line in done.stdout.splitlines() if line.startswith("valid:")]
        if len(verdicts) != len(batch):
            print(f"{server.side.name:>8} batch failed (exit {done.returncode}): "
                  f"{done.stderr.strip().splitlines()[-1:]}")
            continue
        rest = (seconds - one) / max(1, len(batch) - 1)
        FIGURES.setdefault(f"{n:,} ops: {len(batch)} in one call (warm server)", {})[server.side.name] = (seconds, ref)
        FIGURES.setdefault(f"{n:,} ops: each after the first of {len(batch)} in one call", {})[server.side.name] = (
            rest, ref)
        print(f"{server.side.name:>8} {n:>11,} ops: {len(batch)} in one ordeal check (warm server): {seconds:6.1f} s  "
              f"CPU (all processes) {cpu:6.1f} s  one alone {one:5.1f} s {_ratio(one, ref)}, then {rest:5.2f} s each "
              f"{rest / ref:5.1f} ref  ref {ref:.2f} s  load {os.getloadavg()[0]:4.1f}", flush=True)


def _compared() -> None:
    """--compare's table: each figure of both sides, and Connect's over the old one's (of seconds,
    and of the ratios to the reference loop, which take out the machine's drift between them)."""
    print(f"\n{'figure':<52} {'old s':>7} {'connect s':>9} {'connect/old':>11} {'by ref':>7}", flush=True)
    for label, by_side in FIGURES.items():
        if "old" not in by_side or "connect" not in by_side:
            continue
        (old, old_ref), (new, new_ref) = by_side["old"], by_side["connect"]
        print(f"{label:<52} {old:7.2f} {new:9.2f} {new / old:11.2f} {(new / new_ref) / (old / old_ref):7.2f}",
              flush=True)


def _large_in_server(run: Path, n: int, kind: str, speed: Speed, server: Server) -> None:
    """The first check of the history of `run`, then of a hard-linked copy, in the server."""
    copy = run.with_name(run.name + "-copy")
    shutil.rmtree(copy, ignore_errors=True)
    copy.mkdir()
    os.link(run / "history.jsonl", copy / "history.jsonl")
    shutil.rmtree(run / "history.parquet", ignore_errors=True)
    try:
        first = "first, server warm" if server.used else "first, new server"
        for label, target in ((first, run), ("copy, server warm", copy)):
            before = speed.read()
            seconds, cpu, done, _ = server.timed(target)
            ref = speed.around(before)
            verdict = done.stdout.strip().splitlines()[-1:] if done.returncode in (0, 1, 3) else done.stderr[-300:]
            print(f"{n:>11,} ops {kind:>5}: {label:<24} {seconds:7.1f} s {_ratio(seconds, ref)}  "
                  f"{n / seconds:>9,.0f} ops/s  CPU (command and server) {cpu:6.1f} s  ref {ref:.2f} s  "
                  f"load {os.getloadavg()[0]:4.1f}  exit {done.returncode}  {verdict}", flush=True)
    finally:
        shutil.rmtree(copy, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000000,10000000", help="comma-separated op counts")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/ordeal-bench"))
    parser.add_argument("--spark-master", default="local[2]")
    parser.add_argument("--cold", type=int, default=1, help="cold runs per size, each in a new process and JVM")
    parser.add_argument("--repeat", type=int, default=1, help="warm runs after the first cold one, per size")
    parser.add_argument("--small", type=int, default=3000, help="ops of the small histories (0: none)")
    parser.add_argument("--batch", type=int, default=20, help="small histories checked in one call")
    parser.add_argument("--txn", action="store_true", help="also check a transactional history of each size")
    parser.add_argument("--server", action="store_true",
                        help="also check each large history (and a copy) in the bench's warm check server")
    parser.add_argument("--compare", type=Path, metavar="CHECKOUT",
                        help="also time the checkout at CHECKOUT (one before Spark Connect, with its own check "
                             "server) figure by figure, and print both side by side with their ratios")
    parser.add_argument("--generate", nargs=4, metavar=("N", "PATH", "SEED", "KIND"), help=argparse.SUPPRESS)
    parser.add_argument("--measure", type=Path, metavar="RUN", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.generate:
        n, path, seed, kind = args.generate
        GENERATORS[kind](Path(path), int(n), seed=int(seed))
        return 0
    if args.measure:
        _measure(args.measure, args.spark_master, args.repeat)
        return 0
    if args.cold < 1:
        parser.error("--cold: at least 1")

    speed = Speed()
    print(f"reference loop: {speed.read():.2f} CPU s (this machine's speed now; lower is faster); "
          f"master {args.spark_master}, seed {args.seed}", flush=True)
    _become_subreaper()
    if args.compare:
        SIDES.insert(0, old_side(args.compare))
    servers = [Server(args.workdir, args.spark_master, side) for side in SIDES]
    try:
        if args.small:
            _small(args, speed, servers)
        kinds = ["plain", "txn"] if args.txn else ["plain"]
        for n, kind in ((int(s), k) for s in filter(None, args.sizes.split(",")) for k in kinds):
            _large(args, speed, n, kind, servers[-1])
    finally:
        for server in servers:
            server.stop()
    if args.compare:
        _compared()
    print(f"reference loop: {speed.read():.2f} CPU s; over the run {min(speed.readings):.2f}-"
          f"{max(speed.readings):.2f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
