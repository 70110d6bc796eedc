"""`ordeal check PATH`: judge a history offline.

Exit codes: 0 valid, 1 invalid, 2 bad input, 3 unknown. ORDEAL_SPARK_MASTER is read
here, at the edge, and only when --spark-master is not given.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

EXIT_VALID, EXIT_INVALID, EXIT_BAD_INPUT, EXIT_UNKNOWN = 0, 1, 2, 3
# The master URLs Spark knows (spark-submit refuses any other with a JVM's worth of output).
SPARK_MASTER = re.compile(r"local(\[(\*|\d+)(,\d+)?\])?|local-cluster\[\d+,\d+,\d+\]|yarn"
                          r"|(spark|k8s|mesos)://[^\s/]\S*")
SPARK_MASTER_ENV = "ORDEAL_SPARK_MASTER"


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "check", help="check a history for anomalies (PySpark)",
        description="Check a run directory or a history file (format version 1 or 2) and write results.json. "
                    "Exit 0 valid, 1 invalid, 2 bad input, 3 unknown.")
    p.add_argument("path", metavar="PATH", type=Path, help="run directory or history .jsonl file")
    p.add_argument("--out", metavar="DIR", type=Path, help="write results.json (and the Parquet copy) here")
    p.add_argument("--spark-master", metavar="URL",
                   help=f"Spark master (default: ${SPARK_MASTER_ENV} or local[*])")
    p.add_argument("--idempotent", action="store_true", default=None,
                   help="the producer was idempotent: duplicates fail the verdict")
    p.set_defaults(func=run_check)


def run_check(args: argparse.Namespace) -> int:
    # Imported here so that `ordeal --help` does not load Spark.
    from checkers.check import RESULTS_FILE, check_history
    from checkers.history import HistoryError
    from checkers.session import SparkUnavailable

    master = args.spark_master or os.environ.get(SPARK_MASTER_ENV) or None
    if master is not None and not SPARK_MASTER.fullmatch(master):
        print(f"ordeal check: Spark master {master!r}: not a master URL (local[*], local[N], spark://HOST:PORT, "
              "yarn, k8s://..., mesos://...)", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.out is not None and args.out.exists() and not args.out.is_dir():
        print(f"ordeal check: --out {args.out}: exists and is not a directory", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        results = check_history(args.path, out_dir=args.out, spark_master=master, idempotent=args.idempotent,
                                progress=lambda line: print(f"ordeal check: {line}", file=sys.stderr, flush=True))
    except (HistoryError, SparkUnavailable) as exc:
        print(f"ordeal check: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    for warning in results["warnings"]:
        print(f"ordeal check: warning: {warning}", file=sys.stderr)
    out = args.out or Path(results["history"]).parent
    summary = {name: a["count"] for name, a in results["anomalies"].items()}
    print(f"valid: {json.dumps(results['valid'])}  anomalies: {json.dumps(summary)}  -> {out / RESULTS_FILE}")
    valid = results["valid"]
    if valid is True:
        return EXIT_VALID
    if valid is False:
        return EXIT_INVALID
    return EXIT_UNKNOWN
