"""The session's small-machine settings."""
from __future__ import annotations

from checkers.session import local_cores, session_settings


def test_local_masters_are_read_for_their_worker_threads():
    assert [local_cores(m) for m in ("local", "local[3]", "local[4,2]")] == [1, 3, 4]


def test_a_jvm_for_large_histories_gets_twice_the_heap_of_one_for_small_ones():
    large, small = (session_settings("local[2]", small_inputs=small)["spark.driver.memory"] for small in (False, True))
    assert (large, small) == ("6g", "3g")
