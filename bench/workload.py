"""How many acknowledged sends per second the kafka-log client sustains without faults.

N threads, each one process with its own opened client, send as fast as the cluster
acknowledges for `--seconds`; prints sends/s, p50/p99 latency and the outcome counts.
Boots fabric-recommended and tears it down, or attaches to a running cluster (--run).

    .venv/bin/python bench/workload.py [--threads 256] [--seconds 20] [--warmup 20] [--run RUN] [--linger-ms MS]
"""
from __future__ import annotations

import argparse
import random
import statistics
import threading
import time
from collections import Counter

from clusters.cluster import Cluster
from clusters.variant import load_variant
from ground.generator import Context
from workloads.kafka_log import kafka_log_workload


def bench(cluster: Cluster, threads: int, seconds: float, warmup: float, options: dict) -> None:
    workload = kafka_log_workload({"send_fraction": 1.0, **options}, cluster.variant)
    gen = workload.generator(random.Random(0))
    gen_lock = threading.Lock()  # the runner's generator lock: one generator thread at a time
    clients = [workload.client.open(cluster, p) for p in range(threads)]
    outcomes: Counter[str] = Counter()
    latencies: list[float] = []
    lock = threading.Lock()

    def worker(i: int, stop_at: float) -> None:
        mine: list[float] = []
        kinds: Counter[str] = Counter()
        while time.monotonic() < stop_at:
            with gen_lock:
                op = gen.op(Context(0, i))
            t = time.monotonic()
            answer = clients[i].invoke(op)
            mine.append(time.monotonic() - t)
            kinds[answer["type"] if answer["type"] == "ok" else f"{answer['type']}:{answer.get('error')}"] += 1
        with lock:
            latencies.extend(mine)
            outcomes.update(kinds)

    def run(span: float) -> float:
        started = time.monotonic()
        workers = [threading.Thread(target=worker, args=(i, started + span)) for i in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        return time.monotonic() - started

    try:
        # A freshly booted broker's JVM is still compiling its hot paths: not counted.
        run(warmup)
        outcomes.clear()
        latencies.clear()
        elapsed = run(seconds)
    finally:
        for c in clients:
            c.close()
    latencies.sort()
    ms = [x * 1000 for x in latencies]
    pct = (lambda q: ms[min(len(ms) - 1, int(q * len(ms)))]) if ms else (lambda q: float("nan"))
    print(f"kafka-log on {cluster.variant.name}: {threads} threads, {elapsed:.1f} s after {warmup:.0f} s of "
          f"warm-up, options {options or '{}'}")
    print(f"  acknowledged sends/s: {outcomes['ok'] / elapsed:,.0f}  ({outcomes['ok']} ok)")
    print(f"  latency ms: p50 {pct(0.5):.1f}  p99 {pct(0.99):.1f}  mean {statistics.fmean(ms) if ms else 0:.1f}")
    others = {k: v for k, v in outcomes.items() if k != "ok"}
    print(f"  other outcomes: {others or 'none'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=256)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--warmup", type=float, default=20.0, help="seconds of sends before the clock starts")
    parser.add_argument("--run", help="attach to this running cluster instead of booting one")
    parser.add_argument("--linger-ms", type=float, default=None, help="the producer's linger.ms option")
    args = parser.parse_args()
    options = {} if args.linger_ms is None else {"linger_ms": args.linger_ms}
    if args.run:
        cluster = Cluster.attach(run=args.run)
        if cluster is None:
            raise SystemExit(f"no running cluster {args.run}")
        bench(cluster, args.threads, args.seconds, args.warmup, options)
        return
    t = time.monotonic()
    with Cluster.up(load_variant("fabric-recommended")) as cluster:
        print(f"booted {cluster.run} in {time.monotonic() - t:.0f} s")
        bench(cluster, args.threads, args.seconds, args.warmup, options)


if __name__ == "__main__":
    main()
