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


@lru_cache(maxsize=1)
def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("reports", "templates"),
        autoescape=select_autoescape(["html", "j2", "xml"]),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(ms=_ms, pct=_pct, secs=_secs)
    return env


def render(template: str, **context: Any) -> str:
    return environment().get_template(template).render(**context)
