"""Live progress of a run with rich: phase, elapsed/total, ops/s, ok/fail/info, active faults.

On a terminal it redraws one panel in place; otherwise (CI logs, tests) it prints a
plain line when the phase changes and every LOG_EVERY seconds.
"""
from __future__ import annotations

import time

from rich.console import Console
from rich.live import Live
from rich.text import Text

from harness.runner import Status

LOG_EVERY = 10.0


class Progress:
    def __init__(self, console: Console | None = None):
        self.console = console or Console(stderr=True)
        self._live: Live | None = None
        self._last: tuple[float, int] | None = None  # (monotonic time, completed) of the last redraw
        self._rate = 0.0
        self._phase = ""
        self._logged = 0.0

    def __enter__(self) -> "Progress":
        if self.console.is_terminal:
            self._live = Live(Text(""), console=self.console, refresh_per_second=4, transient=False)
            self._live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.__exit__(None, None, None)

    def __call__(self, status: Status) -> None:
        now = time.monotonic()
        if self._last is not None and now > self._last[0]:
            self._rate = (status.completed - self._last[1]) / (now - self._last[0])
        self._last = (now, status.completed)
        line = self.render(status)
        if self._live is not None:
            self._live.update(line)
        elif status.phase != self._phase or now - self._logged >= LOG_EVERY:
            self.console.print(line, highlight=False, soft_wrap=True)
            self._logged = now
        self._phase = status.phase

    def render(self, status: Status) -> Text:
        c = status.counts
        text = Text()
        text.append(f"{status.phase:<12}", style="bold cyan")
        text.append(f" {status.elapsed:6.1f}/{status.total:.0f} s")
        text.append(f"  {self._rate:8.1f} ops/s  ")
        text.append(f"ok {c.get('ok', 0)}", style="green")
        text.append("  ")
        text.append(f"fail {c.get('fail', 0)}", style="yellow")
        text.append("  ")
        text.append(f"info {c.get('info', 0)}", style="magenta")
        text.append(f"  nemesis {status.nemesis_ops}")
        faults = ", ".join(status.active_faults) or "none"
        text.append(f"  faults: {faults}", style="red" if status.active_faults else "dim")
        return text
