"""Recorder throughput: 16 threads run ops against the no-op client and record every invoke
and completion. Prints ops/s (an op = invoke + completion, two history lines) and the
share of the worker threads' CPU time spent inside Recorder.record (the rest is the
no-op client, op building and the loop; the flusher thread's writes are not in either).

    .venv/bin/python bench/recorder.py [--threads 16] [--seconds 5]
"""
from __future__ import annotations

import argparse
import tempfile
import threading
import time
from pathlib import Path

from harness.history import Recorder, read_history
from harness.noop import NoopClient
from harness.op import completion, invoke


def bench(threads: int, seconds: float, directory: Path) -> dict[str, float]:
    recorder = Recorder(directory / "history.jsonl")
    stop = threading.Event()
    ops = [0] * threads
    in_recorder = [0] * threads
    cpu = [0] * threads
    start_gate = threading.Barrier(threads + 1)

    def worker(t: int) -> None:
        client = NoopClient().open(None, t)
        # CPU time of this thread (not wall time): waiting for the GIL is nobody's share.
        record, clock = recorder.record, time.thread_time_ns
        n = spent = 0
        start_gate.wait()
        cpu0 = clock()
        while not stop.is_set():
            for v in range(100):
                a = clock()
                op = record(invoke(t, "write", v))
                b = clock()
                done = completion(op, client.invoke(op))
                c = clock()
                record(done)
                spent += (b - a) + (clock() - c)
                n += 1
        ops[t], in_recorder[t], cpu[t] = n, spent, clock() - cpu0

    pool = [threading.Thread(target=worker, args=(t,)) for t in range(threads)]
    for th in pool:
        th.start()
    start_gate.wait()
    began = time.perf_counter()
    time.sleep(seconds)
    stop.set()
    for th in pool:
        th.join()
    wall = time.perf_counter() - began
    recorder.close()
    total = sum(ops)
    lines = sum(1 for _ in read_history(recorder.path))
    assert lines == 2 * total, (lines, total)
    return {"ops_per_s": total / wall, "lines_per_s": 2 * total / wall,
            "recorder_share": sum(in_recorder) / max(1, sum(cpu)), "ops": total, "wall_s": wall}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        r = bench(args.threads, args.seconds, Path(tmp))
    print(f"threads={args.threads} ops={r['ops']} wall={r['wall_s']:.2f}s")
    print(f"ops/s (invoke+completion): {r['ops_per_s']:,.0f}")
    print(f"history lines/s:           {r['lines_per_s']:,.0f}")
    print(f"recorder share of worker CPU time: {r['recorder_share']:.0%}")


if __name__ == "__main__":
    main()
