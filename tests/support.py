"""What tests share: waiting on a condition instead of sleeping."""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def until(predicate: Callable[[], Any], timeout: float, step: float = 0.05, what: str = "") -> Any:
    """The first truthy value of predicate() within `timeout` seconds; the test fails, naming
    `what` it waited for, if none comes. A predicate that raises counts as not yet (a node
    coming back may refuse a request)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = predicate()
        except Exception:  # noqa: BLE001
            value = None
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up after {timeout:.0f} s waiting for {what or predicate}")
        time.sleep(step)
