"""Process faults: SIGKILL and restart, SIGSTOP (pause) and resume, of brokers, ZooKeeper
nodes, KRaft controllers and OSNs, through the node verbs of clusters/node.py.

A killed container that starts again gets a fresh network namespace: partition rules in
it are gone, but its peers still drop it (partition.py writes rules on both ends).
"""
from __future__ import annotations

import random
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from harness.nemesis_api import register_fault
from harness.op import Op
from nemesis.fault import Fault, op
from nemesis.targets import ROLE_PICKS, TargetSpec, resolve, roles_hit

Action = Literal["kill", "pause"]
UNDO = {"kill": "start", "pause": "resume"}


class ProcessOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    action: Action = "kill"
    target: TargetSpec = TargetSpec()
    seed: int = 0


def _down(node: Any) -> bool:
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
        undo = UNDO[self.options.action]
        done = self._undo(self.touched)
        self.touched = []
        return op(undo, self.name, nodes=done)

    def _undo(self, names: list[str]) -> list[str]:
        done = []
        for name in names:
            node = self.cluster.node(name)
            if node.state == "paused":
                node.resume()
                done.append(name)
            elif _down(node):
                node.start()
                done.append(name)
        return done

    def roles(self) -> set[str]:
        return roles_hit(self.options.target)

    def heal_all(self) -> list[Op]:
        target = self.options.target
        # "controller" is a broker in ZooKeeper mode and a controller node in KRaft.
        roles = {target.role} if target.pick in ROLE_PICKS else \
            {"kafka", "controller"} if target.pick == "controller" else {"kafka"}
        names = sorted({n.name for role in roles for n in self.cluster.by_role(role)} | set(self.touched))
        done = self._undo(names)
        self.touched = []
        return [op(UNDO[self.options.action], self.name, nodes=done)] if done else []


def _factory(name: str, action: Action, **target: Any):
    def make(options: dict[str, Any]) -> ProcessNemesis:
        merged = {"action": action, **options, "target": {**target, **options.get("target", {})}}
        return ProcessNemesis(name, ProcessOptions.model_validate(merged))
    return make


register_fault("kill-broker", _factory("kill-broker", "kill", role="kafka"))
register_fault("kill-leader", _factory("kill-leader", "kill", pick="leader"))
register_fault("kill-controller", _factory("kill-controller", "kill", pick="controller"))
register_fault("pause-broker", _factory("pause-broker", "pause", role="kafka"))
register_fault("pause-controller", _factory("pause-controller", "pause", pick="controller"))
register_fault("kill-osn", _factory("kill-osn", "kill", role="osn"))
register_fault("pause-osn", _factory("pause-osn", "pause", role="osn"))
register_fault("kill-zookeeper", _factory("kill-zookeeper", "kill", role="zookeeper"))
register_fault("pause-zookeeper", _factory("pause-zookeeper", "pause", role="zookeeper"))
register_fault("kill-kraft-controller", _factory("kill-kraft-controller", "kill", role="controller"))
register_fault("pause-kraft-controller", _factory("pause-kraft-controller", "pause", role="controller"))
# Compound process faults, for random schedules (harness.random_schedule): every broker killed
# and then started together, a majority paused, a minority killed or paused.
register_fault("kill-all-brokers", _factory("kill-all-brokers", "kill", role="kafka", pick="all"))
register_fault("pause-all-brokers", _factory("pause-all-brokers", "pause", role="kafka", pick="all"))
register_fault("pause-majority", _factory("pause-majority", "pause", role="kafka", pick="majority"))
register_fault("kill-minority", _factory("kill-minority", "kill", role="kafka", pick="minority"))
register_fault("pause-minority", _factory("pause-minority", "pause", role="kafka", pick="minority"))
# Transactions (issue 17): the broker coordinating a kafka-txn producer's transactional.id (the
# leader of its __transaction_state partition), or its consumers' group (of __consumer_offsets).
for _action in ("kill", "pause"):
    for _coordinator in ("txn-coordinator", "group-coordinator"):
        register_fault(f"{_action}-{_coordinator}", _factory(f"{_action}-{_coordinator}", _action, pick=_coordinator))
# The fault kind of scenarios/txn-coordinator-pause.toml.
register_fault("txn-coordinator-pause", _factory("txn-coordinator-pause", "pause", pick="txn-coordinator"))
