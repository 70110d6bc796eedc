"""Throughput and Broadcast latency of the ordering service: Fabric v1.4.12's orderer and
ordeal's model, side by side in one run.

    .venv/bin/python bench/orderers.py                       # boots fabric-recommended, then its model twin
    .venv/bin/python bench/orderers.py --variant fabric-recommended --txs 2000
    .venv/bin/python bench/orderers.py --variant fabric-recommended --in-flight 256 --txs 20000
    .venv/bin/python bench/orderers.py --osn 10.0.0.31:7050 --osn 10.0.0.32:7050   # OSNs already running

For each variant (a running cluster of it is used, else one is booted and removed after),
broadcasts --txs transactions over its channels, each to a random OSN, from --concurrency
client threads each waiting for its answer, or with --in-flight N from one thread keeping N
Broadcasts open at once (the ordering workload's way with a scenario's in_flight, see
fabric/async_client.py); then waits until every OSN delivers every acknowledged tx. Prints the
acknowledged rate (SUCCESS answers per second), the ordered rate (until the last acknowledged
tx is in a block on every OSN) and Broadcast latency p50/p99 of SUCCESS answers; then the CPU
this process and each role's containers spent per acknowledged tx while broadcasting, whose
sum against the cores says whether the machine's CPU is what limits the rate; then the
real/model ratios. It asserts nothing.
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fabric.async_client import AsyncOsnClient
from fabric.client import OsnClient, OsnUnreachable
from fabric.identity import Identity, MspIdentity, NamedIdentity


def percentile(sorted_values: list[float], q: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


@dataclass
class Figures:
    label: str
    statuses: dict[str, int]
    acknowledged: int
    broadcast_s: float
    ordered_s: float | None  # None: not every acknowledged tx was delivered within the wait
    p50_ms: float
    p99_ms: float
    # CPU milliseconds per acknowledged tx while broadcasting: this process ("client") and,
    # on a cluster, each role's containers together. Their sum against the machine's cores
    # is the most the machine could acknowledge if CPU were all that limits it.
    cpu_ms_per_tx: dict[str, float] = field(default_factory=dict)

    @property
    def ack_rate(self) -> float:
        return self.acknowledged / self.broadcast_s


def container_cpu(nodes: list[Any]) -> dict[str, float]:
    """CPU seconds the containers of each role have used so far, from the Docker engine's stats."""
    used: dict[str, float] = {}
    for node in nodes:
        stats = node.container.stats(stream=False, one_shot=True)
        used[node.role] = used.get(node.role, 0.0) + stats["cpu_stats"]["cpu_usage"]["total_usage"] / 1e9
    return used


def measure(label: str, addresses: list[str], channels: list[str], identity: Identity, txs: int,
            concurrency: int, payload_bytes: int, in_flight: int = 0,
            cpu: Callable[[], dict[str, float]] = dict) -> Figures:
    client = OsnClient(identity)
    run = f"{time.time_ns():x}"
    payload = b"x" * payload_bytes
    latencies: list[float] = []
    statuses: Counter[str] = Counter()
    acked: dict[str, set[str]] = {channel: set() for channel in channels}
    lock = threading.Lock()
    next_tx = iter(range(txs))

    def record(channel: str, tx: str, began: float, status: object) -> None:
        """One answer, from a waiting thread or from the broadcaster's loop."""
        took = time.perf_counter() - began
        if isinstance(status, OsnUnreachable):
            status = f"unreachable:{status.code}"
        with lock:
            statuses[str(status)] += 1
            if status == "SUCCESS":
                latencies.append(took)
                acked[channel].add(tx)

    def worker() -> None:
        rng = random.Random()
        while True:
            with lock:
                i = next(next_tx, None)
            if i is None:
                return
            channel, tx = channels[i % len(channels)], f"bench-{run}-{i}"
            began = time.perf_counter()
            try:
                status: object = client.broadcast(rng.choice(addresses), channel, tx, data=payload)
            except OsnUnreachable as exc:
                status = exc
            record(channel, tx, began, status)

    def answered(channel: str, tx: str, began: float, status: object, room: threading.Semaphore) -> None:
        record(channel, tx, began, status)
        room.release()

    def open_at_once() -> None:
        """One thread, up to in_flight Broadcasts open; returns when every one is answered."""
        broadcasts, room, rng = AsyncOsnClient(identity), threading.Semaphore(in_flight), random.Random()
        for i in range(txs):
            room.acquire()
            channel, tx = channels[i % len(channels)], f"bench-{run}-{i}"
            broadcasts.broadcast(rng.choice(addresses), channel, tx,
                                 lambda status, c=channel, t=tx, b=time.perf_counter(): answered(c, t, b, status, room),
                                 data=payload)
        for _ in range(in_flight):
            room.acquire()
        broadcasts.close()

    heights = {(a, c): len(client.deliver(a, c, 0)) for a in addresses for c in channels}
    cpu_before, client_before = cpu(), time.process_time()
    began = time.perf_counter()
    if in_flight:
        open_at_once()
    else:
        threads = [threading.Thread(target=worker) for _ in range(concurrency)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    broadcast_s = time.perf_counter() - began
    client_cpu, cpu_after = time.process_time() - client_before, cpu()
    per_tx = 1000 / max(1, statuses["SUCCESS"])
    cpu_ms = {"client": client_cpu * per_tx, **{role: (cpu_after[role] - cpu_before.get(role, 0.0)) * per_tx
                                                 for role in sorted(cpu_after)}}

    pending = {(a, c) for a in addresses for c in channels if acked[c]}
    while pending and time.perf_counter() - began < broadcast_s + 120:
        for a, c in sorted(pending):
            blocks = client.deliver(a, c, heights[(a, c)])
            if acked[c] <= {tx for b in blocks for tx in b["txs"]}:
                pending.discard((a, c))
        time.sleep(0.2)
    ordered_s = time.perf_counter() - began
    client.close()
    latencies.sort()
    return Figures(label, dict(statuses), statuses["SUCCESS"], broadcast_s, None if pending else ordered_s,
                   percentile(latencies, 0.50) * 1000 if latencies else float("nan"),
                   percentile(latencies, 0.99) * 1000 if latencies else float("nan"), cpu_ms)


def on_variant(name: str, args: argparse.Namespace) -> Figures:
    """Measure on a running cluster of `name`, or on one booted for it (removed after)."""
    from clusters.cluster import Cluster
    from ground.variant import load_variant

    variant = load_variant(name)
    cluster, booted = Cluster.attach(variant), False
    if cluster is None:
        t = time.monotonic()
        cluster, booted = Cluster.up(variant), True
        print(f"{name}: booted in {time.monotonic() - t:.1f} s", flush=True)
    try:
        if not cluster.osns:
            sys.exit(f"bench/orderers.py: variant {name} has no OSNs")
        o = cluster.orderer_description() or {}
        label = f"{name} ({o.get('implementation')})"
        return measure(label, list(cluster.osn_addresses().values()), list(variant.orderer.channels),
                       cluster.client_identity(), args.txs, args.concurrency, args.payload_bytes, args.in_flight,
                       cpu=lambda: container_cpu(cluster.nodes))
    finally:
        if booted:
            cluster.down()


def show(figures: list[Figures], args: argparse.Namespace) -> None:
    load = os.getloadavg()
    how = f"{args.in_flight} in flight" if args.in_flight else f"concurrency {args.concurrency}"
    print(f"{args.txs} txs, {how}, payload {args.payload_bytes} B; "
          f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on {os.cpu_count()} cores")
    print(f"{'':44} {'ack tx/s':>9} {'ordered tx/s':>13} {'p50 ms':>8} {'p99 ms':>8}  statuses")
    for f in figures:
        ordered = f"{f.acknowledged / f.ordered_s:13.0f}" if f.ordered_s else f"{'INCOMPLETE':>13}"
        print(f"{f.label:44} {f.ack_rate:9.0f} {ordered} {f.p50_ms:8.1f} {f.p99_ms:8.1f}  {f.statuses}")
    for f in figures:
        total = sum(f.cpu_ms_per_tx.values())
        parts = ", ".join(f"{role} {ms:.2f}" for role, ms in f.cpu_ms_per_tx.items())
        print(f"{f.label}: CPU ms per acknowledged tx: {parts}; sum {total:.2f}, so {os.cpu_count()} cores "
              f"acknowledge at most {1000 * (os.cpu_count() or 1) / total:.0f} tx/s if CPU is the limit")
    if len(figures) == 2:
        a, b = figures
        print(f"ratio {a.label.split()[0]} / {b.label.split()[0]}: ack tx/s {a.ack_rate / b.ack_rate:.2f}, "
              f"p50 {a.p50_ms / b.p50_ms:.2f}, p99 {a.p99_ms / b.p99_ms:.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", action="append", default=[],
                        help="variant to measure (repeatable; default: fabric-recommended and fabric-recommended-model)")
    parser.add_argument("--osn", action="append", default=[], help="OSN address host:port of running OSNs (repeatable)")
    parser.add_argument("--channels", nargs="+", default=["ch0", "ch1"], help="with --osn: the channels")
    parser.add_argument("--txs", type=int, default=5000)
    parser.add_argument("--concurrency", type=int, default=32, help="client threads, each waiting for its answer")
    parser.add_argument("--in-flight", type=int, default=0,
                        help="instead: one thread keeping this many Broadcasts open at once")
    parser.add_argument("--creator", default="bench", help="with --osn: creator name for the model's OSNs")
    parser.add_argument("--msp-dir", type=Path, help="with --osn: sign with this MSP folder (cryptogen layout)")
    parser.add_argument("--msp-id", help="the MSP id of --msp-dir")
    parser.add_argument("--payload-bytes", type=int, default=100)
    args = parser.parse_args()
    if bool(args.msp_dir) != bool(args.msp_id):
        parser.error("--msp-dir and --msp-id go together")
    if args.osn:
        identity = MspIdentity.load(args.msp_id, args.msp_dir) if args.msp_dir else NamedIdentity(args.creator)
        figures = [measure("given OSNs", args.osn, args.channels, identity, args.txs, args.concurrency,
                           args.payload_bytes, args.in_flight)]
    else:
        figures = [on_variant(name, args) for name in args.variant or ["fabric-recommended", "fabric-recommended-model"]]
    show(figures, args)
    return 0 if all(f.ordered_s for f in figures) else 1


if __name__ == "__main__":
    sys.exit(main())
