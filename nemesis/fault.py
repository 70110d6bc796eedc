"""What every fault of nemesis/ has in common: the harness's Nemesis protocol
(harness/nemesis_api.py) on top of three verbs, `start(rng)`, `stop()` and `heal_all()`.

Each verb answers the nemesis op(s) to record, {"f": ..., "value": {...}}; the value names
the fault and the nodes it touched ("nodes", "cut", "components", as reports read them).
A fault that also acts on its own between its verbs (liveness_probe.py's prober restarts
nodes from its own threads) records those ops through `record`, which the driver binds
with `bind_recorder` (run_schedule does; so should the harness's runner).
"""
from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from ground.cluster_view import ClusterView
from ground.op import Op


def op(f: str, fault: str, **value: Any) -> Op:
    return {"f": f, "value": {"fault": fault, **value}}


class Fault:
    """A fault that can be started, stopped, and undone completely (heal_all). The random
    choices of one start (which node, which partition) come from `rng_for(seed)`, where
    `seed` is what the run's fault schedule sends with that start (drawn from the run's
    seed): each run and each window draw anew, and a run's seed replays them. The options' `seed` is mixed in, and
    alone decides where no schedule gives one (a fault driven by hand)."""

    needs_cluster = True
    name = "fault"

    def __init__(self, seed: int = 0):
        self.seed = seed
        self.rng = random.Random(f"{self.name}/{seed}")
        self.cluster: ClusterView | None = None
        # Records one nemesis op at once, from any thread; None until bound.
        self.record: Callable[[Op], Any] | None = None

    # -- harness protocol ---------------------------------------------------------
    def setup(self, cluster: ClusterView) -> None:
        self.cluster = cluster

    def bind_recorder(self, record: Callable[[Op], Any]) -> None:
        """Optional part of the protocol: where ops the fault does on its own, outside
        start / stop / heal_all, are recorded (thread-safe, as the history's Recorder)."""
        self.record = record

    def rng_for(self, seed: int | None) -> random.Random:
        """The generator of one start's choices: drawn from the schedule's `seed` and the
        options' seed; the fault's own, seeded from its options alone, where `seed` is None.
        (With the options' alone, every run of a scenario made the same first choices
        whatever its seed: each mixed run started with the same fault.)"""
        return self.rng if seed is None else random.Random(f"{self.name}/{self.seed}/{seed}")

    def invoke(self, request: Op) -> Op:
        if request["f"] == "start":
            return self.start(self.rng_for(request.get("seed")))
        if request["f"] == "stop":
            return self.stop()
        raise ValueError(f"{self.name}: no such nemesis op {request['f']!r} (start or stop)")

    # -- the verbs --------------------------------------------------------------
    def start(self, rng: random.Random) -> Op:
        raise NotImplementedError

    def stop(self) -> Op:
        raise NotImplementedError

    def heal_all(self) -> list[Op]:
        raise NotImplementedError

    def roles(self) -> set[str]:
        """The node roles this fault acts on by name (zookeeper, controller, kafka, osn):
        a variant without nodes of one of them cannot run it (checked before boot)."""
        return set()
