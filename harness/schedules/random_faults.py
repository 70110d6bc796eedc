"""Fault schedules in Jepsen's manner: faults that overlap, a mix that changes every period,
quiet periods between, all drawn from the run's seed.

`one-at-a-time` (harness.schedules.one_at_a_time.FaultSchedule) starts one fault, stops it, starts the
next: it finds what a single fault breaks. Bugs that need two faults at once (a pause
during a partition, a kill while a link is slow) or a cluster that never settles need
this schedule instead. Time is cut into periods of `period` seconds, each followed by
`quiet` seconds with no fault. Each period draws `families` of the scenario's faults; in
it a request comes about every `interval` seconds (uniformly 0.5x to 1.5x): a start of a
drawn fault that is not active, or a stop of an active one, with at most `max_active`
active at once. Every fault still active at the end of its period is stopped then.

The whole schedule is a function of the seed (`plan_schedule`), computed before the run:
the same seed gives the same requests in the same order, each with the seed of its own
choices (which node, which partition). When they run depends on how long each fault
takes (one nemesis thread does them in turn), never what they are.
"""
from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from ground.generator import NS, Answer, Context, Pending
from ground.op import Op


@dataclass(frozen=True)
class Request:
    """One planned request of the schedule: at `at` ns from the run's start."""

    at: int
    op: Op


def plan_schedule(faults: Sequence[str], rng: random.Random, *, duration: float, interval: float, period: float,
                  quiet: float, families: int, max_active: int) -> list[Request]:
    """Every start and stop of a run's main phase of `duration` seconds, in order."""
    names = sorted(dict.fromkeys(faults))
    plan: list[Request] = []
    if not names:
        return plan
    end = int(duration * NS)
    t = 0
    while t < end:
        stop_at = min(t + int(period * NS), end)
        drawn = rng.sample(names, min(len(names), max(1, families)))
        active: list[str] = []
        at = t + int(rng.uniform(0.0, interval) * NS)
        while at < stop_at:
            startable = [n for n in drawn if n not in active]
            if active and (len(active) >= max_active or not startable or rng.random() < 0.5):
                name = active.pop(rng.randrange(len(active)))
                plan.append(Request(at, {"f": "stop", "fault": name, "seed": rng.randrange(2**31)}))
            else:
                name = rng.choice(startable)
                active.append(name)
                plan.append(Request(at, {"f": "start", "fault": name, "seed": rng.randrange(2**31)}))
            at += int(rng.uniform(0.5, 1.5) * interval * NS)
        for name in sorted(active):  # the period ends: quiet follows
            plan.append(Request(stop_at, {"f": "stop", "fault": name, "seed": rng.randrange(2**31)}))
        t = stop_at + int(quiet * NS)
    return plan


class RandomSchedule:
    """The generator of a planned schedule: each request once it is due, in plan order."""

    def __init__(self, plan: list[Request]):
        self.plan = plan
        self.i = 0

    def op(self, ctx: Context) -> Answer:
        if self.i >= len(self.plan):
            return None
        request = self.plan[self.i]
        if ctx.now < request.at:
            return Pending(request.at)
        self.i += 1
        return dict(request.op)


def overlaps(plan: list[Request]) -> int:
    """How many starts came while another fault was active (a test's and a report's measure)."""
    active: set[str] = set()
    count = 0
    for r in plan:
        if r.op["f"] == "start":
            count += bool(active)
            active.add(r.op["fault"])
        else:
            active.discard(r.op["fault"])
    return count
