"""Is the cluster ready? Asked from the host, of the nodes themselves."""
from __future__ import annotations

import logging
import socket
import urllib.request

from confluent_kafka.admin import AdminClient

from clusters.node_config import OSN_OPERATIONS_PORT, ZK_CLIENT_PORT

# librdkafka reports every refused connection while brokers boot; those are expected.
QUIET = logging.getLogger("ordeal.kafka-admin")
QUIET.addHandler(logging.NullHandler())
QUIET.propagate = False


def zookeeper_mode(ip: str, timeout: float = 2.0) -> str | None:
    """leader / follower / standalone from the `srvr` four-letter word; None if it does not serve."""
    try:
        with socket.create_connection((ip, ZK_CLIENT_PORT), timeout=timeout) as s:
            s.sendall(b"srvr")
            s.settimeout(timeout)
            data = b""
            while chunk := s.recv(4096):
                data += chunk
    except OSError:
        return None
    for line in data.decode(errors="replace").splitlines():
        if line.startswith("Mode:"):
            return line.split(":", 1)[1].strip()
    return None


def ensemble_has_leader(ips: list[str]) -> bool:
    modes = [zookeeper_mode(ip) for ip in ips]
    if len(ips) == 1:
        return modes[0] == "standalone"
    return modes.count("leader") == 1 and all(m in ("leader", "follower") for m in modes)


def osn_healthy(ip: str, timeout: float = 2.0) -> bool:
    """The OSN's operations endpoint answers 200 once every chain has started."""
    try:
        with urllib.request.urlopen(f"http://{ip}:{OSN_OPERATIONS_PORT}/healthz", timeout=timeout) as resp:
            return resp.status == 200
    except (OSError, ValueError):
        return False


def admin_client(bootstrap_servers: str, **extra: object) -> AdminClient:
    return AdminClient({"bootstrap.servers": bootstrap_servers, "socket.timeout.ms": 5000, **extra},
                       logger=QUIET)


def kafka_ready(bootstrap_servers: str, brokers: int, timeout: float = 5.0) -> bool:
    """All brokers registered and a controller elected, as a client on the host sees it."""
    admin = admin_client(bootstrap_servers)  # must outlive the future, or librdkafka destroys it
    try:
        desc = admin.describe_cluster(request_timeout=timeout).result(timeout=timeout + 1)
    except Exception:  # any client error simply means: not ready yet
        return False
    return len(desc.nodes) == brokers and desc.controller is not None and desc.controller.id >= 0


def kafka_gaps(bootstrap_servers: str, brokers: int, timeout: float = 5.0, most: int = 20) -> list[str]:
    """What keeps Kafka from being whole again after the faults, as the metadata says (at most
    `most` lines; [] when whole): a broker not registered, a partition without a leader or
    with a replica out of its ISR. Internal topics count: a __transaction_state partition
    below min.insync.replicas keeps its coordinator from ending txns, and a consumer-offsets
    one keeps groups from committing."""
    admin = admin_client(bootstrap_servers)
    try:
        meta = admin.list_topics(timeout=timeout)
    except Exception as exc:  # noqa: BLE001 - no answer is itself the gap
        return [f"no metadata ({exc.__class__.__name__})"]
    gaps = [] if len(meta.brokers) >= brokers else [f"{len(meta.brokers)} of {brokers} brokers registered"]
    for name in sorted(meta.topics):
        for pid, part in sorted(meta.topics[name].partitions.items()):
            if part.leader < 0:
                gaps.append(f"{name}-{pid}: no leader")
            elif set(part.replicas) - set(part.isrs):
                gaps.append(f"{name}-{pid}: ISR {sorted(part.isrs)} of replicas {sorted(part.replicas)}")
            if len(gaps) >= most:
                return gaps
    return gaps
