"""`ordeal suite NAME`: a matrix of variants x scenarios within a time budget, judged
against what each variant expects."""
from __future__ import annotations

import argparse
from pathlib import Path

from ground.errors import UsageError

EPILOG = """\
Shipped suites are scenarios/suites/<name>.toml (smoke: what CI runs; nightly: every
variant under every fault kind). A scenario named as a fault kind is judged by the
variant's [expect] entry of that name (valid, invalid, invalid-possible); any other
scenario must be valid.

exit status: 0 every run met its expectation; 1 a run did not, was undecided, failed,
or did not fit in the budget; 2 bad suite or usage; 128+N stopped by signal N.

Writes STORE/suite-<name>/<UTC time>/: suite.json, junit.xml (one case per run),
compare.html, and the runs below it; STORE/suite-<name>/latest points at it."""


def _suite(args: argparse.Namespace) -> int:
    from harness.suite import SuiteError, cells, load_suite, run_suite, suite_path

    try:
        spec = load_suite(args.suite, budget=args.budget, duration=args.duration, variants=args.variant)
    except SuiteError as exc:
        raise UsageError(str(exc)) from None
    todo = cells(spec)
    if args.list:
        for cell in todo:
            print(cell.label)
        return 0
    print(f"suite {spec.name}: {len(todo)} runs, budget {spec.budget:.0f} s")
    try:
        result = run_suite(spec, args.store, str(suite_path(args.suite)))
    except SuiteError as exc:  # a client release that cannot be installed (before anything boots)
        raise UsageError(str(exc)) from None
    if result.matrix is not None:
        from reports.compare import matrix_text

        print(matrix_text(result.matrix))
    tally: dict[str, int] = {}
    for o in result.outcomes:
        tally[o.status] = tally.get(o.status, 0) + 1
    print(f"suite {spec.name}: " + ", ".join(f"{n} {s}" for s, n in sorted(tally.items()))
          + f"; {result.suite_dir}" + (f"; {result.compare}" if result.compare else ""))
    return result.exit_code


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "suite", help="run a matrix of variants x scenarios within a time budget; exit 1 on any unexpected verdict",
        description="Run a suite: every variant x scenario of its matrix (one cluster boot per variant) within "
                    "its time budget, each run checked and judged against what its variant expects; then write "
                    "the compare page and JUnit XML.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("suite", metavar="NAME", help="a suite TOML file, or the name of one under scenarios/suites/")
    p.add_argument("--store", type=Path, default=Path("store"), metavar="DIR", help="where runs go (default ./store)")
    p.add_argument("--budget", type=float, metavar="SECONDS", help="override the suite's time budget")
    p.add_argument("--duration", type=float, metavar="SECONDS", help="override every run's main-phase duration")
    p.add_argument("--variant", action="append", metavar="NAME",
                   help="run only the cells of this variant (repeatable); a long suite in parts")
    p.add_argument("--list", action="store_true", help="print the runs the suite would do, and exit")
    p.set_defaults(func=_suite)
