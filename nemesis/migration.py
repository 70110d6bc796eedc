"""kafka-to-raft: the migration of Fabric's orderers from Kafka to Raft (clusters/migration.py)
as a fault of a scenario, so that the workloads run through it and faults can meet its steps.

- start: the whole migration, its steps recorded as they end (ops "migration", value
  {"step", "seconds", ...}; a step that failed carries its error); the start op says whether
  it completed. A second start does nothing: a migration happens once.
- stop: nothing to undo (a migration is one-way; the guide's rollback is from a backup).
- heal_all: starts the orderers found down; when the migration did not complete, Kafka's
  nodes too (the network is then still Kafka-based, in maintenance mode where it stopped).

Options: `kafka_stop` "after-orderers" (the guide) or "with-orderers" (the guide forbids it:
brokers stopped at the same time as the orderers); `kill_broker_in_maintenance`: SIGKILL one
broker (the run's seed picks it) once the channels are in maintenance mode, before the stop;
`kill_orderer_in_restart`: SIGKILL one orderer (the seed picks it) just after the orderers were
started as Raft, and start it again `restart_after` seconds later (an operator's restart);
`hold_clients`: no client op from before maintenance mode until the migration ended, the
open ones ended first (ground/client_gate.py): the guide's downtime, as an operator takes it.
Without it, clients keep sending through the migration, and txs answered SUCCESS just before
maintenance mode are dropped (docs/findings.md).
"""
from __future__ import annotations

import random
import time
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ground.client_gate import ClientGate
from ground.op import Op
from nemesis.fault import Fault, op

NAME = "kafka-to-raft"


class MigrationOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    kafka_stop: Literal["after-orderers", "with-orderers"] = "after-orderers"
    kill_broker_in_maintenance: bool = False
    kill_orderer_in_restart: bool = False
    restart_after: float = Field(5.0, ge=0, le=120)
    hold_clients: bool = False
    drain_timeout: float = Field(30.0, gt=0, le=600, description="hold_clients: seconds to wait for open ops")
    seed: int = 0


class KafkaToRaft(Fault):
    name = NAME
    changes_cluster = True  # a migrated network is Raft-based: a suite's next run boots afresh

    def __init__(self, options: MigrationOptions):
        super().__init__(options.seed)
        self.options = options
        self.started = False
        self.completed = False
        self.gate: ClientGate | None = None

    def bind_client_gate(self, gate: ClientGate) -> None:
        self.gate = gate

    def roles(self) -> set[str]:
        return {"osn", "kafka"}

    def start(self, rng: random.Random) -> Op:
        from clusters.migration import STARTED_AS_RAFT, Migration, MigrationFailed

        if self.started:
            return op("migrate", self.name, already=True, completed=self.completed)
        self.started = True
        killed: list[str] = []

        def between(step: str) -> None:
            if step == "stop" and self.options.kill_broker_in_maintenance:
                broker = rng.choice(self.cluster.brokers)
                broker.kill()
                killed.append(broker.name)
                self._note(op("kill", self.name, nodes=[broker.name], during="maintenance"))
            if step == STARTED_AS_RAFT and self.options.kill_orderer_in_restart:
                orderer = rng.choice(self.cluster.osns)
                orderer.kill()
                killed.append(orderer.name)
                self._note(op("kill", self.name, nodes=[orderer.name], during="restart-as-raft"))
                time.sleep(self.options.restart_after)
                orderer.start()
                self._note(op("start", self.name, nodes=[orderer.name], during="restart-as-raft"))

        held = self.options.hold_clients and self.gate is not None
        try:
            if held:
                assert self.gate is not None
                still_open = self.gate.hold(self.options.drain_timeout)
                self._note({"f": "migration", "value": {"fault": self.name, "step": "clients-held",
                                                        "still_open": still_open}})
            try:
                Migration(self.cluster, self._note, kafka_stop=self.options.kafka_stop, between=between).run()
            except MigrationFailed as exc:
                return {**op("migrate", self.name, completed=False, kafka_stop=self.options.kafka_stop,
                             killed=killed), "error": str(exc)}
            self.completed = True
            return op("migrate", self.name, completed=True, kafka_stop=self.options.kafka_stop, killed=killed)
        finally:
            if held:
                assert self.gate is not None
                self.gate.release()
                self._note({"f": "migration", "value": {"fault": self.name, "step": "clients-released"}})

    def _note(self, entry: dict[str, Any]) -> None:
        if self.record is not None:
            self.record(entry)

    def stop(self) -> Op:
        return op("stop", self.name, note="a migration is not undone")

    def heal_all(self) -> list[Op]:
        if self.cluster is None:
            return []
        nodes = list(self.cluster.osns) + ([] if self.completed else
                                           [*self.cluster.zookeepers, *self.cluster.controllers,
                                            *self.cluster.brokers])
        started = []
        for node in nodes:
            if node.state in ("exited", "created", "dead"):
                node.start()
                started.append(node.name)
        return [op("start", self.name, nodes=started)] if started else []
