"""disk-loss: a node whose disk is swapped for an empty one. SIGKILL, every writable volume
of the node emptied (Node.lose_disk), start again: at once (a broker back before its
ZooKeeper session of zookeeper.session.timeout.ms expires) or after `down_for` seconds.

A SIGKILL alone never loses what reached the page cache, so without this fault a
configuration whose acknowledged writes live on one disk only (min.insync.replicas = 1)
looks safe. Whom it hits:

- `random` / `leader`: a live node of the role, or the leader of a partition (read live);
- `sole-in-sync`: the leader of a partition once it is the only in-sync replica. The
  partition's followers are paused (SIGSTOP) until the controller has dropped them from
  the ISR (their ZooKeeper sessions expire: about 6 s here), the leader then acknowledges
  alone for `hold` seconds (where min.insync.replicas allows it), loses its disk, the
  followers are resumed and the leader starts again. Kafka in ZooKeeper mode elects it
  back (it is the whole ISR) with an empty log, and the followers truncate to it: what
  KIP-966 (eligible leader replicas, KRaft only) is about. Seen in KRaft: 3.9.2 leaves
  the partition leaderless (the re-formatted replica is not elected back), 4.4.0 elects a
  follower from the ELR.

start does the whole sequence and answers one op (f "disk-loss") naming the node, the
volumes and what they held; stop has nothing to undo but waits (bounded) for the node to
serve again and answers op f "heal" with `back` and `back_after_s` (how long that took): a
broker once its new process answers and it is in the ISR of all its partitions again.

With role "osn" the node is an ordering node and what it loses is its ledger only (see
Node.lose_disk), and it is back once it serves every channel: Fabric v1.4.12's orderer has
then made its system channel again from the genesis block and its application channels by
replaying the system channel's partition, and goes on re-reading each channel's partition
from the oldest offset (tests/clusters/test_osn_nodes.py measures how long that takes).
"""
from __future__ import annotations

import random
import time
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ground.cluster_view import NodeView
from ground.op import Op
from nemesis.fault import Fault, op
from nemesis.targets import NoTarget, PartitionState, channel_topics, controller, data_partitions, partition_state

POLL = 0.5


class DiskLossOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    pick: Literal["random", "leader", "sole-in-sync"] = "random"
    role: Literal["kafka", "osn", "zookeeper", "controller"] = "kafka"
    topic: str | None = None
    partition: int | None = Field(None, ge=0)
    down_for: float = Field(0.0, ge=0, le=120, description="seconds the wiped node stays down before it "
                            "starts again; 0: at once, before its ZooKeeper session expires")
    shrink_timeout: float = Field(30.0, ge=0, le=120, description="sole-in-sync: seconds to wait for the "
                                  "ISR to shrink to the leader")
    hold: float = Field(5.0, ge=0, le=60, description="sole-in-sync: seconds the leader acknowledges alone "
                        "before it loses its disk")
    back_timeout: float = Field(90.0, gt=0, le=600, description="seconds stop waits for the node to serve again")
    seed: int = 0

    @model_validator(mode="after")
    def _leaders_are_brokers(self) -> "DiskLossOptions":
        # A partition's leader is always a broker: `leader` and `sole-in-sync` with another
        # role would silently wipe a broker instead of the node kind asked for.
        if self.pick != "random" and self.role != "kafka":
            raise ValueError(f"pick {self.pick!r} chooses a broker; role {self.role!r} takes pick 'random'")
        return self


class DiskLoss(Fault):
    name = "disk-loss"

    def __init__(self, options: DiskLossOptions):
        super().__init__(options.seed)
        self.options = options
        self.down: list[str] = []    # wiped and not started yet
        self.paused: list[str] = []  # followers held out of the ISR
        self.last: str | None = None  # the node stop waits for

    def roles(self) -> set[str]:
        return {self.options.role}

    # -- choosing ----------------------------------------------------------------
    def _partition(self, rng: random.Random) -> PartitionState:
        o = self.options
        if o.topic is not None and o.partition is not None:
            return partition_state(self.cluster, o.topic, o.partition)
        candidates = data_partitions(self.cluster, o.topic, exclude=channel_topics(self.cluster))
        if not candidates:
            raise NoTarget(f"no topic {o.topic} to pick a partition from" if o.topic else "no user topic yet")
        states = [partition_state(self.cluster, t, p) for t, p in candidates]
        led = [s for s in states if s.leader is not None and len(s.isr) >= 1]
        if not led:
            raise NoTarget("no partition has a leader")
        if o.pick == "sole-in-sync":
            # The followers are paused; a controller among them delays the ISR shrink by a
            # controller election, so partitions that do not hold the controller come first.
            boss = controller(self.cluster)
            clear = [s for s in led if boss not in s.followers and s.followers]
            led = clear or [s for s in led if s.followers] or led
        return rng.choice(led)

    # -- the steps ---------------------------------------------------------------
    def _wait_isr(self, state: PartitionState) -> list[str]:
        deadline = time.monotonic() + self.options.shrink_timeout
        isr = state.isr
        while time.monotonic() < deadline:
            try:
                isr = partition_state(self.cluster, state.topic, state.partition).isr
            except Exception:  # noqa: BLE001 - metadata may be unavailable for a moment
                pass
            if isr == [state.leader]:
                break
            time.sleep(POLL)
        return isr

    def _resume_paused(self) -> list[str]:
        resumed = []
        for name in self.paused:
            node = self.cluster.node(name)
            if node.state == "paused":
                node.resume()
                resumed.append(name)
        self.paused = []
        return resumed

    def _start_down(self) -> list[str]:
        started = []
        for name in self.down:
            node = self.cluster.node(name)
            if not node.alive():
                node.start()
                started.append(name)
        self.down = []
        return started

    def start(self, rng: random.Random) -> Op:
        o = self.options
        detail: dict[str, Any] = {"pick": o.pick, "down_for": o.down_for}
        if o.pick == "random":
            live = [n.name for n in self.cluster.by_role(o.role) if n.alive()]
            if not live:
                raise NoTarget(f"no live {o.role} node")
            victim = rng.choice(sorted(live))
        else:
            state = self._partition(rng)
            victim = state.leader
            detail.update(topic=state.topic, partition=state.partition, leader=state.leader, isr=state.isr)
            if o.pick == "sole-in-sync":
                for name in state.followers:
                    self.cluster.node(name).pause()
                    self.paused.append(name)
                detail["paused"] = list(self.paused)
                detail["isr_before"] = shrunk = self._wait_isr(state)
                if shrunk == [victim]:
                    time.sleep(o.hold)
        node = self.cluster.node(victim)
        node.kill()
        self.down = [victim]
        self.last = victim
        try:
            detail["wiped"] = node.lose_disk()
        finally:
            if self.paused:
                detail["resumed"] = self._resume_paused()
            if o.down_for:
                time.sleep(o.down_for)
            detail["started"] = self._start_down()
        return op("disk-loss", self.name, nodes=[victim], **detail)

    def _back(self, name: str) -> float | None:
        """Seconds until the node served again (None: not within back_timeout)."""
        node = self.cluster.node(name)
        began = time.monotonic()
        while time.monotonic() - began < self.options.back_timeout:
            if node.alive() and self._serves(node):
                return round(time.monotonic() - began, 1)
            time.sleep(1.0)
        return None

    def _serves(self, node: NodeView) -> bool:
        if node.role == "kafka":
            return self._broker_back(node)
        if node.role == "osn":
            return bool(self.cluster.osn_healthy(node))
        if node.role == "controller":  # re-formatted empty, it must rejoin a quorum that has a leader
            return self.cluster.controller() is not None
        return True

    def _broker_back(self, node: NodeView) -> bool:
        """The broker's new process answers (asked alone: the killed process's registration
        outlives it by a ZooKeeper session, so the cluster lists a wiped broker before it has
        even started) and is back in the ISR of every partition it replicates: only then is
        the next fault's target one empty disk at a time."""
        from clusters.health import admin_client
        admin = admin_client(self.cluster.proxy_address(node))
        try:
            meta = admin.list_topics(timeout=5)
        except Exception:  # noqa: BLE001 - not yet
            return False
        if node.node_id not in meta.brokers:
            return False
        return all(node.node_id in p.isrs for t in meta.topics.values() for p in t.partitions.values()
                   if node.node_id in p.replicas)

    def stop(self) -> Op:
        started = self._start_down() + self._resume_paused()
        name, self.last = self.last, None
        waited = self._back(name) if name else 0.0
        return op("heal", self.name, nodes=[name] if name else [], started=started, back=waited is not None,
                  back_after_s=waited)

    def heal_all(self) -> list[Op]:
        started = self._start_down() + self._resume_paused()
        self.last = None
        return [op("heal", self.name, nodes=started)] if started else []
