"""KRaft: a broker cut off from the controller quorum alone, which the controllers must fence.

Only the links between the broker and the controllers are cut: clients, the other brokers
and its followers still reach it. Its heartbeats stop reaching the active controller, which
fences it after broker.session.timeout.ms (6 s here, clusters/node_config.py) and moves its
leaderships away; the broker itself does not learn it (its metadata stops), so until the
heal it may still answer clients as a leader that no longer leads. acks=all writes to it
cannot complete once its followers fetch from the new leaders, and it cannot shrink its ISR
without the controller: nothing acknowledged there may be lost.

Whether the broker was fenced is read as clients see it: each other broker is asked
(through its own proxy) for the cluster's brokers, and in KRaft only unfenced brokers are
listed. `stop` waits for that (bounded) before it heals, and the op says what was seen.
"""
from __future__ import annotations

import random
import time

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ground.cluster_view import ClusterView, NodeView
from clusters.health import admin_client
from ground.op import Op
from nemesis import topologies
from nemesis.fault import Fault, op
from nemesis.partition import Firewall
from nemesis.targets import ROLE_PICKS, TargetSpec, resolve, roles_hit

POLL = 0.5


class FencingOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    target: TargetSpec = TargetSpec()
    fence_timeout: float = Field(20.0, ge=0, le=300, description="seconds from the cut that stop waits to see the "
                                 "broker fenced before it heals")
    rejoin_timeout: float = Field(30.0, ge=0, le=300, description="seconds stop waits for it to be unfenced again")
    seed: int = 0

    @field_validator("target")
    @classmethod
    def _a_broker(cls, target: TargetSpec) -> TargetSpec:
        if target.pick in ROLE_PICKS and target.role != "kafka" or target.pick == "controller":
            raise ValueError("the target must be a broker (role kafka, or a partition's leader / isr / follower)")
        return target


def listed_brokers(cluster: ClusterView, asked: NodeView, timeout: float = 5.0) -> set[str] | None:
    """The brokers `asked` lists in its metadata now (KRaft lists only unfenced ones); None
    if it does not answer. A Metadata request goes to the one broker the client knows (a
    DescribeCluster would go to whichever broker the metadata names as "controller")."""
    admin = admin_client(cluster.proxy_address(asked))
    try:
        meta = admin.list_topics(timeout=timeout)
    except Exception:  # noqa: BLE001 - a broker that cannot answer now says nothing
        return None
    return {f"kafka{i}" for i in meta.brokers}


def seen_fenced(cluster: ClusterView, broker: str) -> tuple[bool, list[str]]:
    """Whether every other running broker that answers leaves `broker` out (and at least one
    answers); and which answered."""
    views = {}
    for other in cluster.brokers:
        if other.name != broker and other.state == "running":
            listed = listed_brokers(cluster, other)
            if listed is not None:
                views[other.name] = listed
    return bool(views) and all(broker not in listed for listed in views.values()), sorted(views)


class BrokerFromControllers(Fault):
    """start: cut one broker from every controller; stop: wait (bounded) until the other
    brokers no longer list it, heal, wait (bounded) until they list it again."""

    name = "isolate-broker-from-controllers"

    def __init__(self, options: FencingOptions):
        super().__init__(options.seed)
        self.options = options
        self.victim: str | None = None
        self.cut_at = 0.0

    def roles(self) -> set[str]:
        return {"controller"} | roles_hit(self.options.target)

    def start(self, rng: random.Random) -> Op:
        victims, detail = resolve(self.cluster, self.options.target, rng)
        victim = victims[0]
        fw = Firewall(self.cluster)
        graph = topologies.separate(fw.names(), [victim], [n.name for n in self.cluster.controllers])
        active = self.cluster.controller()
        self.victim, self.cut_at = victim, time.monotonic()
        fw.apply(graph)
        return op("partition", self.name, **topologies.describe(graph, "broker-from-controllers"), nodes=[victim],
                  active_controller=active.name if active else None, **detail)

    def _wait(self, fenced: bool, until: float) -> tuple[float | None, list[str]]:
        """Seconds since the cut when the brokers' view first showed `fenced`, or None by `until`."""
        asked: list[str] = []
        while True:
            assert self.victim is not None
            now_fenced, asked = seen_fenced(self.cluster, self.victim)
            if now_fenced == fenced:
                return round(time.monotonic() - self.cut_at, 1), asked
            if time.monotonic() > until:
                return None, asked
            time.sleep(POLL)

    def stop(self) -> Op:
        if self.victim is None:
            return op("heal", self.name, **Firewall(self.cluster).heal())
        fenced_after, asked = self._wait(True, self.cut_at + self.options.fence_timeout)
        healed = Firewall(self.cluster).heal()
        healed_at = time.monotonic()
        rejoined_after, _ = self._wait(False, healed_at + self.options.rejoin_timeout)
        value = {"nodes": [self.victim], "fenced": fenced_after is not None, "fenced_after": fenced_after,
                 "asked": asked, "unfenced_after_heal": None if rejoined_after is None
                 else round(rejoined_after - (healed_at - self.cut_at), 1), **healed}
        self.victim = None
        return op("heal", self.name, **value)

    def heal_all(self) -> list[Op]:
        was = self.victim is not None
        healed = op("heal", self.name, **Firewall(self.cluster).heal())
        self.victim = None
        return [healed] if was or not healed["value"]["connected"] else []
