#!/usr/bin/env python3
"""Reproducer: AdminClient.elect_leaders() raises SystemError when given request_timeout or
operation_timeout (confluent-kafka-python).

The C extension's keyword list for elect_leaders lacks a comma between "partitions" and
"future", so C string-literal concatenation makes them one entry ("partitionsfuture"): the
list has 4 names for a format string with 5 converters ("OOO|ff"). CPython's argument parser
then rejects any call that passes one of the optional timeouts with
    SystemError: more argument specifiers than keyword list entries (remaining format:'f')
The error comes from argument parsing, before any request is made, so no broker is needed:
the AdminClient here points at 127.0.0.1:1 (nothing listens there; librdkafka's connection
attempts in the background are refused and are not part of the check).

PASS (exit 0): elect_leaders(..., request_timeout=...) and (..., operation_timeout=...) both
return a Future. FAIL (exit 1): either raises SystemError. Exit 2: setup error (confluent_kafka
missing, or this release has no elect_leaders).

    python3 reproduce.py            # one run
    python3 reproduce.py --runs 10
"""
from __future__ import annotations

import argparse
import sys

try:
    import confluent_kafka
    from confluent_kafka import TopicPartition
    from confluent_kafka.admin import AdminClient
except ImportError as exc:
    print(f"setup error: confluent_kafka is not importable: {exc}", file=sys.stderr)
    sys.exit(2)


def client_version() -> str:
    ver = confluent_kafka.version()  # (str, int) in older releases, str in 2.16.2
    return ver[0] if isinstance(ver, tuple) else str(ver)


def one_run(admin: AdminClient, election_type) -> dict[str, str]:
    """kwargs label -> outcome ("future" or "ExceptionName: message")."""
    outcomes = {}
    partitions = [TopicPartition("any-topic", 0)]
    for label, kwargs in (("no timeout", {}),
                          ("request_timeout=5.0", {"request_timeout": 5.0}),
                          ("operation_timeout=5.0", {"operation_timeout": 5.0})):
        try:
            fut = admin.elect_leaders(election_type, partitions, **kwargs)
            outcomes[label] = "future" if hasattr(fut, "result") else f"returned {fut!r}"
            fut.cancel()
        except Exception as exc:  # noqa: BLE001 - the outcome is what is reported
            outcomes[label] = f"{type(exc).__name__}: {exc}"
    return outcomes


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=1)
    args = ap.parse_args()
    if not 1 <= args.runs <= 1000:
        ap.error("--runs must be 1..1000")

    print(f"confluent-kafka {client_version()}, librdkafka {confluent_kafka.libversion()[0]}, "
          f"Python {sys.version.split()[0]}")
    election_type = getattr(confluent_kafka, "ElectionType", None)
    if election_type is None or not hasattr(AdminClient, "elect_leaders"):
        print("setup error: this confluent-kafka has no AdminClient.elect_leaders (added in 2.6.0)")
        return 2

    # Nothing listens on port 1: no broker is contacted; log lines about refused connections
    # are silenced.
    admin = AdminClient({"bootstrap.servers": "127.0.0.1:1", "log_level": 0})
    fails = 0
    for no in range(1, args.runs + 1):
        outcomes = one_run(admin, election_type.PREFERRED)
        failed = any(v.startswith("SystemError") for v in outcomes.values())
        fails += failed
        print(f"run {no}: {'FAIL' if failed else 'PASS'}  " +
              "; ".join(f"{k} -> {v}" for k, v in outcomes.items()))
    print(f"runs {args.runs}: FAIL {fails}, PASS {args.runs - fails}")
    print("FAIL" if fails else "PASS")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
