"""Formatting filters of report pages."""
from __future__ import annotations

import pytest

from reports.page import _cell, _duration


@pytest.mark.parametrize("seconds, text", [(8.694, "8.7s"), (125, "2m 05s"), (55443.78, "15h 24m")])
def test_run_length_reads_as_a_person_would_say_it(seconds, text):
    assert _duration(seconds) == text


def test_long_hashes_in_examples_are_cut():
    assert _cell("ab" * 32) == "ababababab…ababab"
