"""The jinja2 environment for report pages: templates and the stylesheet inlined from reports/templates/."""
from __future__ import annotations

from functools import lru_cache
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape


def _ms(x: float | None) -> str:
    if x is None:
        return "–"
    return f"{x:.0f} ms" if x >= 10 else f"{x:.1f} ms"


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


def _secs(x: float | None) -> str:
    return "–" if x is None else f"{x:.2f}s"


def _duration(x: float | None) -> str:
    """A run's length as a person reads it: seconds when short, hours and minutes when long."""
    if x is None:
        return "–"
    if x < 120:
        return f"{x:.1f}s"
    minutes = int(x // 60)
    return f"{minutes // 60}h {minutes % 60:02d}m" if minutes >= 60 else f"{minutes}m {int(x % 60):02d}s"


def _cell(x: Any) -> str:
    """An example's field in one readable line: lists joined, dicts as k=v, long hashes cut."""
    if isinstance(x, str):
        return x if len(x) <= 24 else f"{x[:10]}…{x[-6:]}"
    if isinstance(x, dict):
        return " ".join(f"{k}={_cell(v)}" for k, v in x.items())
    if isinstance(x, list):
        return ("; " if any(isinstance(v, dict) for v in x) else ", ").join(_cell(v) for v in x)
    return "null" if x is None else str(x).lower() if isinstance(x, bool) else str(x)


@lru_cache(maxsize=1)
def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("reports", "templates"),
        autoescape=select_autoescape(["html", "j2", "xml"]),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(ms=_ms, pct=_pct, secs=_secs, duration=_duration, cell=_cell)
    return env


def render(template: str, **context: Any) -> str:
    return environment().get_template(template).render(**context)
