"""`ordeal reproduce RUN_DIR` and `ordeal shrink RUN_DIR`: from a finding to what a maintainer
can act on: how often it comes back, and the least that still brings it back."""
from __future__ import annotations

import argparse
from pathlib import Path

from ground.errors import UsageError

REPRODUCE_EPILOG = """\
The run's scenario (scenario.json) runs again with its seed (run.json) on its variant (the
shipped one when unchanged, else run.json's copy written as RUN_DIR/variant.toml). Runs go to
STORE/reproduce-<scenario>/; each anomaly kind's rate is printed and kept in RUN_DIR/reproduce.json.

exit status: 0 done (whatever the rates), 2 bad usage, 130 interrupted."""

SHRINK_EPILOG = """\
The run's fault schedule becomes an explicit timeline (schedule = "timeline": each step a
time, start or stop, a fault naming a role, and the seed of its choice); delta debugging drops
steps while the anomaly comes back in NEED of TRIES runs; then a fault on a random broker is
tried on a partition's leader instead, stops are dropped (the final heal ends the fault), the
main phase is cut after the last step and workloads are dropped, each where the anomaly comes
without it. The least scenario is then run CONFIRM times to measure its rate. Writes
RUN_DIR/shrunk.toml (run it with `ordeal run RUN_DIR/shrunk.toml`) and RUN_DIR/shrink.json.

exit status: 0 shrunk (or the budget ran out: the least found is kept), 2 bad usage or a run
whose finding does not come back, 130 interrupted."""


def _reproduce(args: argparse.Namespace) -> int:
    from harness.reproduce import ReproduceError, reproduce

    if args.runs < 1:
        raise UsageError("--runs must be at least 1")
    try:
        reproduce(args.run_dir, args.runs, args.store)
    except ReproduceError as exc:
        raise UsageError(str(exc)) from None
    return 0


def _shrink(args: argparse.Namespace) -> int:
    from harness.reproduce import ReproduceError
    from harness.shrink import shrink

    if args.budget <= 0:
        raise UsageError("--budget must be more than 0")
    if args.confirm < 0:
        raise UsageError("--confirm must be 0 (no measuring) or more runs")
    try:
        shrink(args.run_dir, anomaly=args.anomaly, tries=args.tries, need=args.need, budget=args.budget,
               confirm=args.confirm, store=args.store)
    except ReproduceError as exc:
        raise UsageError(str(exc)) from None
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("reproduce", help="run a finding's scenario again with its seed N times: each anomaly's rate",
                       description="Run an (invalid) run's scenario again, with its seed, on its variant, N times, "
                                   "and print how often each anomaly kind came back.",
                       epilog=REPRODUCE_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="a run directory (store/<scenario>/<time>)")
    p.add_argument("--runs", type=int, default=10, metavar="N", help="how many runs (default 10)")
    p.add_argument("--store", type=Path, default=Path("store"), metavar="DIR", help="where runs go (default ./store)")
    p.set_defaults(func=_reproduce)

    s = sub.add_parser("shrink", help="the least fault timeline that still reproduces a run's finding",
                       description="Shrink an invalid run's fault schedule to the fewest steps, the shortest main "
                                   "phase and the fewest workloads that still reproduce its anomaly.",
                       epilog=SHRINK_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    s.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="a run directory whose verdict was invalid")
    s.add_argument("--anomaly", metavar="KIND", help="the anomaly to keep (default: the run's first that failed)")
    s.add_argument("--tries", type=int, default=3, metavar="N", help="runs per candidate, at most (default 3)")
    s.add_argument("--need", type=int, default=2, metavar="K", help="runs of a candidate that must show it (default 2)")
    s.add_argument("--budget", type=float, default=3600.0, metavar="SECONDS", help="time for all candidates (default 3600)")
    s.add_argument("--confirm", type=int, default=10, metavar="N",
                   help="runs of the least scenario that measure its rate, outside the budget (default 10; 0: none)")
    s.add_argument("--store", type=Path, default=Path("store"), metavar="DIR", help="where runs go (default ./store)")
    s.set_defaults(func=_shrink)
