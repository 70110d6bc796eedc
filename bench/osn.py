"""Throughput and Broadcast latency through the OSNs.

    .venv/bin/python bench/osn.py                      # the running ordeal cluster's OSNs
    .venv/bin/python bench/osn.py --osn 10.0.0.31:7050 --osn 10.0.0.32:7050 --osn 10.0.0.33:7050

Broadcasts --txs transactions over --channels, each to a random OSN, from --concurrency
client threads; then waits until every OSN delivers every acknowledged tx. Prints the
acknowledged rate (SUCCESS answers per second), the ordered rate (until the last acknowledged
tx is in a block on every OSN) and Broadcast latency p50/p99 of SUCCESS answers. It does not
boot a cluster: start one with OSNs first (acks=all is the fabric-recommended variant).
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
import threading
import time
from collections import Counter
from pathlib import Path

from clusters.orderer.client import OsnClient, OsnUnreachable
from clusters.orderer.identity import Identity, MspIdentity, NamedIdentity


def percentile(sorted_values: list[float], q: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def cluster_osns() -> tuple[list[str], str, Identity]:
    """OSN addresses of the running cluster, a note on its producer acks, its client identity."""
    from clusters.cluster import Cluster  # needs docker; only when no --osn was given

    cluster = Cluster.attach()
    if cluster is None or not cluster.osns:
        sys.exit("bench/osn.py: no running ordeal cluster with OSNs; boot one, or pass --osn addresses")
    acks = cluster.variant.producer.acks
    return (list(cluster.osn_addresses().values()), f"variant {cluster.variant.name}, acks={acks}",
            cluster.client_identity())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--osn", action="append", default=[], help="OSN address host:port (repeatable)")
    parser.add_argument("--channels", nargs="+", default=["ch0", "ch1"])
    parser.add_argument("--txs", type=int, default=5000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--creator", default="bench", help="creator name for the model's OSNs given by --osn")
    parser.add_argument("--msp-dir", type=Path, help="sign with this MSP folder (cryptogen layout), for real orderers")
    parser.add_argument("--msp-id", help="the MSP id of --msp-dir")
    parser.add_argument("--payload-bytes", type=int, default=100)
    args = parser.parse_args()
    if bool(args.msp_dir) != bool(args.msp_id):
        parser.error("--msp-dir and --msp-id go together")
    if args.osn:
        identity = MspIdentity.load(args.msp_id, args.msp_dir) if args.msp_dir else NamedIdentity(args.creator)
        addresses, note = args.osn, "acks as configured on the OSNs"
    else:
        addresses, note, identity = cluster_osns()

    client = OsnClient(identity)
    run = f"{time.time_ns():x}"
    payload = b"x" * args.payload_bytes
    latencies: list[float] = []
    statuses: Counter[str] = Counter()
    acked: dict[str, set[str]] = {channel: set() for channel in args.channels}
    lock = threading.Lock()
    next_tx = iter(range(args.txs))

    def worker() -> None:
        rng = random.Random()
        while True:
            with lock:
                i = next(next_tx, None)
            if i is None:
                return
            channel, tx = args.channels[i % len(args.channels)], f"bench-{run}-{i}"
            began = time.perf_counter()
            try:
                status = client.broadcast(rng.choice(addresses), channel, tx, data=payload)
            except OsnUnreachable as exc:
                status = f"unreachable:{exc.code}"
            took = time.perf_counter() - began
            with lock:
                statuses[status] += 1
                if status == "SUCCESS":
                    latencies.append(took)
                    acked[channel].add(tx)

    heights = {(a, c): len(client.deliver(a, c, 0)) for a in addresses for c in args.channels}
    began = time.perf_counter()
    threads = [threading.Thread(target=worker) for _ in range(args.concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    broadcast_s = time.perf_counter() - began

    pending = {(a, c) for a in addresses for c in args.channels if acked[c]}
    while pending and time.perf_counter() - began < broadcast_s + 120:
        for a, c in sorted(pending):
            blocks = client.deliver(a, c, heights[(a, c)])
            if acked[c] <= {tx for b in blocks for tx in b["txs"]}:
                pending.discard((a, c))
        time.sleep(0.2)
    ordered_s = time.perf_counter() - began
    client.close()

    ok = statuses["SUCCESS"]
    latencies.sort()
    print(f"OSNs: {len(addresses)} ({note}); channels: {', '.join(args.channels)}; "
          f"concurrency {args.concurrency}; payload {args.payload_bytes} B")
    print(f"statuses: {dict(statuses)}")
    print(f"acknowledged: {ok} txs in {broadcast_s:.2f} s = {ok / broadcast_s:.0f} txs/s")
    if pending:
        print(f"ordered: NOT every acknowledged tx delivered within the wait; missing on {sorted(pending)}")
    else:
        print(f"ordered (every OSN holds every acknowledged tx): {ordered_s:.2f} s = {ok / ordered_s:.0f} txs/s")
    if latencies:
        print(f"broadcast latency: p50 {percentile(latencies, 0.50) * 1000:.1f} ms, "
              f"p99 {percentile(latencies, 0.99) * 1000:.1f} ms, mean {statistics.fmean(latencies) * 1000:.1f} ms")
    return 0 if not pending else 1


if __name__ == "__main__":
    sys.exit(main())
