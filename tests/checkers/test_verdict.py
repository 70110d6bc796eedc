"""Jepsen's verdict rules: false beats unknown beats true; duplicates depend on idempotence."""
from __future__ import annotations

from checkers.verdict import UNKNOWN, checker_valid, overall_valid


def test_lost_write_makes_checker_invalid():
    assert checker_valid({"lost-write"}, [], idempotent=False) is False


def test_duplicate_without_idempotence_keeps_checker_valid():
    assert checker_valid({"duplicate", "duplicate-tx"}, [], idempotent=False) is True


def test_duplicate_with_idempotence_makes_checker_invalid():
    assert checker_valid({"duplicate"}, [], idempotent=True) is False


def test_unseen_is_informational():
    assert checker_valid({"unseen"}, [], idempotent=True) is True


def test_lagging_osn_makes_checker_unknown():
    assert checker_valid({"lagging-osn"}, [], idempotent=False) == UNKNOWN


def test_partition_nobody_drained_makes_checker_unknown():
    assert checker_valid(set(), ["no final read of t0/0"], idempotent=False) == UNKNOWN


def test_invalid_checker_outweighs_unknown_one():
    assert overall_valid([UNKNOWN, False, True]) is False


def test_unknown_checker_makes_overall_unknown():
    assert overall_valid([True, UNKNOWN]) == UNKNOWN


def test_no_checker_ran_is_unknown():
    assert overall_valid([]) == UNKNOWN
