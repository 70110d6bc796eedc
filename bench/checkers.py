"""Benchmark of the PySpark checkers on large synthetic histories.

Generates (once, with a seed, in a child process so its memory is not counted) a
valid Kafka-log plus ordering history per size, then times `check_history`: cold
(the history streamed into Parquet by Arrow in this Python process, then every checker
in Spark's JVM) and warm (the Parquet copy reused, as a re-check does), warm `--repeat`
times. Prints seconds, ops/s, the CPU seconds of the JVM and of this process, and the
load average (the machine may be shared: CPU seconds say what the check cost when wall
time is inflated by others), the verdict, this process's peak RSS and the JVM's. Of the
JVM's time, the seconds its JIT compilers spent compiling (summed over their threads) and
its collector's pauses are printed apart: a cold check is the JVM's first, and pays most
of the compilers' work.

A shared machine's speed drifts by more than the effects measured here: a fixed
reference loop is timed before and after, so that runs of different days compare.
`--fresh` also times the largest size as a user's first `ordeal check` meets it: a new
process, a new JVM, no Parquet copy. `--txn` also checks a transactional history (format 2,
kafka-txn's shape: checkers.synthetic.generate_txn_history) of each size, after the plain one.

Small histories, where Spark's fixed cost is all there is (`--small 3000`, `--batch 20`):
first a fresh `ordeal check` of one such history (a new process and JVM, no Parquet
copy), then `ordeal check` of `--batch` distinct ones in one call (one process, one
Spark), with the time to the first verdict and the mean time per verdict after it, each
with the CPU seconds of the whole process tree (the JVM included: this process becomes the
subreaper of the command's descendants and reaps them). `--small 0` skips them.

Usage: .venv/bin/python bench/checkers.py [--sizes 1000000,10000000] [--fresh] [--txn] [--small 3000] [--batch 20]
"""
from __future__ import annotations

import argparse
import ctypes
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Run as a script, this file's directory comes first on sys.path and its name would
# shadow the checkers package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from checkers.check import check_history
from checkers.session import spark_session
from checkers.synthetic import generate_history, generate_txn_history

GENERATORS = {"plain": generate_history, "txn": generate_txn_history}


def _generate(path: Path, n_ops: int, seed: int, kind: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, __file__, "--generate", str(n_ops), str(path), str(seed), kind], check=True)


def _jvm_pid(spark) -> int:
    return spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()


def _jvm_peak_mib(spark) -> float:
    for line in Path(f"/proc/{_jvm_pid(spark)}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _jvm_cpu_seconds(spark) -> float:
    """User + system CPU seconds of the JVM so far (/proc/PID/stat fields 14 and 15)."""
    fields = Path(f"/proc/{_jvm_pid(spark)}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _jvm_overheads(spark) -> tuple[float, float]:
    """Seconds the JVM has spent so far in its JIT compilers and in garbage collection: a
    first check in a new JVM pays much of its CPU to the compilers."""
    management = spark.sparkContext._jvm.java.lang.management.ManagementFactory
    gc = sum(bean.getCollectionTime() for bean in management.getGarbageCollectorMXBeans())
    return management.getCompilationMXBean().getTotalCompilationTime() / 1000, gc / 1000


def _reference_seconds() -> float:
    """CPU seconds of a fixed pure-Python loop: this machine's speed at the moment."""
    started = time.process_time()
    total = 0
    for i in range(10_000_000):
        total += i
    return time.process_time() - started


def _fresh_check(run: Path, master: str) -> float:
    """Seconds of a first check of `run` in a new process (conversion included)."""
    shutil.rmtree(run / "history.parquet", ignore_errors=True)
    code = ("import sys; from checkers.check import check_history; from checkers.session import spark_session; "
            f"check_history({str(run)!r}, spark=spark_session({master!r}))")
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, stderr=subprocess.DEVNULL,
                   cwd=Path(__file__).resolve().parent.parent)
    return time.perf_counter() - started


_PR_SET_CHILD_SUBREAPER = 36


def _become_subreaper() -> None:
    """Orphaned descendants (the JVM of a checked command) are reparented to this process, so
    that reaping them counts their CPU seconds in RUSAGE_CHILDREN."""
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def _timed(command: list[str]) -> tuple[float, float, subprocess.CompletedProcess, list[float]]:
    """(wall seconds, CPU seconds of the whole process tree, the finished process, the
    seconds at which each line of its stdout arrived) of `command`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=err, text=True,
                                cwd=Path(__file__).resolve().parent.parent)
        lines, at = [], []
        for line in proc.stdout:  # ends with the command's stdout
            lines.append(line)
            at.append(time.perf_counter() - started)
        proc.wait()
        seconds = time.perf_counter() - started
        err.seek(0)
        done = subprocess.CompletedProcess(command, proc.returncode, "".join(lines), err.read())
    while True:  # the descendants it left behind (a JVM shutting down), bounded by their exit
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            break
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return seconds, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), done, at


def _small(args: argparse.Namespace) -> None:
    """Fresh check of one small history; `--batch` small histories in one call."""
    n = args.small
    runs = []
    for i in range(args.batch):
        run = args.workdir / f"small-n{n}-seed{args.seed + i}"
        if not (run / "history.jsonl").exists():
            _generate(run / "history.jsonl", n, args.seed + i, "plain")
        shutil.rmtree(run / "history.parquet", ignore_errors=True)
        (run / "results.json").unlink(missing_ok=True)
        runs.append(run)
    ordeal = [sys.executable, "-m", "harness.cli", "check", "--spark-master", args.spark_master]
    seconds, cpu, done, _ = _timed([*ordeal, str(runs[0])])
    print(f"{n:>11,} ops: {'fresh ordeal check':<24} {seconds:7.1f} s  CPU (all processes) {cpu:6.1f} s  "
          f"load {os.getloadavg()[0]:4.1f}  exit {done.returncode}", flush=True)
    for run in runs:
        shutil.rmtree(run / "history.parquet", ignore_errors=True)
    seconds, cpu, done, at = _timed([*ordeal, *map(str, runs)])
    verdicts = [t for t, line in zip(at, done.stdout.splitlines()) if line.startswith("valid:")]
    if len(verdicts) != len(runs):
        print(f"batch failed (exit {done.returncode}): {done.stderr.strip().splitlines()[-1:]}")
        return
    # A verdict line is printed as each history's check ends (in order; small ones are
    # checked side by side): after the first, the time per history is the mean gap.
    rest = (verdicts[-1] - verdicts[0]) / max(1, len(runs) - 1)
    print(f"{n:>11,} ops: {len(runs)} in one ordeal check: {seconds:6.1f} s  CPU (all processes) {cpu:6.1f} s  "
          f"first {verdicts[0]:5.1f} s, then {rest:5.2f} s each  load {os.getloadavg()[0]:4.1f}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000000,10000000", help="comma-separated op counts")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/ordeal-bench"))
    parser.add_argument("--spark-master", default="local[2]")
    parser.add_argument("--repeat", type=int, default=1, help="warm runs per size")
    parser.add_argument("--fresh", action="store_true", help="also time a first check of the largest size in a new process")
    parser.add_argument("--small", type=int, default=3000, help="ops of the small histories (0: none)")
    parser.add_argument("--batch", type=int, default=20, help="small histories checked in one call")
    parser.add_argument("--txn", action="store_true", help="also check a transactional history of each size")
    parser.add_argument("--generate", nargs=4, metavar=("N", "PATH", "SEED", "KIND"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.generate:
        n, path, seed, kind = args.generate
        GENERATORS[kind](Path(path), int(n), seed=int(seed))
        return 0

    print(f"reference loop: {_reference_seconds():.2f} CPU s (this machine's speed now; lower is faster)")
    _become_subreaper()
    if args.small:
        _small(args)
    if not args.sizes:
        return 0
    spark = spark_session(args.spark_master, app_name="ordeal-bench")
    print(f"master {args.spark_master}, seed {args.seed}")
    kinds = ["plain", "txn"] if args.txn else ["plain"]
    for n, kind in ((int(s), k) for s in args.sizes.split(",") for k in kinds):
        run = args.workdir / (f"n{n}-seed{args.seed}" + ("" if kind == "plain" else f"-{kind}"))
        history = run / "history.jsonl"
        if not history.exists():
            started = time.perf_counter()
            _generate(history, n, args.seed, kind)
            print(f"{n:>11,} ops ({kind}): generated {history.stat().st_size / 2**20:,.0f} MiB "
                  f"in {time.perf_counter() - started:.1f} s")
        shutil.rmtree(run / "history.parquet", ignore_errors=True)
        for label in ["cold (convert + check)"] + ["warm (Parquet reused)"] * args.repeat:
            started, cpu, own = time.perf_counter(), _jvm_cpu_seconds(spark), time.process_time()
            jit, gc = _jvm_overheads(spark)
            results = check_history(run, spark=spark)
            seconds, cpu, own = (time.perf_counter() - started, _jvm_cpu_seconds(spark) - cpu,
                                 time.process_time() - own)
            jit, gc = (after - before for after, before in zip(_jvm_overheads(spark), (jit, gc)))
            ops = results["stats"]["ops"]
            print(f"{ops:>11,} ops {kind:>5}: {label:<24} {seconds:7.1f} s  {ops / seconds:>10,.0f} ops/s  "
                  f"CPU JVM {cpu:6.1f} s, Python {own:5.1f} s; JVM compiling {jit:4.1f} s, in GC {gc:4.1f} s  load {os.getloadavg()[0]:4.1f}  valid={results['valid']}  "
                  f"anomalies={ {k: v['count'] for k, v in results['anomalies'].items()} }", flush=True)
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS: Python driver {peak_mib:,.0f} MiB, JVM {_jvm_peak_mib(spark):,.0f} MiB")
    if args.fresh:
        spark.stop()
        seconds = _fresh_check(run, args.spark_master)
        print(f"{ops:>11,} ops: {'first check, new process':<24} {seconds:7.1f} s  {ops / seconds:>10,.0f} ops/s")
    print(f"reference loop: {_reference_seconds():.2f} CPU s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
