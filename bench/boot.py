"""Boot time of a cluster per variant, images cached, each variant beside the others in one
run: by default ZooKeeper mode (fabric-recommended: 3 ZooKeeper + 4 Kafka 3.9.2) and KRaft
(kraft-recommended: 3 controllers + 4 Kafka 4.4.0), both without OSNs so that the metadata
quorums and brokers are what is compared (--osns keeps them).

cold: the first boot after the kernel's page cache was dropped (JVM and jars read from disk);
warm: the boots after it. Prints each boot and a summary line per variant.
    .venv/bin/python bench/boot.py [--warm-runs 3] [--variants fabric-recommended,kraft-recommended] [--osns]
"""
from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import docker

from clusters.cluster import Cluster
from clusters.images.build import build_all
from ground.variant import Variant, load_variant
from ground.cache import cache_dir


def drop_page_cache() -> bool:
    try:
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
        return True
    except OSError:
        return False


def shape(variant: Variant, osns: bool) -> Variant:
    if osns:
        return variant
    return variant.model_copy(update={"cluster": variant.cluster.model_copy(update={"osns": 0})})


def boot_once(client: docker.DockerClient, variant: Variant) -> tuple[float, float]:
    started = time.monotonic()
    cluster = Cluster.up(variant, client=client)
    booted = time.monotonic() - started
    t = time.monotonic()
    cluster.down()
    return booted, time.monotonic() - t


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--variants", default="fabric-recommended,kraft-recommended")
    parser.add_argument("--warm-runs", type=int, default=3)
    parser.add_argument("--osns", action="store_true", help="boot the variants' OSNs too")
    args = parser.parse_args()
    client = docker.from_env(timeout=120)
    variants = [shape(load_variant(name), args.osns) for name in args.variants.split(",")]
    t = time.monotonic()
    build_all(cache_dir(), client, kafka_versions=sorted({v.kafka.version for v in variants}))
    print(f"images (cached) checked in {time.monotonic() - t:.1f} s; load average {os.getloadavg()[0]:.1f}")
    summary = []
    for variant in variants:
        quorum = (f"{variant.cluster.controllers} controllers" if variant.kafka.mode == "kraft"
                  else f"{variant.cluster.zookeepers} ZooKeeper")
        what = (f"{variant.name}: {quorum} + {variant.cluster.brokers} Kafka {variant.kafka.version}"
                f" + {variant.cluster.osns} OSNs")
        dropped = drop_page_cache()
        cold, down = boot_once(client, variant)
        print(f"{what}: cold boot {cold:6.1f} s   teardown {down:4.1f} s   (page cache dropped: {dropped})")
        warm = []
        for i in range(args.warm_runs):
            booted, down = boot_once(client, variant)
            warm.append(booted)
            print(f"{what}: warm boot {booted:6.1f} s   teardown {down:4.1f} s   (run {i + 1})")
        summary.append(f"{what}: cold {cold:.1f} s, warm median {statistics.median(warm):.1f} s "
                       f"(target <= 30 s), warm/cold {statistics.median(warm) / cold:.2f}")
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    for line in summary:
        print(line)


if __name__ == "__main__":
    main()
