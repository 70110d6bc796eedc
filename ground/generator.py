"""Generators decide what happens when (Jepsen's jepsen.generator, pull model).

A worker thread that is free asks the run's one generator for an op, under the runner's
generator lock: `gen.op(ctx)` answers an op template ({"f", "value", ...}), `Pending`
(nothing for this thread yet; ask again at `until` or when an op completes) or None
(exhausted). Ops are emitted at the moment they are due, never ahead, so a worker never
holds a future op.

Randomness comes only from the `random.Random` each generator is given, derived from
the run's seed and a label (`derive_rng`), so the ops a generator emits, in the order it
is asked, are the same for the same seed whatever the thread timing.
"""
from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, Union

from ground.op import NEMESIS, Op

NS = 1_000_000_000


@dataclass(frozen=True, slots=True)
class Context:
    """What a generator may look at: the time (ns since run start), who asks, how many
    ops are in flight on other threads, and the asking thread's process (Jepsen's: a
    thread goes on as a new process, with new clients, after an indeterminate op; a
    workload whose clients hold state, as a consumer's positions, starts it afresh)."""

    now: int
    thread: int | str  # a worker number, or "nemesis"
    busy: int = 0
    process: int | str | None = None  # None: not known (the thread's own number is used)

    @property
    def client_process(self) -> int | str:
        return self.thread if self.process is None else self.process


@dataclass(frozen=True, slots=True)
class Pending:
    """Nothing for this thread now; `until` (ns) is when to ask again, None = on the next
    completion (or a short poll)."""

    until: int | None = None


Answer = Union[Op, Pending, None]


class Generator(Protocol):
    def op(self, ctx: Context) -> Answer: ...


def derive_rng(seed: int, label: str) -> random.Random:
    """An independent, reproducible stream per generator (string seeds hash with SHA-512)."""
    return random.Random(f"{seed}/{label}")


def _earliest(a: Pending, b: Pending) -> Pending:
    if a.until is None:
        return b if b.until is not None else a
    if b.until is None:
        return a
    return a if a.until <= b.until else b


class Source:
    """An endless op source: `make(rng)` builds each op (a workload's op mix lives here)."""

    def __init__(self, make: Callable[[random.Random], Op], rng: random.Random):
        self.make, self.rng = make, rng

    def op(self, ctx: Context) -> Answer:
        return self.make(self.rng)


class Seq:
    """These ops, in order, then exhausted (final reads, a heal)."""

    def __init__(self, ops: Iterable[Op]):
        self._ops = iter(ops)

    def op(self, ctx: Context) -> Answer:
        nxt = next(self._ops, None)
        return dict(nxt) if nxt is not None else None


def once(op: Op) -> Seq:
    return Seq([op])


class Mix:
    """Each op from one of `gens`, picked at random by weight; exhausted gens drop out."""

    def __init__(self, gens: Sequence[Generator], rng: random.Random, weights: Sequence[float] | None = None):
        self.gens = list(gens)
        self.weights = list(weights) if weights is not None else [1.0] * len(self.gens)
        self.rng = rng

    def op(self, ctx: Context) -> Answer:
        while self.gens:
            i = self.rng.choices(range(len(self.gens)), self.weights)[0] if len(self.gens) > 1 else 0
            answer = self.gens[i].op(ctx)
            if answer is not None:
                return answer
            del self.gens[i], self.weights[i]
        return None


class Stagger:
    """Spaces ops at a target aggregate rate: each gap is uniform in [0, 2/rate), counted from
    when the previous op left (Jepsen's stagger), so a slow system is not flooded later."""

    def __init__(self, rate: float, gen: Generator, rng: random.Random):
        if rate <= 0:
            raise ValueError("rate must be > 0")
        self.gen, self.rng = gen, rng
        self.max_gap = 2 * NS / rate
        self.next_at: int | None = None

    def op(self, ctx: Context) -> Answer:
        if self.next_at is not None and ctx.now < self.next_at:
            return Pending(self.next_at)
        answer = self.gen.op(ctx)
        if isinstance(answer, dict):
            self.next_at = ctx.now + int(self.rng.random() * self.max_gap)
        return answer


class Limit:
    """At most n ops."""

    def __init__(self, n: int, gen: Generator):
        self.left, self.gen = n, gen

    def op(self, ctx: Context) -> Answer:
        if self.left <= 0:
            return None
        answer = self.gen.op(ctx)
        if isinstance(answer, dict):
            self.left -= 1
        return answer


class TimeLimit:
    """Ops until `seconds` after the first time it is asked."""

    def __init__(self, seconds: float, gen: Generator):
        self.span, self.gen = int(seconds * NS), gen
        self.deadline: int | None = None

    def op(self, ctx: Context) -> Answer:
        if self.deadline is None:
            self.deadline = ctx.now + self.span
        if ctx.now >= self.deadline:
            return None
        answer = self.gen.op(ctx)
        if isinstance(answer, Pending):
            until = self.deadline if answer.until is None else min(answer.until, self.deadline)
            return Pending(until)
        return answer


class Sleep:
    """Nothing for anyone for `seconds` after first asked, then exhausted (recovery wait)."""

    def __init__(self, seconds: float):
        self.span = int(seconds * NS)
        self.end: int | None = None

    def op(self, ctx: Context) -> Answer:
        if self.end is None:
            self.end = ctx.now + self.span
        return Pending(self.end) if ctx.now < self.end else None


class OnThreads:
    """Only threads for which `accepts(thread)` is true get ops from `gen`; others wait
    until it is exhausted (Jepsen's clients / nemesis)."""

    def __init__(self, accepts: Callable[[int | str], bool], gen: Generator):
        self.accepts, self.gen = accepts, gen
        self.done = False

    def op(self, ctx: Context) -> Answer:
        if self.done:
            return None
        if not self.accepts(ctx.thread):
            return Pending()
        answer = self.gen.op(ctx)
        if answer is None:
            self.done = True
        return answer


def clients(gen: Generator) -> OnThreads:
    return OnThreads(lambda thread: thread != NEMESIS, gen)


def nemesis(gen: Generator) -> OnThreads:
    return OnThreads(lambda thread: thread == NEMESIS, gen)


class AnyOf:
    """The first of `gens` that has an op for the asking thread; exhausted when all are."""

    def __init__(self, *gens: Generator):
        self.gens = list(gens)

    def op(self, ctx: Context) -> Answer:
        wait: Pending | None = None
        for gen in list(self.gens):
            answer = gen.op(ctx)
            if answer is None:
                self.gens.remove(gen)
            elif isinstance(answer, Pending):
                wait = answer if wait is None else _earliest(wait, answer)
            else:
                return answer
        return wait


class Phases:
    """Named phases run one after the other; a phase starts only once every op of the one
    before has completed (Jepsen's phases/synchronize)."""

    def __init__(self, *phases: tuple[str, Generator]):
        self.phases = list(phases)
        self.i = 0

    @property
    def name(self) -> str:
        return self.phases[self.i][0] if self.i < len(self.phases) else "done"

    def op(self, ctx: Context) -> Answer:
        while self.i < len(self.phases):
            answer = self.phases[self.i][1].op(ctx)
            if answer is not None:
                return answer
            if ctx.busy > 0:
                return Pending()
            self.i += 1
        return None


class Tag:
    """Marks each op with the workload it belongs to, so the runner hands it to that
    workload's client; the field is recorded (extra fields are allowed in version 1)."""

    def __init__(self, workload: str, gen: Generator):
        self.workload, self.gen = workload, gen

    def op(self, ctx: Context) -> Answer:
        answer = self.gen.op(ctx)
        if isinstance(answer, dict):
            answer["workload"] = self.workload
        return answer


class Concat:
    """All ops of the first generator, then of the next, without waiting in between."""

    def __init__(self, *gens: Generator):
        self.gens = list(gens)

    def op(self, ctx: Context) -> Answer:
        while self.gens:
            answer = self.gens[0].op(ctx)
            if answer is not None:
                return answer
            self.gens.pop(0)
        return None
