"""This machine's speed now, as the CPU seconds of a fixed pure-Python loop: every bench
gives its figures beside it (or as ratios to it), because the machine's speed drifts by up
to 3x between days and hosts. Imported by the bench scripts, which run with bench/ first
on their path."""
from __future__ import annotations

import time


def reference_seconds() -> float:
    """CPU seconds of a fixed pure-Python loop, the least of three: this machine's speed at
    the moment (the least, as a loop is only ever slowed by what else runs)."""
    best = float("inf")
    for _ in range(3):
        started = time.process_time()
        total = 0
        for i in range(10_000_000):
            total += i
        best = min(best, time.process_time() - started)
    return best


class Speed:
    """The reference loop timed around each figure: `around` gives the mean of its time just
    before and just after (`ref`), and keeps every reading for the run's summary."""

    def __init__(self) -> None:
        self.readings: list[float] = []

    def read(self) -> float:
        self.readings.append(reference_seconds())
        return self.readings[-1]

    def around(self, before: float) -> float:
        return (before + self.read()) / 2
