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
