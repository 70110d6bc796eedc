"""The noop workload and noop fault: the harness exercised without any cluster.

Tests and bench/recorder.py use them; they also show the smallest correct Client,
Workload and Nemesis. The client answers every op ok (optionally after a delay, or
hanging on every n-th op so timeouts can be tested); the nemesis records a fault op and
a heal op and touches nothing.
"""
from __future__ import annotations

import itertools
import random
import time
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from harness.generator import Seq, Source
from harness.nemesis_api import register_fault
from harness.op import OK, Op
from harness.workload import Workload, register_workload


class NoopOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    latency: float = Field(0.0, ge=0, description="seconds each op takes")
    hang_every: int = Field(0, ge=0, description="every n-th op (by value) hangs; 0 = never")
    hang_seconds: float = Field(30.0, gt=0)
    final_reads: int = Field(2, ge=0, description="final-read ops after the heal")


class NoopClient:
    def __init__(self, options: NoopOptions = NoopOptions()):
        self.options = options

    def open(self, cluster: Any, process: int) -> "NoopClient":
        return NoopClient(self.options)

    def invoke(self, op: Op) -> Op:
        o = self.options
        value = op.get("value")
        if o.hang_every and isinstance(value, int) and value % o.hang_every == o.hang_every - 1:
            time.sleep(o.hang_seconds)
        elif o.latency:
            time.sleep(o.latency)
        return {"type": OK, "value": value}

    def close(self) -> None:
        pass


def noop_workload(options: dict[str, Any], variant: Any = None) -> Workload:
    opts = NoopOptions.model_validate(options)

    def generator(rng: random.Random) -> Source:
        counter = itertools.count()
        return Source(lambda r: {"f": "write" if r.random() < 0.5 else "read", "value": next(counter)}, rng)

    def final_generator() -> Seq:
        return Seq({"f": "final-read", "value": {"part": i}} for i in range(opts.final_reads))

    return Workload(name="noop", client=NoopClient(opts), generator=generator,
                    final_generator=final_generator, needs_cluster=False)


class NoopNemesis:
    needs_cluster = False

    def __init__(self, options: dict[str, Any] | None = None):
        if options:
            raise ValueError(f"noop takes no options (got {', '.join(sorted(options))})")
        self.active = False

    def setup(self, cluster: Any) -> None:
        pass

    def invoke(self, op: Op) -> Op:
        if op["f"] == "start":
            self.active = True
            return {"f": "noop", "value": {"fault": "noop"}}
        self.active = False
        return {"f": "heal", "value": {"fault": "noop"}}

    def heal_all(self) -> list[Op]:
        if not self.active:
            return []
        self.active = False
        return [{"f": "heal", "value": {"fault": "noop"}}]


register_workload("noop", noop_workload)
register_fault("noop", NoopNemesis)
