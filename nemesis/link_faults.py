"""Link faults on the client-to-broker path: toxics on the per-broker toxiproxy proxies
(latency with jitter, bandwidth, timeout, reset_peer). Inter-broker and ZooKeeper links
are not proxied; partition.py cuts those.
"""
from __future__ import annotations

import random
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from toxiproxy.server import Toxiproxy

from ground.cluster_view import ClusterView
from clusters.cluster import TOXIPROXY_API_PORT
from ground.op import Op
from nemesis.fault import Fault, op
from nemesis.targets import TargetSpec, resolve

Kind = Literal["latency", "bandwidth", "timeout", "reset_peer"]
KINDS: tuple[Kind, ...] = ("latency", "bandwidth", "timeout", "reset_peer")
PREFIX = "ordeal-"


class LinkFaultOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    kinds: list[Kind] = Field(default_factory=lambda: list(KINDS), min_length=1,
                              description="one picked at random per start")
    target: TargetSpec = TargetSpec(role="kafka")  # whose proxy; pick "all" for every broker
    # toxiproxy's "downstream" is broker -> client: latency there adds once per round trip.
    stream: Literal["downstream", "upstream"] = "downstream"
    latency_ms: int = Field(300, ge=0)
    jitter_ms: int = Field(50, ge=0)
    rate_kbps: int = Field(16, ge=1, description="bandwidth toxic, KB/s")
    timeout_ms: int = Field(2000, ge=0, description="timeout and reset_peer toxics; 0 = never close / reset at once")
    seed: int = 0


def toxic_attributes(kind: Kind, o: LinkFaultOptions) -> dict[str, int]:
    """toxiproxy's attributes for one toxic kind (names from its REST API)."""
    if kind == "latency":
        return {"latency": o.latency_ms, "jitter": o.jitter_ms}
    if kind == "bandwidth":
        return {"rate": o.rate_kbps}
    return {"timeout": o.timeout_ms}


def toxiproxy_server(cluster: ClusterView) -> Toxiproxy:
    # toxiproxy-python keeps the server address in class attributes (one server per process).
    server = Toxiproxy()
    server.update_api_consumer(cluster.toxiproxy.ip, TOXIPROXY_API_PORT)
    return server


def add_toxic(cluster: ClusterView, broker: str, kind: Kind, o: LinkFaultOptions) -> dict[str, Any]:
    proxy = toxiproxy_server(cluster).get_proxy(broker)
    if proxy is None:
        raise RuntimeError(f"toxiproxy has no proxy {broker}")
    attributes = toxic_attributes(kind, o)
    proxy.add_toxic(name=f"{PREFIX}{kind}-{o.stream}", type=kind, stream=o.stream, toxicity=1.0,
                    attributes=attributes)
    return attributes


def remove_toxics(cluster: ClusterView) -> list[str]:
    """Every toxic of every proxy removed and every proxy enabled (toxiproxy's /reset);
    answers the toxics that were there."""
    server = toxiproxy_server(cluster)
    present = sorted(f"{name}/{toxic}" for name, proxy in server.proxies().items() for toxic in proxy.toxics())
    server.reset()
    return present


class LinkFaultNemesis(Fault):
    """start: one toxic kind on the chosen brokers' proxies; stop / heal_all: none left."""

    def __init__(self, name: str, options: LinkFaultOptions):
        self.name = name
        super().__init__(options.seed)
        self.options = options
        self.active = False

    def start(self, rng: random.Random) -> Op:
        kind = rng.choice(self.options.kinds)
        brokers, detail = resolve(self.cluster, self.options.target, rng)
        self.active = True
        attributes = {}
        for b in brokers:
            attributes = add_toxic(self.cluster, b, kind, self.options)
        return op("link-fault", self.name, toxic=kind, stream=self.options.stream, attributes=attributes,
                  nodes=brokers, link="client", **detail)

    def stop(self) -> Op:
        removed = remove_toxics(self.cluster)
        self.active = False
        return op("heal", self.name, toxics_removed=removed)

    def heal_all(self) -> list[Op]:
        was_active = self.active
        healed = self.stop()
        return [healed] if was_active or healed["value"]["toxics_removed"] else []
