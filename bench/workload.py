"""How many acknowledged sends per second the kafka-log client gets into a history, one op at
a time per thread (the old path) beside many in flight per thread (issue 39), in one run.

Both paths run the runner's own ClientWorker and Recorder, so a figure is of sends recorded
(invoke and completion lines), not merely produced. Beside them, in the same run: a plain
confluent-kafka producer loop with the workload's producer settings against the same topic
(what the cluster and librdkafka give without ordeal), the recorder alone (what it can
write), the machine's load, the brokers' CPU (`docker stats`) and this process's CPU, and a
fixed pure-Python reference loop, so that sends/s can be compared across days and machines
as a ratio to it. Boots fabric-recommended and tears it down, or attaches (--run).

    flock /tmp/ordeal-cluster.lock .venv/bin/python -P bench/workload.py [--threads 256]
        [--async-threads 2] [--in-flight 2048] [--seconds 15] [--warmup 10] [--run RUN] [--linger-ms MS]
        [--clients librdkafka,java,librdkafka@2.3.0]
"""
from __future__ import annotations

import argparse
import os
import random
import subprocess
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

from confluent_kafka import Producer

from clusters.cluster import Cluster
from clusters.health import QUIET
from ground.variant import ClientSettings, load_variant
from ground.generator import Context
from ground.op import completion, invoke
from ground.workload import Workload
from ground.history_file import read_history
from harness.history import Recorder
from harness.worker import ClientWorker
from workloads.kafka_log import kafka_log_workload

REFERENCE_LOOPS = 3_000_000


def reference_loop() -> float:
    """Millions of iterations per second of a fixed pure-Python loop (best of 3): the
    machine's speed for Python code at this moment, load included."""
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        acc = 0
        for i in range(REFERENCE_LOOPS):
            acc = (acc + i * i) % 1_000_003
        best = min(best, time.perf_counter() - t)
    return REFERENCE_LOOPS / best / 1e6


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def docker_cpu(run: str) -> dict[str, float]:
    """CPU % (of one core) per container of `run`, from one `docker stats` sample."""
    out = subprocess.run(["docker", "stats", "--no-stream", "--format", "{{.Name}} {{.CPUPerc}}"],
                         capture_output=True, text=True, timeout=60).stdout
    cpu = {}
    for line in out.splitlines():
        name, _, pct = line.partition(" ")
        if run in name:
            cpu[name.split(f"{run}-")[-1]] = float(pct.rstrip("%") or 0)
    return cpu


class Sampled:
    """docker stats taken once, in the middle of a pass (it takes about 2 s)."""

    def __init__(self, run: str, after: float):
        self.cpu: dict[str, float] = {}
        self._t = threading.Thread(target=self._take, args=(run, after), daemon=True)
        self._t.start()

    def _take(self, run: str, after: float) -> None:
        time.sleep(after)
        self.cpu = docker_cpu(run)

    def result(self) -> dict[str, float]:
        self._t.join()
        return self.cpu


def cpu_summary(cpu: dict[str, float]) -> str:
    brokers = sum(v for k, v in cpu.items() if k.startswith("kafka"))
    rest = sum(v for k, v in cpu.items() if not k.startswith("kafka"))
    return f"brokers {brokers:.0f}% ({', '.join(f'{v:.0f}' for k, v in sorted(cpu.items()) if k.startswith('kafka'))}), " \
           f"other containers {rest:.0f}% (of one core; the machine has {os.cpu_count()})"


def limit(client_cpu: float, docker: dict[str, float], load: float, in_flight: int, p50_ms: float) -> str:
    """What held a pass back, from its own figures: the client process (one core at most: the
    GIL), the containers' CPU, other work on the machine, or else the window (Little's law:
    open sends / latency)."""
    cores = os.cpu_count() or 1
    containers = sum(docker.values())
    if client_cpu >= 0.85:
        return f"the client: {client_cpu * 100:.0f}% of one core (one Python process, the GIL)"
    if containers + client_cpu * 100 >= 85 * cores:
        return f"CPU: containers {containers:.0f}% + client {client_cpu * 100:.0f}% of {cores * 100}%"
    if load >= 2 * cores:
        return (f"a shared machine: load {load:.0f} on {cores} cores; the client used {client_cpu * 100:.0f}% of a "
                f"core and the containers {containers:.0f}%, so the rest went to other work")
    return f"the window: {in_flight} open / p50 {p50_ms:.0f} ms = {in_flight / max(p50_ms, 1e-3) * 1000:,.0f}/s"


def recorded(history: Path, start_ns: int, end_ns: int) -> tuple[int, list[float], Counter[str]]:
    """Sends acknowledged (ok) whose completion was recorded within [start, end), their
    invoke-to-completion latencies in ms, and every completion's outcome in that window."""
    opened: dict[int, int] = {}
    lat: list[float] = []
    kinds: Counter[str] = Counter()
    for op in read_history(history):
        if op["f"] != "send":
            continue
        if op["type"] == "invoke":
            opened[op["process"]] = op["time"]
            continue
        began = opened.pop(op["process"], None)
        if not start_ns <= op["time"] < end_ns:
            continue
        kinds[op["type"] if op["type"] == "ok" else f"{op['type']}:{op.get('error')}"] += 1
        if op["type"] == "ok" and began is not None:
            lat.append((op["time"] - began) / 1e6)
    return kinds["ok"], sorted(lat), kinds


def drive(workload: Workload, cluster: Cluster, recorder: Recorder, threads: int, in_flight: int,
          seconds: float, op_timeout: float = 10.0) -> tuple[int, int, float]:
    """`threads` ClientWorkers as the runner drives them (one generator under a lock), for
    `seconds`; answers the recorder's clock at the start and end, and this process's CPU
    seconds per wall second meanwhile."""
    gen = workload.generator(random.Random(0))
    gen_lock = threading.Lock()
    stop = threading.Event()
    workers = [ClientWorker(i, recorder=recorder, workloads={workload.name: workload}, cluster=cluster,
                            concurrency=threads, op_timeout=op_timeout, stop=threading.Event(),
                            in_flight=in_flight, on_done=lambda kind: None) for i in range(threads)]

    def loop(worker: ClientWorker) -> None:
        try:
            while not stop.is_set():
                worker.wait_for_room()
                with gen_lock:
                    template = gen.op(Context(recorder.elapsed_ns(), worker.thread, 0, worker.process))
                worker.perform({**template, "workload": workload.name})
        finally:
            worker.close()  # waits for its open sends: each ends ok, fail or info

    cpu0, start = os.times(), recorder.elapsed_ns()
    ts = [threading.Thread(target=loop, args=(w,), daemon=True) for w in workers]
    for t in ts:
        t.start()
    time.sleep(seconds)
    end = recorder.elapsed_ns()
    stop.set()
    for t in ts:
        t.join()
    cpu1 = os.times()
    cpu = (cpu1.user + cpu1.system - cpu0.user - cpu0.system) / ((recorder.elapsed_ns() - start) / 1e9)
    return start, end, cpu


def plain_producer(cluster: Cluster, workload: Workload, seconds: float) -> tuple[float, float]:
    """A plain confluent-kafka loop, the kafka-log producer's settings, no history: acks/s
    and this process's CPU seconds per wall second."""
    client = workload.client
    config = client._producer_config(cluster)  # type: ignore[attr-defined]
    topic = client.state.topics.names[0]  # type: ignore[attr-defined]
    producer = Producer(config, logger=QUIET)
    acked = [0]

    def report(err, _msg) -> None:
        if err is None:
            acked[0] += 1

    cpu0, t = os.times(), time.monotonic()
    i = 0
    while time.monotonic() - t < seconds:
        try:
            producer.produce(topic, key=b"k0", value=str(i).encode(), partition=i % 3, on_delivery=report)
            i += 1
        except BufferError:
            producer.poll(0.01)
        producer.poll(0)
    producer.flush(30)
    elapsed, cpu1 = time.monotonic() - t, os.times()
    return acked[0] / elapsed, (cpu1.user + cpu1.system - cpu0.user - cpu0.system) / elapsed


def recorder_alone(path: Path, seconds: float = 2.0) -> float:
    """Send ops (invoke + completion) per second one thread records with nothing else to do."""
    with Recorder(path) as rec:
        n, t = 0, time.monotonic()
        while time.monotonic() - t < seconds:
            for v in range(200):
                op = rec.record(invoke(0, "send", {"topic": "t0", "key": "k1", "value": v}))
                rec.record(completion(op, {"type": "ok", "value": {**op["value"], "partition": 1, "offset": v}}))
            n += 200
        return n / (time.monotonic() - t)


def bench(cluster: Cluster, args: argparse.Namespace, options: dict) -> None:
    """Each client's passes on the same cluster: librdkafka's and the Java client's figures
    side by side (issue 40), as ratios to the same reference loop."""
    clients = [c.strip() for c in args.clients.split(",") if c.strip()]
    workloads = {impl: kafka_log_workload({"send_fraction": 1.0, **options},
                                          cluster.variant.model_copy(update={"client": ClientSettings.from_label(impl)}))
                 for impl in clients}
    workload = workloads[clients[0]]
    for each in workloads.values():
        each.setup(cluster)  # the topics and the client (the Java client's JVM, a librdkafka release's process)
    ref_before = reference_loop()
    print(f"kafka-log on {cluster.variant.name} (acks={cluster.variant.producer.acks}), options {options or '{}'}; "
          f"{args.seconds:.0f} s per pass after {args.warmup:.0f} s of warm-up")
    print(f"  load before: {loadavg()};  reference loop {ref_before:.2f} M iterations/s")
    with tempfile.TemporaryDirectory() as tmp:
        print(f"  recorder alone: {recorder_alone(Path(tmp) / 'alone.jsonl'):,.0f} send ops/s recorded (one thread)")
        with Recorder(Path(tmp) / "history.jsonl") as recorder:
            # A freshly booted broker's JVM is still compiling its hot paths: not counted.
            rows = []
            for impl, each in workloads.items():
                drive(each, cluster, recorder, args.async_threads, args.in_flight, args.warmup)
                passes = [("one at a time", args.threads, 1), ("in flight", args.async_threads, args.in_flight)]
                for label, threads, in_flight in passes:
                    sample = Sampled(cluster.run, args.seconds / 2)
                    load = loadavg()
                    start, end, cpu = drive(each, cluster, recorder, threads, in_flight, args.seconds)
                    rows.append((f"{label}, {impl}", threads, in_flight, start, end, cpu, load, sample.result()))
            sample = Sampled(cluster.run, min(args.seconds, 10) / 2)
            plain, plain_cpu = plain_producer(cluster, workload, min(args.seconds, 10))
            plain_docker = sample.result()
        ref_after = reference_loop()
        ref = (ref_before + ref_after) / 2
        print(f"  {'path':<25} {'threads':>7} {'in flight':>9} {'acked/s':>9} {'per Mref':>9} {'p50 ms':>8} "
              f"{'p99 ms':>8} {'client CPU':>10}  load at start")
        for label, threads, in_flight, start, end, cpu, load, docker in rows:
            ok, lat, kinds = recorded(recorder.path, start, end)
            rate = ok / ((end - start) / 1e9)
            pct = (lambda q: lat[min(len(lat) - 1, int(q * len(lat)))]) if lat else (lambda q: float("nan"))
            print(f"  {label:<25} {threads:>7} {in_flight:>9} {rate:>9,.0f} {rate / ref:>9,.0f} {pct(0.5):>8.1f} "
                  f"{pct(0.99):>8.1f} {cpu * 100:>9.0f}%  {load}")
            others = {k: v for k, v in kinds.items() if k != "ok"}
            print(f"      {cpu_summary(docker)}; other outcomes: {others or 'none'}")
            print(f"      limited by {limit(cpu, docker, float(load.split()[0]), threads * in_flight, pct(0.5))}")
        print(f"  plain producer loop (no history): {plain:,.0f} acked/s, {plain / ref:,.0f} per Mref, "
              f"client CPU {plain_cpu * 100:.0f}%; {cpu_summary(plain_docker)}")
    print(f"  load after: {loadavg()};  reference loop {ref_after:.2f} M iterations/s "
          f"(per Mref = acked/s divided by the mean, {ref:.2f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=256, help="threads of the one-at-a-time pass")
    parser.add_argument("--async-threads", type=int, default=2, help="threads of the in-flight pass")
    parser.add_argument("--in-flight", type=int, default=2048, help="sends each thread keeps open in the in-flight pass")
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--warmup", type=float, default=10.0, help="seconds of sends before the clock starts")
    parser.add_argument("--run", help="attach to this running cluster instead of booting one")
    parser.add_argument("--clients", default="librdkafka,java",
                        help="the Kafka clients to measure, comma-separated (librdkafka, java, or a release of "
                             "one: librdkafka@2.3.0)")
    parser.add_argument("--linger-ms", type=float, default=None, help="the producer's linger.ms option")
    args = parser.parse_args()
    if not args.clients.strip():
        parser.error("--clients: none given (librdkafka, java, librdkafka@2.3.0, ...)")
    for label in (c.strip() for c in args.clients.split(",") if c.strip()):
        try:
            ClientSettings.from_label(label)
        except ValueError as exc:
            parser.error(f"--clients: {exc}")
    options = {} if args.linger_ms is None else {"linger_ms": args.linger_ms}
    if args.run:
        cluster = Cluster.attach(run=args.run)
        if cluster is None:
            raise SystemExit(f"no running cluster {args.run}")
        bench(cluster, args, options)
        return
    t = time.monotonic()
    with Cluster.up(load_variant("fabric-recommended")) as cluster:
        print(f"booted {cluster.run} in {time.monotonic() - t:.0f} s")
        bench(cluster, args, options)


if __name__ == "__main__":
    main()
