"""`ordeal conformance` (cli/conformance.py): arguments and refusals, without a cluster."""
from __future__ import annotations

import argparse

import pytest

from ground.errors import UsageError
from cli import conformance as conformance_cli


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="ordeal")
    conformance_cli.register(parser.add_subparsers(dest="command"))
    return parser.parse_args(["conformance", *argv])


def test_defaults_are_fabric_recommended_and_2400_txs():
    args = parse()
    assert (args.variant, args.txs, args.func) == ("fabric-recommended", 2400, conformance_cli.main)


def test_a_variant_running_the_model_is_refused_before_anything_boots():
    with pytest.raises(UsageError, match="needs Fabric's"):
        conformance_cli.main(parse("--variant", "fabric-recommended-model"))


def test_an_unknown_variant_is_a_usage_error():
    with pytest.raises(UsageError):
        conformance_cli.main(parse("--variant", "no-such-variant"))


def test_no_txs_is_a_usage_error():
    with pytest.raises(UsageError, match="--txs"):
        conformance_cli.main(parse("--txs", "0"))
