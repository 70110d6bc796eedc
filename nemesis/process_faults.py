"""Process faults: SIGKILL and restart, SIGSTOP (pause) and resume, of brokers, ZooKeeper
nodes, KRaft controllers and OSNs, through the node verbs of clusters/node.py.

A killed container that starts again gets a fresh network namespace: partition rules in
it are gone, but its peers still drop it (partition.py writes rules on both ends).
"""
from __future__ import annotations

import random
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from ground.cluster_view import NodeView
from ground.op import Op
from nemesis.fault import Fault, op
from nemesis.targets import ROLE_PICKS, TargetSpec, resolve, roles_hit

Action = Literal["kill", "pause"]
UNDO = {"kill": "start", "pause": "resume"}


class ProcessOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    action: Action = "kill"
    target: TargetSpec = TargetSpec()
    seed: int = 0


def _down(node: NodeView) -> bool:
    return node.state in ("exited", "created", "dead")


class ProcessNemesis(Fault):
    """start: kill or pause the target nodes; stop: start or resume them; heal_all: resume
    every paused and start every stopped node of the target's role."""

    def __init__(self, name: str, options: ProcessOptions):
        self.name = name
        super().__init__(options.seed)
        self.options = options
        self.touched: list[str] = []

    def start(self, rng: random.Random) -> Op:
        victims, detail = resolve(self.cluster, self.options.target, rng)
        action = self.options.action
        self.touched = sorted(set(self.touched) | set(victims))
        for name in victims:
            node = self.cluster.node(name)
            if action == "kill":
                node.kill()
            else:
                node.pause()
        return op(action, self.name, nodes=victims, **detail)

    def stop(self) -> Op:
        done = self._undo(self.touched)
        self.touched = []
        return op(UNDO[self.options.action], self.name, nodes=[n for names in done.values() for n in names])

    def _undo(self, names: list[str]) -> dict[str, list[str]]:
        """Resume the paused and start the stopped among `names`: what was done, by verb."""
        done: dict[str, list[str]] = {"resume": [], "start": []}
        for name in names:
            node = self.cluster.node(name)
            if node.state == "paused":
                node.resume()
                done["resume"].append(name)
            elif _down(node):
                node.start()
                done["start"].append(name)
        return done

    def roles(self) -> set[str]:
        return roles_hit(self.options.target)

    def heal_all(self) -> list[Op]:
        target = self.options.target
        # "controller" is a broker in ZooKeeper mode and a controller node in KRaft.
        roles = {target.role} if target.pick in ROLE_PICKS else \
            {"kafka", "controller"} if target.pick == "controller" else roles_hit(target)
        names = sorted({n.name for role in roles for n in self.cluster.by_role(role)} | set(self.touched))
        # One op per verb done, named for what happened to the nodes, not for this fault's
        # action: a pause fault's heal also starts a broker another fault killed (a mixed
        # schedule's last fault), and the history must say it was started, not resumed.
        done = self._undo(names)
        self.touched = []
        return [op(verb, self.name, nodes=nodes) for verb, nodes in done.items() if nodes]


def process_fault(name: str, action: Action, **target: Any):
    def make(options: dict[str, Any]) -> ProcessNemesis:
        merged = {"action": action, **options, "target": {**target, **options.get("target", {})}}
        return ProcessNemesis(name, ProcessOptions.model_validate(merged))
    return make
