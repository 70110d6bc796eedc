"""The `ordeal` command line: one entry point, each part registers its own subcommands.

Each module named in COMMAND_MODULES exposes `register(subparsers)`, which adds its
subcommands and sets `func(args) -> int` on them. A part that is not built yet is
simply absent from `--help`; everything else keeps working.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from ground.errors import UsageError

COMMAND_MODULES = (
    "harness.run_cli",  # run
    "checkers.cli",  # check
    "reports.cli",  # report, compare
    "clusters.cli",  # cluster up/status/down, images, clean
    "harness.suite_cli",  # suite
    "harness.hunt_cli",  # hunt
    "harness.conformance_cli",  # conformance
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ordeal",
        description="Jepsen-style fault injection for Kafka and a Kafka-based ordering service.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue
            raise
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except UsageError as exc:
        print(f"ordeal: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("ordeal: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
