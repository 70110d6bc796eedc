"""Recorder throughput: 16 threads run ops against the no-op client and record every invoke
and completion of a format-1 send, as the runner's workers do.

Prints ops/s (an op = invoke + completion, two history lines), ops per CPU-second of the
process, and the recorder's share of the process's CPU time. The recorder encodes and
writes in its own flusher thread, so each pass is timed until Recorder.close has written
the last line, and the recorder's share is all the process's CPU time except what the
workers spend outside Recorder.record (building ops, calling the client). The throughput
pass is uninstrumented; the share comes from a second pass that reads each thread's CPU
clock around every Recorder.record call (that clock costs a system call, so it is kept out
of the throughput figure).

    .venv/bin/python bench/recorder.py [--threads 16] [--seconds 5]
"""
from __future__ import annotations

import argparse
import os
import tempfile
import threading
import time
from pathlib import Path

from ground.op import completion, invoke
from ground.history_file import read_history
from harness.history import Recorder
from workloads.noop import NoopClient


def _throughput(recorder: Recorder, t: int, stop: threading.Event) -> tuple[int, int]:
    client = NoopClient().open(None, t)
    record = recorder.record
    n = 0
    while not stop.is_set():
        for v in range(100):
            op = record(invoke(t, "send", {"topic": "t0", "key": "k1", "value": v}))
            record(completion(op, client.invoke(op)))
        n += 100
    return n, 0


def _share(recorder: Recorder, t: int, stop: threading.Event) -> tuple[int, int]:
    client = NoopClient().open(None, t)
    record, clock = recorder.record, time.thread_time_ns  # CPU time: waiting for the GIL is nobody's
    n = spent = 0
    while not stop.is_set():
        for v in range(100):
            a = clock()
            op = record(invoke(t, "send", {"topic": "t0", "key": "k1", "value": v}))
            b = clock()
            done = completion(op, client.invoke(op))
            c = clock()
            record(done)
            spent += (b - a) + (clock() - c)
        n += 100
    return n, spent


def bench(body, threads: int, seconds: float, path: Path) -> dict[str, float]:
    recorder = Recorder(path)
    stop = threading.Event()
    gate = threading.Barrier(threads + 1)
    results: list[tuple[int, int, int]] = [(0, 0, 0)] * threads

    def worker(t: int) -> None:
        gate.wait()
        cpu0 = time.thread_time_ns()
        n, spent = body(recorder, t, stop)
        results[t] = (n, spent, time.thread_time_ns() - cpu0)

    pool = [threading.Thread(target=worker, args=(t,)) for t in range(threads)]
    for th in pool:
        th.start()
    gate.wait()
    began, cpu_began = time.perf_counter(), time.process_time()
    time.sleep(seconds)
    stop.set()
    for th in pool:
        th.join()
    recorder.close()  # what the flusher has not written yet is part of the cost
    wall, cpu = time.perf_counter() - began, time.process_time() - cpu_began
    total = sum(r[0] for r in results)
    lines = sum(1 for _ in read_history(path))
    assert lines == 2 * total, (lines, total)
    return {"ops": total, "wall": wall, "cpu": cpu, "ops_per_s": total / wall, "ops_per_cpu_s": total / cpu,
            "share": 1 - sum(r[2] - r[1] for r in results) / 1e9 / cpu}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        r = bench(_throughput, args.threads, args.seconds, Path(tmp) / "throughput.jsonl")
        s = bench(_share, args.threads, min(args.seconds, 2.0), Path(tmp) / "share.jsonl")
    print(f"threads={args.threads} ops={r['ops']} wall={r['wall']:.2f}s process CPU={r['cpu']:.2f}s "
          f"load average={os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"ops/s (invoke+completion):  {r['ops_per_s']:,.0f}")
    print(f"history lines/s:            {2 * r['ops_per_s']:,.0f}")
    # With the GIL the process uses about one core at most: per CPU-second is what a core of
    # its own would give; the wall-clock figure also depends on what else the machine runs.
    print(f"ops per CPU-second:         {r['ops_per_cpu_s']:,.0f}")
    print(f"recorder share of process CPU time: {s['share']:.0%}")


if __name__ == "__main__":
    main()
