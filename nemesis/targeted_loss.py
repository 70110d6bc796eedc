"""Jepsen's 2013 Kafka loss as ordered steps: shrink a partition's ISR by cutting its
leader off from followers (not from ZooKeeper), keep acknowledging writes with the small
ISR, then take the in-sync replicas away so that a stale follower is elected (an unclean
election), heal, restart. Acknowledged writes the stale follower never had are gone.

Before the in-sync group goes, the leader is cut from its in-sync followers too and
killed a moment later (`lag`), while they are still in the ISR: a follower is elected
cleanly without the writes the leader acknowledged alone meanwhile. Only acks=1 lets the
leader acknowledge those (acks=all waits for the whole ISR), so this step finds acks=1's
loss and costs the other settings nothing but timeouts.

The same steps run on every variant. A configuration with min.insync.replicas=1 and no
unclean election loses nothing to them: its one in-sync copy survives a SIGKILL on disk,
and no other replica may lead while it is down.

Kafka facts the steps rely on:
- a follower that fetches nothing for replica.lag.time.max.ms (10 s here) is dropped from
  the ISR by the leader, checked every half of that: the ISR shrinks 10-15 s after the cut;
- since 2.7 (ZooKeeper mode too) the leader asks the *controller* to shrink the ISR
  (AlterPartition over the inter-broker listener), so the controller must stay on the
  leader's side: a stale follower is never chosen among controllers;
- acks=all waits for the current ISR only, and min.insync.replicas bounds how small it may
  be: the in-sync group keeps min.insync.replicas members (Jepsen's 2013 run, before that
  setting existed, had the leader alone), so the writes keep being acknowledged;
- a killed broker leaves the ISR only when its ZooKeeper session expires
  (zookeeper.session.timeout.ms, 6 s here); the controller then elects a live in-sync
  follower (clean); with the whole in-sync group dead the
  controller elects a live out-of-sync replica only if unclean election is enabled,
  otherwise the partition stays leaderless until an in-sync replica returns.
"""
from __future__ import annotations

import random
import time
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ground.op import Op
from nemesis import topologies
from nemesis.fault import Fault, op
from nemesis.partition import Firewall
from nemesis.targets import (NoTarget, PartitionState, channel_topics, choose_partition, controller, hold_committing,
                             partition_state)

POLL = 0.5


class TargetedLossOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    topic: str | None = None
    partition: int | None = Field(None, ge=0)
    in_sync: int | None = Field(None, ge=1, description="replicas left in the ISR, leader included; "
                                "default the variant's min.insync.replicas")
    shrink_timeout: float = Field(20.0, ge=0, description="seconds stop waits for the ISR to shrink before the kill")
    lag: float = Field(3.0, ge=0, le=8, description="seconds the leader, cut from its in-sync followers too, "
                       "runs alone before it is killed; below replica.lag.time.max.ms, so they stay in the ISR")
    hold: float = Field(5.0, ge=0, description="seconds (at least) stop lets the shrunk ISR acknowledge writes "
                        "before the kill, so that there is something to lose whatever the interval")
    min_committed: int = Field(10, ge=0, description="records the shrunk ISR must commit (its leader's high "
                               "watermark) before the kill; the hold goes on past `hold` until it has")
    hold_timeout: float = Field(20.0, ge=0, le=60, description="seconds the hold lasts at most, waiting for "
                                "min_committed")
    election_timeout: float = Field(30.0, gt=0, description="seconds to wait for a new leader after the kill")
    seed: int = 0


class TargetedIsrShrink(Fault):
    """The steps, each answering its nemesis op: cut() -> [wait_isr_shrunk()] ->
    isolate_leader() -> kill(leader) -> [wait_new_leader()] -> kill(kept followers) ->
    [wait_new_leader()] -> heal() -> restart(). In a run, `start` is the cut and `stop` the
    rest: it first waits (shrink_timeout) for the ISR to shrink if the interval was too
    short for it, lets the shrunk ISR acknowledge writes for `hold` seconds, and answers
    one heal op listing every step it took (the harness records one op per invoke). The
    hold goes on (up to `hold_timeout`) until the shrunk ISR has committed `min_committed`
    records: what the unclean election is to lose, counted on the leader, not left to the
    clients' pace; the leader's kill op says how many (`committed_while_shrunk`)."""

    name = "targeted-isr-shrink"

    def __init__(self, options: TargetedLossOptions):
        super().__init__(options.seed)
        self.options = options
        self.plan: dict[str, Any] | None = None  # what cut() chose; the later steps act on it
        self.killed: list[str] = []

    # -- the steps --------------------------------------------------------------
    def choose(self, rng: random.Random) -> dict[str, Any]:
        """Leader, in-sync group and stale followers of the partition, from live state."""
        o = self.options
        in_sync = o.in_sync or self.cluster.variant.kafka.min_insync_replicas
        topic, part = choose_partition(self.cluster, rng, o.topic, o.partition, exclude=channel_topics(self.cluster),
                                       fit=lambda s: _spares_a_follower(s, in_sync))
        state = partition_state(self.cluster, topic, part)
        if state.leader is None:
            raise RuntimeError(f"{topic}/{part} has no leader")
        boss = controller(self.cluster)
        followers = state.in_sync_followers
        # Keep the controller on the leader's side (see the module docstring).
        keep = sorted(followers, key=lambda f: f != boss)[:max(0, in_sync - 1)]
        stale = [f for f in followers if f not in keep]
        if not stale:
            raise RuntimeError(f"{topic}/{part}: replicas {state.replicas}, ISR {state.isr}: no follower "
                               f"left to go stale with {in_sync} kept in sync")
        return {"topic": topic, "partition": part, "leader": state.leader, "in_sync": [state.leader, *keep],
                "stale": stale, "controller": boss}

    def cut(self, rng: random.Random) -> Op:
        plan = self.choose(rng)
        names = Firewall(self.cluster).names()
        graph = topologies.separate(names, plan["in_sync"], plan["stale"])
        self.plan = plan
        Firewall(self.cluster).apply(graph)
        return op("partition", self.name, **topologies.describe(graph, "leader-from-followers"), **plan)

    def state(self, via: str | None = None) -> PartitionState:
        assert self.plan is not None
        return partition_state(self.cluster, self.plan["topic"], self.plan["partition"], via)

    def wait_isr_shrunk(self, timeout: float = 40.0) -> PartitionState:
        """Until the ISR holds the in-sync group only (bounded); the last state seen. Asked
        of the leader: it shrank the ISR, and the stale followers, cut from the controller
        in ZooKeeper mode, would answer with the ISR from before the cut."""
        assert self.plan is not None
        deadline = time.monotonic() + timeout
        state = None
        while True:
            try:
                state = self.state(via=self.plan["leader"])
            except NoTarget:  # the leader's own answer did not come: ask again
                pass
            if state is not None and set(state.isr) <= set(self.plan["in_sync"]):
                return state
            if time.monotonic() > deadline:
                return state if state is not None else self.state()
            time.sleep(POLL)

    def isolate_leader(self) -> Op:
        """Cut the leader from its in-sync followers as well (ZooKeeper stays reachable);
        they stay cut from the stale ones, so none can catch another up."""
        assert self.plan is not None
        leader, *kept = self.plan["in_sync"]
        graph = topologies.grudge(Firewall(self.cluster).names(), [[leader], kept, self.plan["stale"]])
        Firewall(self.cluster).apply(graph)
        return op("partition", self.name, **topologies.describe(graph, "leader-alone"))

    def kill(self, names: list[str]) -> Op:
        assert self.plan is not None
        for name in names:
            self.cluster.node(name).kill()
            self.killed.append(name)
        return op("kill", self.name, nodes=names, topic=self.plan["topic"], partition=self.plan["partition"])

    def wait_new_leader(self, timeout: float | None = None, excluded: list[str] | None = None) -> str | None:
        """Until a broker not in `excluded` (default the in-sync group) leads the partition,
        or the timeout."""
        assert self.plan is not None
        excluded = self.plan["in_sync"] if excluded is None else excluded
        deadline = time.monotonic() + (timeout or self.options.election_timeout)
        while time.monotonic() < deadline:
            try:
                leader = self.state().leader
            except Exception:  # noqa: BLE001 - metadata may be unavailable for a moment
                leader = None
            if leader is not None and leader not in excluded:
                return leader
            time.sleep(POLL)
        return None

    def heal(self) -> Op:
        return op("heal", self.name, **Firewall(self.cluster).heal())

    def restart(self) -> Op:
        """Start the killed brokers, the last killed (the last in-sync) first."""
        started = []
        for name in reversed(self.killed):
            node = self.cluster.node(name)
            if not node.alive():
                node.start()
                started.append(name)
        self.killed = []
        return op("start", self.name, nodes=started)

    # -- harness verbs ----------------------------------------------------------
    def start(self, rng: random.Random) -> Op:
        return self.cut(rng)

    def stop(self) -> Op:
        """Hold the shrunk ISR, leave the leader alone and kill it, kill the rest of the
        in-sync group; after each kill wait (bounded) for an election; heal, restart."""
        steps: list[Op] = []
        elected = None
        try:
            if self.plan is not None:
                o = self.options
                seen = self.wait_isr_shrunk(o.shrink_timeout)
                shrunk, committed = seen.isr, None
                if set(shrunk) <= set(self.plan["in_sync"]):
                    committed = hold_committing(self.cluster, seen, o.hold, o.min_committed, o.hold_timeout)
                leader, *kept = self.plan["in_sync"]
                if kept and self.options.lag:
                    steps.append(self.isolate_leader())
                    time.sleep(self.options.lag)
                steps.append(self.kill([leader]))
                steps[-1]["value"]["committed_while_shrunk"] = committed
                if kept:  # a kept follower takes over cleanly, then goes too
                    steps[-1]["value"].update(isr_before=shrunk, elected=self.wait_new_leader(excluded=[leader]))
                    steps.append(self.kill(kept))
                elected = self.wait_new_leader()
                steps[-1]["value"].update(isr_before=shrunk, elected=elected)
        finally:
            steps.append(self.heal())
            steps.append(self.restart())
            plan, self.plan = self.plan, None
        return op("heal", self.name, steps=steps, elected=elected, unclean=elected is not None,
                  **({k: plan[k] for k in ("topic", "partition")} if plan else {}))

    def heal_all(self) -> list[Op]:
        if self.plan is None and not self.killed:
            healed = self.heal()
            return [] if healed["value"]["connected"] else [healed]
        self.plan = None
        return [self.heal(), self.restart()]


def _spares_a_follower(state: PartitionState, in_sync: int) -> bool:
    """Whether the partition has a leader and more in-sync followers than the in-sync group
    keeps (`in_sync`, leader included): one at least is left to go stale."""
    return state.leader is not None and len(state.in_sync_followers) >= in_sync
