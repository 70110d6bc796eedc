"""Composite faults: "mixed" (one nemesis that starts a seeded pick among several faults
and stops it), and `run_schedule`, which drives any faults at an interval without the
harness and always heals at the end, also when interrupted.
"""
from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ground.cluster_view import ClusterView
from ground.nemesis_protocol import FaultFactory
from ground.op import Op
from nemesis.fault import Fault

MIXED_DEFAULT = ["kill-broker", "pause-broker", "partition-halves", "isolate-leader", "kill-controller",
                 "link-faults"]
# txn-mixed: coordinators of transactions and of consumer groups (nemesis/targets.py), and the
# commonest broker faults under them.
TXN_MIXED_DEFAULT = ["pause-txn-coordinator", "kill-txn-coordinator", "isolate-txn-coordinator",
                     "pause-group-coordinator", "kill-group-coordinator", "isolate-group-coordinator",
                     "kill-broker", "partition-halves"]
# group-mixed: subscribed consumers under their group's coordinator killed, paused and cut,
# rebalance storms, and broker kills.
GROUP_MIXED_DEFAULT = ["kill-group-coordinator", "pause-group-coordinator", "isolate-group-coordinator",
                       "rebalance-storm", "kill-broker"]


class MixedOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    faults: list[str] = Field(default_factory=lambda: list(MIXED_DEFAULT), min_length=1)
    options: dict[str, dict[str, Any]] = Field(default_factory=dict, description="per fault name")
    seed: int = 0


class Mixed(Fault):
    """start: one of `faults`, picked by the seeded generator; stop: that one's stop;
    heal_all: every one's heal_all. Ops keep the picked fault's name in value.fault."""

    name = "mixed"

    def __init__(self, options: MixedOptions, faults: dict[str, FaultFactory], name: str = "mixed"):
        """`faults`: the registry its parts are looked up in (nemesis/registry.py passes its own)."""
        self.name = name  # "mixed", or "txn-mixed" / "group-mixed" (other default faults)
        super().__init__(options.seed)
        if {"mixed", "txn-mixed", "group-mixed"} & set(options.faults):
            raise ValueError(f"{name} cannot contain a mix (nor itself)")
        self.parts: dict[str, Any] = {}
        for name in options.faults:
            try:
                self.parts[name] = faults[name](options.options.get(name, {}))
            except KeyError:
                raise ValueError(f"unknown fault {name}") from None
        self.active: str | None = None

    def setup(self, cluster: ClusterView) -> None:
        super().setup(cluster)
        for part in self.parts.values():
            part.setup(cluster)

    def bind_recorder(self, record: Callable[[Op], Any]) -> None:
        super().bind_recorder(record)
        for part in self.parts.values():
            bind = getattr(part, "bind_recorder", None)
            if bind is not None:
                bind(record)

    def roles(self) -> set[str]:
        return set().union(*(getattr(part, "roles", set)() for part in self.parts.values()))

    def start(self, rng: random.Random) -> Op:
        if self.active is not None:
            self.stop()
        self.active = rng.choice(sorted(self.parts))
        part = self.parts[self.active]
        return part.start(part.rng_for(rng.randrange(2**31)))

    def stop(self) -> Op:
        name, self.active = self.active, None
        if name is None:
            return {"f": "heal", "value": {"fault": self.name, "nothing_active": True}}
        return self.parts[name].stop()

    def heal_all(self) -> list[Op]:
        self.active = None
        ops: list[Op] = []
        for part in self.parts.values():
            ops.extend(part.heal_all())
        return ops


def run_schedule(faults: list[Fault], *, interval: float, duration: float, seed: int,
                 record: Callable[[Op], None], sleep: Callable[[float], None] = time.sleep) -> None:
    """Start a seeded pick of `faults`, stop it `interval` later, wait `interval`, and so on
    for `duration` seconds; then heal everything. The heal runs whatever happens (an
    exception, KeyboardInterrupt), and every op goes to `record` as it is done."""
    rng = random.Random(seed)
    deadline = time.monotonic() + duration
    for fault in faults:  # ops a fault does on its own (liveness_probe.py) go to `record` too
        bind = getattr(fault, "bind_recorder", None)
        if bind is not None:
            bind(record)
    try:
        while time.monotonic() + interval <= deadline:
            fault = rng.choice(faults)
            record(fault.start(fault.rng_for(rng.randrange(2**31))))
            try:
                sleep(interval)
            finally:
                record(fault.stop())
            if time.monotonic() + interval > deadline:
                break
            sleep(interval)
    finally:
        for fault in faults:
            for done in fault.heal_all():
                record(done)
