"""The noop workload and noop fault: the harness exercised without any cluster.

Tests and bench/recorder.py use them; they also show the smallest correct Client,
Workload and Nemesis. The client answers every op ok (optionally after a delay, or
hanging on every n-th send so timeouts can be tested). Its ops are format-1 `send` and
`final-read` ops over a log kept in memory, so `ordeal check` finds a noop history
valid; the nemesis records a fault op and a heal op and touches nothing.
"""
from __future__ import annotations

import itertools
import random
import threading
import time
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ground.cluster_view import ClusterView
from ground.generator import Seq, Source
from ground.op import OK, Op
from ground.workload import Workload


class NoopOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    topics: int = Field(1, ge=1, le=100)
    partitions: int = Field(2, ge=1, le=100)
    latency: float = Field(0.0, ge=0, description="seconds each op takes")
    hang_every: int = Field(0, ge=0, description="every n-th send (by value) hangs; 0 = never")
    hang_seconds: float = Field(30.0, gt=0)
    asynchronous: bool = Field(False, description="sends are started with invoke_async and answered from a timer "
                                                  "thread after `latency`; a hanging send is never answered")


class MemoryLog:
    """Topic-partitions in memory: sends append, final reads return everything."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._records: dict[tuple[str, int], list[Any]] = {}

    def append(self, topic: str, partition: int, value: Any) -> int:
        with self._lock:
            log = self._records.setdefault((topic, partition), [])
            log.append(value)
            return len(log) - 1

    def read(self, topic: str, partition: int) -> list[dict[str, Any]]:
        with self._lock:
            values = list(self._records.get((topic, partition), []))
        return [{"topic": topic, "partition": partition, "offset": o, "value": v} for o, v in enumerate(values)]


class NoopClient:
    """Answers ok. With a log, sends land in it and final reads read it; without one
    (bench/recorder.py) every op is answered ok with its own value."""

    def __init__(self, options: NoopOptions = NoopOptions(), log: MemoryLog | None = None):
        self.options, self.log = options, log
        self.async_fs = frozenset({"send"}) if options.asynchronous else frozenset()

    def open(self, cluster: ClusterView, process: int) -> "NoopClient":
        return NoopClient(self.options, self.log)

    def _hangs(self, op: Op) -> bool:
        o, value = self.options, op.get("value")
        n = value.get("value") if isinstance(value, dict) else value
        return bool(o.hang_every) and op.get("f") == "send" and isinstance(n, int) and n % o.hang_every == o.hang_every - 1

    def invoke(self, op: Op) -> Op:
        if self._hangs(op):
            time.sleep(self.options.hang_seconds)
        elif self.options.latency:
            time.sleep(self.options.latency)
        return self._answer(op)

    def invoke_async(self, op: Op, done: Callable[[Op], None]) -> None:
        """Like a producer's delivery report: the answer comes later, from another thread
        (never, for a hanging send)."""
        if self._hangs(op):
            return
        timer = threading.Timer(self.options.latency, lambda: done(self._answer(op)))
        timer.daemon = True
        timer.start()

    def _answer(self, op: Op) -> Op:
        o, value, f = self.options, op.get("value"), op.get("f")
        if self.log is None:
            return {"type": OK, "value": value}
        if f == "send":
            partition = int(value["key"].removeprefix("k")) % o.partitions
            offset = self.log.append(value["topic"], partition, value["value"])
            return {"type": OK, "value": {**value, "partition": partition, "offset": offset}}
        records = self.log.read(value["topic"], value["partition"])
        return {"type": OK, "value": {**value, "records": records, "high_watermark": len(records)}}

    def close(self) -> None:
        pass


def noop_workload(options: dict[str, Any], variant: Any = None) -> Workload:
    opts = NoopOptions.model_validate(options)

    def generator(rng: random.Random) -> Source:
        values = itertools.count()  # unique over all topics, as format 1 asks per topic
        return Source(lambda r: {"f": "send", "value": {"topic": f"t{r.randrange(opts.topics)}",
                                                        "key": f"k{r.randrange(8)}", "value": next(values)}}, rng)

    def final_generator() -> Seq:
        return Seq({"f": "final-read", "value": {"topic": f"t{t}", "partition": p}}
                   for t in range(opts.topics) for p in range(opts.partitions))

    return Workload(name="noop", client=NoopClient(opts, MemoryLog()), generator=generator,
                    final_generator=final_generator, needs_cluster=False)
