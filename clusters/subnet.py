"""Choosing a free /24 for a run's internal network, so parallel runs never collide."""
from __future__ import annotations

import hashlib
import ipaddress

import docker

# 10.213.0.0/16 is carved into /24s; a run starts at a slot derived from its label and
# walks on past slots that any docker network already uses.
POOL = ipaddress.ip_network("10.213.0.0/16")
# Where each role's nodes sit in a run's /24: host numbers from these on, one per node.
TOXIPROXY_OFFSET, ZK_OFFSET, KAFKA_OFFSET, OSN_OFFSET, CONTROLLER_OFFSET = 5, 10, 20, 30, 40


def _used(client: docker.DockerClient) -> list[ipaddress.IPv4Network]:
    used = []
    for net in client.networks.list():
        for cfg in (net.attrs.get("IPAM") or {}).get("Config") or []:
            if cfg.get("Subnet"):
                try:
                    used.append(ipaddress.ip_network(cfg["Subnet"]))
                except ValueError:
                    pass
    return used


def candidate_subnets(client: docker.DockerClient, run: str) -> list[ipaddress.IPv4Network]:
    """Free /24s in the pool, in the order this run should try them."""
    slots = list(POOL.subnets(new_prefix=24))
    start = int(hashlib.sha256(run.encode()).hexdigest(), 16) % len(slots)
    used = _used(client)
    ordered = slots[start:] + slots[:start]
    return [s for s in ordered if not any(s.overlaps(u) for u in used)]


def host_ip(subnet: ipaddress.IPv4Network, offset: int) -> str:
    return str(subnet.network_address + offset)
