"""`ordeal hunt VARIANT`: randomized runs until the first finding or a time limit."""
from __future__ import annotations

import argparse
from pathlib import Path

from ground.errors import UsageError

EPILOG = """\
Each run draws a new seed; the scenario (default: random, scenarios/random.toml) decides the
workloads and the fault schedule, which is a function of the seed. Runs go to
STORE/hunt-<variant>/<scenario>/<UTC time>/.

exit status: 1 a run was invalid (a finding: its replay command is printed), 0 nothing
found within the limit, 3 no run reached a verdict, 2 bad usage, 128+N stopped by signal N."""


def _hunt(args: argparse.Namespace) -> int:
    from harness.hunt import HuntError, hunt

    if args.minutes <= 0:
        raise UsageError("--minutes must be more than 0")
    try:
        return hunt(args.variant, scenario=args.scenario, minutes=args.minutes, store=args.store,
                    duration=args.duration, max_runs=args.runs).exit_code
    except HuntError as exc:
        raise UsageError(str(exc)) from None


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "hunt", help="randomized runs on one variant until the first invalid verdict or a time limit",
        description="Run a randomized scenario again and again on one variant's cluster (booted once), each run "
                    "with a new seed, until one is invalid or the time limit leaves no room for the next; print "
                    "each run's seed and verdict, the time to the finding and the command that replays it.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("variant", metavar="VARIANT", help="a variant name or TOML path")
    p.add_argument("--scenario", default="random", metavar="SCENARIO", help="the scenario to draw runs of (default random)")
    p.add_argument("--minutes", type=float, default=30.0, help="time limit, boots included (default 30)")
    p.add_argument("--runs", type=int, default=None, metavar="N", help="stop after N runs even with time left")
    p.add_argument("--duration", type=float, metavar="SECONDS", help="override each run's main phase")
    p.add_argument("--store", type=Path, default=Path("store"), metavar="DIR", help="where runs go (default ./store)")
    p.set_defaults(func=_hunt)
