"""`ordeal check PATH...`: judge histories offline, small ones together as one batch.

Each PATH is a history file, a run directory, or a store tree (every run directory
under it, found by its history.jsonl; symlinks such as store/latest are not followed).
Each history's results.json is written beside it, or, where several histories of one call
share a folder, in a folder named after each beside them (`a/*.jsonl`: a/x/results.json for
a/x.jsonl); --out DIR takes them instead (one history: DIR itself; several: DIR/<name of
each>). One line per history is printed, then a total when there are several. Small histories are
checked in batches (`batches`), each batch by one set of Spark jobs
(checkers.check.check_histories), so that a store of many runs costs little more than
one of them.

Exit codes: 0 valid, 1 invalid, 2 bad input, 3 unknown; for several histories the
worst of theirs, worst first: bad input (2: a history that could not be read at all
says least, and must not hide behind another's verdict), invalid (1), unknown (3), valid
(0). ORDEAL_SPARK_MASTER is read here, at the edge, and only when --spark-master is not given;
so are ORDEAL_SPARK_REMOTE (when --remote is not) and ORDEAL_CHECK_SERVER_IDLE.

The checks run over Spark Connect: in the Connect server at --remote (or
ORDEAL_SPARK_REMOTE), a server someone runs; else in ordeal's own local server for the
master (checkers.runtime.connect), which keeps its JVM warm for the next `ordeal check` and exits
after ORDEAL_CHECK_SERVER_IDLE seconds (default 300) without one; 0: in a server of this
command's own, stopped at its end, as a check on a shared machine may want.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from itertools import accumulate
from pathlib import Path
from typing import TYPE_CHECKING

from checkers.runtime.settings import (SERVER_IDLE_ENV, SPARK_MASTER, SPARK_MASTER_ENV, SPARK_REMOTE,
                                       SPARK_REMOTE_ENV, server_idle, spark_remote)
from ground.run_files import HISTORY, RESULTS_JSON
from ground.run_record import EXIT_INVALID, EXIT_UNKNOWN, EXIT_USAGE, EXIT_VALID, exit_code_of, verdict_of

if TYPE_CHECKING:
    from checkers.runtime.session import SessionOnDemand

EXIT_BAD_INPUT = EXIT_USAGE
# Exit codes from the one that says most to the one that says least (see the docstring).
WORST_FIRST = (EXIT_BAD_INPUT, EXIT_INVALID, EXIT_UNKNOWN, EXIT_VALID)


class BadPath(ValueError):
    """A PATH that names no history; str() is one line."""


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "check", help="check histories for anomalies (PySpark)",
        description="Check history files, run directories or store trees (format version 1 or 2) and write each "
                    "one's results.json, in one Spark session. Exit 0 valid, 1 invalid, 2 bad input, 3 unknown; "
                    "for several histories the worst (2, then 1, then 3, then 0). The checks run over Spark Connect: "
                    "in a local server that keeps Spark warm for the next check and exits after "
                    f"${SERVER_IDLE_ENV} seconds idle (default 300; 0: a server for this command alone; "
                    "`ordeal clean` stops it), or in the server at --remote.")
    p.add_argument("paths", metavar="PATH", type=Path, nargs="+",
                   help="history .jsonl file, run directory, or a directory of runs (a store)")
    p.add_argument("--out", metavar="DIR", type=Path,
                   help="write results.json (and the Parquet copy) here; for several histories, one folder "
                        "per history under it, named after each")
    p.add_argument("--spark-master", metavar="URL",
                   help=f"Spark master of the local Connect server (default: ${SPARK_MASTER_ENV} or local[*])")
    p.add_argument("--remote", metavar="sc://HOST:PORT",
                   help=f"check in this Spark Connect server instead of a local one (default: ${SPARK_REMOTE_ENV}); "
                        "it must see the histories' paths")
    p.add_argument("--idempotent", action="store_true", default=None,
                   help="the producer was idempotent: duplicates fail the verdict")
    p.add_argument("--report", action="store_true",
                   help="also write each history's report.html (and junit.xml) beside its results.json")
    p.set_defaults(func=run_check)


def find_histories(paths: list[Path]) -> list[Path]:
    """The history files PATHs name, in the order given (a store's runs sorted), each once."""

    found: dict[Path, Path] = {}
    for path in paths:
        if path.is_file():
            found.setdefault(path.resolve(), path)
        elif (path / HISTORY).is_file():
            found.setdefault((path / HISTORY).resolve(), path / HISTORY)
        elif path.is_dir():
            under = []
            for root, dirs, files in os.walk(path):  # does not follow symlinks such as `latest`
                dirs.sort()
                if HISTORY in files:
                    under.append(Path(root) / HISTORY)
                    dirs.clear()  # a run's own folders (logs, the Parquet copy) hold no run
            if not under:
                raise BadPath(f"{path}: no {HISTORY} in it or under it")
            for history in under:
                found.setdefault(history.resolve(), history)
        else:
            raise BadPath(f"{path}: no such history file or directory")
    return list(found.values())


def exit_code(valid: object) -> int:
    return exit_code_of(verdict_of(valid))


def worst(codes: list[int]) -> int:
    """The exit code of several histories (WORST_FIRST); valid for none."""
    return min(codes, key=WORST_FIRST.index, default=EXIT_VALID)


def run_check(args: argparse.Namespace) -> int:
    """`ordeal check`: over Spark Connect, in the server at --remote (ORDEAL_SPARK_REMOTE), else
    in the shared local server (checkers.runtime.connect) unless ORDEAL_CHECK_SERVER_IDLE is 0, else
    in a server of this command's own."""
    def fail(line: str) -> int:
        print(f"ordeal check: {line}", file=sys.stderr)
        return EXIT_BAD_INPUT

    master = args.spark_master or os.environ.get(SPARK_MASTER_ENV) or None
    if master is not None and not SPARK_MASTER.fullmatch(master):
        return fail(f"Spark master {master!r}: not a master URL (local[*], local[N], spark://HOST:PORT, "
                    "yarn, k8s://..., mesos://...)")
    remote = getattr(args, "remote", None) or spark_remote()
    if remote is not None and not SPARK_REMOTE.fullmatch(remote):
        return fail(f"Spark Connect server {remote!r}: not an address (sc://HOST:PORT)")
    if remote is not None and args.spark_master:
        return fail("--spark-master and a Spark Connect server (--remote or $ORDEAL_SPARK_REMOTE) exclude each "
                    "other: the server runs against its own master")
    if args.out is not None and args.out.exists() and not args.out.is_dir():
        return fail(f"--out {args.out}: exists and is not a directory")
    try:
        histories = find_histories(args.paths)
    except BadPath as exc:
        return fail(str(exc))
    try:
        idle = server_idle() if remote is None else 0.0
    except ValueError as exc:
        return fail(str(exc))

    # Imported here, not at the top: `ordeal --help` loads no Spark.
    from checkers.runtime.session import SessionOnDemand, small_file

    small = all(small_file(h) for h in histories)
    spark = SessionOnDemand(master, lambda line: _tell(f"ordeal check: {line}"), small=small, remote=remote, idle=idle)
    try:
        return _check_all(args, histories, spark)
    finally:
        spark.close()


def _check_all(args: argparse.Namespace, histories: list[Path], spark: SessionOnDemand) -> int:
    """run_check's checks of `histories` in `spark`: its lines, and its exit code."""
    from checkers.check import check_histories
    from ground.history_file import HistoryError
    from checkers.runtime.session import SparkUnavailable

    def fail(line: str) -> int:
        print(f"ordeal check: {line}", file=sys.stderr)
        return EXIT_BAD_INPUT

    several = len(histories) > 1
    codes: list[int] = []

    def say_for(n: int | None) -> Callable[[str], None]:
        label = f"[{n + 1}/{len(histories)}] {histories[n]}: " if several and n is not None else ""
        return lambda line: _tell(f"ordeal check: {label}{line}")

    outs = dict(zip(histories, results_dirs(histories, args.out)))
    cut = batches(histories)
    for first, batch in zip(accumulate((len(b) for b in cut), initial=0), cut):  # first: its first's number
        try:
            answers = check_histories(batch, out_dirs=[outs[h] for h in batch], idempotent=args.idempotent, spark=spark,
                                      progress=lambda n, line: say_for(None if n is None else first + n)(line))
        except SparkUnavailable as exc:  # no other history can be checked either
            fail(str(exc))
            codes.append(EXIT_BAD_INPUT)
            break
        for n, (history, results) in enumerate(zip(batch, answers), first):
            say = say_for(n)
            if isinstance(results, HistoryError):
                fail(str(results))
                codes.append(EXIT_BAD_INPUT)
                if several:
                    print(f"bad input: see above  -> {history}", flush=True)
                continue
            for warning in results["warnings"]:
                say(f"warning: {warning}")
            out = outs[history]
            if args.report:
                _report(out, say)
            summary = {name: a["count"] for name, a in results["anomalies"].items()}
            print(f"valid: {json.dumps(results['valid'])}  anomalies: {json.dumps(summary)}  -> {out / RESULTS_JSON}",
                  flush=True)
            codes.append(exit_code(results["valid"]))
    if several:
        tally = {name: codes.count(code) for name, code in
                 (("valid", EXIT_VALID), ("invalid", EXIT_INVALID), ("unknown", EXIT_UNKNOWN),
                  ("bad input", EXIT_BAD_INPUT))}
        print(f"total: {len(histories)} histories: " + ", ".join(f"{k} {v}" for k, v in tally.items() if v)
              + ("" if len(codes) == len(histories) else f", not checked {len(histories) - len(codes)}"))
    return worst(codes + ([EXIT_BAD_INPUT] if len(codes) < len(histories) else []))


def results_dirs(histories: list[Path], out: Path | None) -> list[Path]:
    """Where each history's results go, one folder each, in the order given: beside the
    history (its folder), unless other histories of the call share that folder, when each
    gets a folder of its own named after it there; with --out, `out` for one history and
    `out`/<name> for several. A name is the history file's stem, or its run directory's name
    for a history.jsonl, with -2, -3... where two would be the same."""
    def name(history: Path) -> str:
        return history.parent.name if history.name == HISTORY else history.stem

    def unique(paths: list[tuple[Path, str]]) -> dict[Path, str]:
        taken: dict[str, int] = {}
        names = {}
        for history, base in paths:
            taken[base] = taken.get(base, 0) + 1
            names[history] = base if taken[base] == 1 else f"{base}-{taken[base]}"
        return names

    if out is not None:
        if len(histories) == 1:
            return [out]
        names = unique([(h, name(h)) for h in histories])
        return [out / names[h] for h in histories]
    folders = [h.parent for h in histories]
    shared = {f for f in folders if folders.count(f) > 1}
    names = unique([(h, h.stem) for h in histories if h.parent in shared])
    return [h.parent / names[h] if h.parent in shared else h.parent for h in histories]


def batches(histories: list[Path]) -> list[list[Path]]:
    """The histories cut, in order, into the batches checked together (checkers.check.
    check_histories): small ones together while their files add up to less than a large
    one's (so that a batch is checked with the settings for small histories, and Spark
    plans one check for many, the cost of a small check); a large one alone."""
    from checkers.runtime.session import SMALL_INPUT_BYTES

    out: list[list[Path]] = []
    size = 0
    for history in histories:
        bytes_ = history.stat().st_size
        if out and size + bytes_ < SMALL_INPUT_BYTES:
            out[-1].append(history)
            size += bytes_
        else:
            out.append([history])
            size = bytes_
    return out


def _tell(line: str) -> None:
    """`line` on stderr in one write: a JVM starting beside a convert tells its progress
    from another thread, and print() writes a line's end apart from it."""
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def _report(out: Path, say) -> None:
    """report.html and junit.xml of a checked history; a failure is a warning, the verdict stands."""
    from reports.report import write_report
    from reports.run_files import RunDirError

    try:
        say(f"report: {write_report(out)}")
    except (RunDirError, OSError) as exc:
        say(f"warning: no report: {exc}")
