"""The session's small-machine settings."""
from __future__ import annotations

from checkers.session import local_cores


def test_local_masters_are_read_for_their_worker_threads():
    assert [local_cores(m) for m in ("local", "local[3]", "local[4,2]")] == [1, 3, 4]
