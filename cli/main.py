"""The `ordeal` command line: one entry point; each part adds its own subcommands.

Each module of COMMANDS has `register(subparsers)`, which adds its subcommands and sets
`func(args) -> int` on them. A UsageError from any of them is one line and exit 2.
"""
from __future__ import annotations

import argparse
import sys

from cli import check, clean, cluster, conformance, hunt, report, reproduce, run, suite
from ground.errors import UsageError

COMMANDS = (
    run,  # run
    check,  # check
    report,  # report, compare
    cluster,  # cluster up/status/down/smoke, images
    clean,  # clean
    suite,  # suite
    hunt,  # hunt
    reproduce,  # reproduce, shrink
    conformance,  # conformance
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ordeal",
        description="Jepsen-style fault injection for Kafka and a Kafka-based ordering service.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMANDS:
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
