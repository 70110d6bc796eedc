"""Boot time of the fabric-recommended 3 ZooKeeper + 4 Kafka cluster, images cached.

cold: the first boot after the kernel's page cache was dropped (JVM and jars read from disk);
warm: the boots after it. Prints each boot and the summary.
    .venv/bin/python bench/boot.py [--warm-runs 3] [--variant fabric-recommended]
"""
from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import docker

from clusters.cluster import DEFAULT_CACHE, Cluster
from clusters.images.build import build_all
from clusters.variant import load_variant


def drop_page_cache() -> bool:
    try:
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
        return True
    except OSError:
        return False


def boot_once(client: docker.DockerClient, variant_name: str) -> tuple[float, float]:
    started = time.monotonic()
    cluster = Cluster.up(load_variant(variant_name), client=client)
    booted = time.monotonic() - started
    t = time.monotonic()
    cluster.down()
    return booted, time.monotonic() - t


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--variant", default="fabric-recommended")
    parser.add_argument("--warm-runs", type=int, default=3)
    args = parser.parse_args()
    client = docker.from_env(timeout=120)
    t = time.monotonic()
    build_all(DEFAULT_CACHE, client)
    print(f"images (cached) checked in {time.monotonic() - t:.1f} s")
    dropped = drop_page_cache()
    cold, down = boot_once(client, args.variant)
    print(f"cold boot  {cold:6.1f} s   teardown {down:4.1f} s   (page cache dropped: {dropped})")
    warm = []
    for i in range(args.warm_runs):
        booted, down = boot_once(client, args.variant)
        warm.append(booted)
        print(f"warm boot  {booted:6.1f} s   teardown {down:4.1f} s   (run {i + 1})")
    print(f"{args.variant}: cold {cold:.1f} s, warm median {statistics.median(warm):.1f} s "
          f"(target <= 30 s), warm/cold {statistics.median(warm) / cold:.2f}")


if __name__ == "__main__":
    main()
