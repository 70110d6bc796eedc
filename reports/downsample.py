"""Bounded, deterministic summaries of streams too long to hold: what keeps report pages small."""
from __future__ import annotations

import math
from typing import Generic, TypeVar

T = TypeVar("T")


class StrideSample(Generic[T]):
    """Keeps every k-th item, doubling k whenever the cap is passed: evenly spread, never above cap."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.stride = 1
        self.seen = 0
        self.items: list[T] = []

    def add(self, item: T) -> None:
        if self.seen % self.stride == 0:
            self.items.append(item)
            if len(self.items) > self.cap:
                self.items = self.items[::2]
                self.stride *= 2
        self.seen += 1

    @property
    def thinned(self) -> bool:
        return self.stride > 1


class LogHistogram:
    """Quantiles within 1% from logarithmic buckets, in constant memory."""

    BASE = 1.01

    def __init__(self) -> None:
        self.buckets: dict[int, int] = {}
        self.count = 0

    def add(self, x: float) -> None:
        b = int(math.log(x, self.BASE)) if x >= 1 else 0
        self.buckets[b] = self.buckets.get(b, 0) + 1
        self.count += 1

    def quantile(self, q: float) -> float | None:
        if not self.count:
            return None
        rank = q * (self.count - 1)
        seen = 0
        for b in sorted(self.buckets):
            seen += self.buckets[b]
            if seen > rank:
                return self.BASE ** (b + 0.5) if b else 0.0
        return None
