"""tests/support.py's waits: `until` gives the first truthy value or fails naming what it
waited for (or, with last=True, gives the last value), `holds` fails at the first look a
condition is false."""
from __future__ import annotations

import itertools

import pytest

from tests.support import holds, until


def test_until_gives_the_first_truthy_value_and_a_raise_counts_as_not_yet() -> None:
    looks = itertools.count()

    def coming() -> int:
        n = next(looks)
        if n == 0:
            raise ConnectionRefusedError("not up yet")
        return n if n >= 2 else 0

    assert until(coming, 5, step=0.001) == 2


def test_until_fails_naming_what_it_waited_for_and_what_it_saw_last() -> None:
    with pytest.raises(AssertionError, match=r"gave up after 0.02 s waiting for a leader \(last seen: \[\]\)"):
        until(lambda: [], 0.02, step=0.005, what="a leader")


def test_until_fails_with_the_last_error_as_its_cause() -> None:
    def refused() -> None:
        raise ConnectionRefusedError("refused")

    with pytest.raises(AssertionError, match=r"raised ConnectionRefusedError\('refused'\)") as failed:
        until(refused, 0.02, step=0.005, what="an answer")
    assert isinstance(failed.value.__cause__, ConnectionRefusedError)


def test_until_with_last_gives_the_last_value_for_the_caller_to_assert_on() -> None:
    looks = itertools.count()
    assert until(lambda: next(looks) * 0, 0.02, step=0.005, last=True) == 0
    assert next(looks) > 2  # looked until the deadline, not once


def test_holds_looks_for_its_whole_time_and_fails_at_the_first_false_look() -> None:
    looks = itertools.count()
    holds(lambda: next(looks) >= 0, 0.03, step=0.005)
    assert next(looks) > 2
    flips = iter([True, True, None])
    with pytest.raises(AssertionError, match=r"no leader held only .* of 5 s \(seen: None\)"):
        holds(lambda: next(flips), 5, step=0.001, what="no leader")
