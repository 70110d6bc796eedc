"""`one-at-a-time` and `in-order`: one fault started, stopped `interval` later, then the
next. It finds what a single fault breaks (harness/schedules/random_faults.py finds what
faults together break)."""
from __future__ import annotations

import random
from collections.abc import Sequence

from ground.generator import NS, Answer, Context, Pending


class FaultSchedule:
    """Start a fault every `interval` seconds and stop it `interval` later, then the next:
    ops {"f": "start" | "stop", "fault": name, "seed": int}, the fault picked at random
    from `faults`, or with `in_order` the next of `faults` as listed, then the first again
    (a fault that must come first: the migration, then faults of the network it made);
    `seed` feeds the nemesis's own random choices (which node), so those are reproducible
    from the run's seed too."""

    def __init__(self, faults: Sequence[str], interval: float, rng: random.Random, in_order: bool = False):
        self.faults, self.rng, self.in_order = list(faults), rng, in_order
        self.interval = int(interval * NS)
        self.next_at: int | None = None
        self.active: str | None = None
        self.started = 0

    def op(self, ctx: Context) -> Answer:
        if not self.faults:
            return None
        if self.next_at is None:
            self.next_at = ctx.now + self.interval
        if ctx.now < self.next_at:
            return Pending(self.next_at)
        self.next_at = ctx.now + self.interval
        seed = self.rng.randrange(2**31)
        if self.active is None:
            self.active = (self.faults[self.started % len(self.faults)] if self.in_order
                           else self.rng.choice(self.faults))
            self.started += 1
            return {"f": "start", "fault": self.active, "seed": seed}
        fault, self.active = self.active, None
        return {"f": "stop", "fault": fault, "seed": seed}
