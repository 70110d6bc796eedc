"""pytest plugin registered by entry point (pytest11): markers and shared options."""
from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "cluster: needs the real dockerised cluster")
    config.addinivalue_line("markers", "chaos: injects faults into the real cluster")
