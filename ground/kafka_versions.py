"""Kafka versions and metadata modes: every per-version fact in one place, as kafkatest's
version.py keeps them, so that nodes, images and variants ask here instead of branching.

Facts (Kafka's upgrade notes and KIPs):
- ZooKeeper mode was removed in 4.0 (KIP-833); KRaft is production-ready from 3.3.
- 4.0 dropped the client protocol versions older than Kafka 2.1's (KIP-896).
- 4.0 moved the broker's logging from reload4j (log4j 1.x API) to log4j2 (KIP-653).
- Eligible leader replicas (KIP-966 part 1) exist from 4.0 and are on by default for
  clusters formatted by 4.1 or later (feature eligible.leader.replicas.version=1).

And of the librdkafka client (confluent-kafka, whose wheels bundle librdkafka of the same
version line): incremental rebalancing (KIP-429: incremental_assign, on_lost), which the group
workloads call, is in confluent-kafka from 1.6.0.
"""
from __future__ import annotations

import re
from typing import Literal

Mode = Literal["zookeeper", "kraft"]
VERSION_PATTERN = r"^\d+\.\d+\.\d+$"
# The jars ZooKeeper nodes run from: ZooKeeper 3.8.4 arrives as a dependency of Kafka 3.9.2.
ZOOKEEPER_LIBS_VERSION = "3.9.2"
SUPPORTED_MAJORS = (3, 4)
OLDEST_CONFLUENT_KAFKA = (1, 6, 0)


def parse(version: str) -> tuple[int, int, int]:
    """(major, minor, patch) of "X.Y.Z"; ValueError for anything else."""
    if not re.fullmatch(VERSION_PATTERN, version):
        raise ValueError(f"{version!r} is not a Kafka release number X.Y.Z")
    major, minor, patch = (int(p) for p in version.split("."))
    return major, minor, patch


def has_zookeeper_mode(version: str) -> bool:
    return parse(version) < (4, 0, 0)


def has_kraft(version: str) -> bool:
    """Production-ready KRaft (3.3 and later)."""
    return parse(version) >= (3, 3, 0)


def speaks_old_protocols(version: str) -> bool:
    """Whether brokers still accept the protocol versions of clients older than Kafka 2.1
    (Fabric v1.4's sarama 1.19 among them)."""
    return parse(version) < (4, 0, 0)


def elr_by_default(version: str) -> bool:
    """Whether a cluster formatted by this version tracks eligible leader replicas."""
    return parse(version) >= (4, 1, 0)


def logging(version: str) -> Literal["reload4j", "log4j2"]:
    return "reload4j" if parse(version) < (4, 0, 0) else "log4j2"


def check(version: str, mode: Mode) -> str | None:
    """Why `version` cannot run in `mode` (one line), or None."""
    major = parse(version)[0]
    if major not in SUPPORTED_MAJORS:
        return f"kafka.version {version}: ordeal builds Kafka {' and '.join(f'{m}.x' for m in SUPPORTED_MAJORS)}"
    if mode == "zookeeper" and not has_zookeeper_mode(version):
        return (f"kafka.mode zookeeper: Kafka {version} has no ZooKeeper mode (removed in 4.0); "
                f"use mode = \"kraft\" or a 3.x version")
    if mode == "kraft" and not has_kraft(version):
        return f"kafka.mode kraft: KRaft is production-ready from Kafka 3.3, not {version}"
    return None


def check_confluent_kafka(version: str) -> str | None:
    """Why `version` cannot be the librdkafka client's release (one line), or None."""
    if not re.fullmatch(VERSION_PATTERN, version):
        return f"client.version {version!r} is not a confluent-kafka release number X.Y.Z"
    if parse(version) < OLDEST_CONFLUENT_KAFKA:
        oldest = ".".join(map(str, OLDEST_CONFLUENT_KAFKA))
        return (f"client.version {version}: the workloads need confluent-kafka {oldest} or later "
                "(incremental rebalancing, KIP-429)")
    return None
