"""`ordeal report RUN_DIR` and `ordeal compare RUN_OR_STORE... [--out FILE]`."""
from __future__ import annotations

import argparse
from pathlib import Path

from ground.errors import UsageError
from ground.run_files import COMPARE_HTML as COMPARE

# The pages' modules (matplotlib, jinja2) are imported by the commands that write them: a
# second and more of start-up that every other `ordeal` command would pay.


def _report(args: argparse.Namespace) -> int:
    from reports.report import write_report
    from reports.run_files import RunDirError

    try:
        print(write_report(args.run_dir))
    except RunDirError as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise UsageError(f"cannot write the report in {args.run_dir}: {exc.strerror or exc}") from None
    return 0


def _compare(args: argparse.Namespace) -> int:
    from reports.compare import matrix_text, write_compare
    from reports.run_files import RunDirError

    out = args.out
    if out is None:
        single = args.paths[0] if len(args.paths) == 1 and args.paths[0].is_dir() else Path.cwd()
        out = single / COMPARE
    try:
        page, matrix = write_compare(args.paths, out)
    except RunDirError as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise UsageError(f"cannot write {out}: {exc.strerror or exc}") from None
    print(matrix_text(matrix))
    print(page)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    report = subparsers.add_parser(
        "report", help="write report.html and junit.xml for one run",
        description="Write RUN_DIR/report.html and RUN_DIR/junit.xml from its history and results.",
    )
    report.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    report.set_defaults(func=_report)

    compare = subparsers.add_parser(
        "compare", help="one page comparing runs: variants x scenarios",
        description="Write one HTML page with a matrix of variants x scenarios from run or store directories.",
    )
    compare.add_argument("paths", type=Path, nargs="+", metavar="RUN_OR_STORE")
    compare.add_argument("--out", type=Path, default=None,
                         help=f"page to write (default: STORE/{COMPARE} for one directory, else ./{COMPARE})")
    compare.set_defaults(func=_compare)
