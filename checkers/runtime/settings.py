"""Where and how checks run, as the environment says: the Spark master, a Spark Connect
server someone runs, and how long ordeal's own shared Connect server waits for its next
check. Read by the commands and the runner, at the edge, and passed down from there."""
from __future__ import annotations

import os
import re

# The master URLs Spark knows (spark-submit refuses any other with a JVM's worth of output).
SPARK_MASTER = re.compile(r"local(\[(\*|\d+)(,\d+)?\])?|local-cluster\[\d+,\d+,\d+\]|yarn"
                          r"|(spark|k8s|mesos)://[^\s/]\S*")
SPARK_MASTER_ENV = "ORDEAL_SPARK_MASTER"
SPARK_REMOTE_ENV = "ORDEAL_SPARK_REMOTE"
SPARK_REMOTE = re.compile(r"sc://[^\s/:]+(:\d+)?(/\S*)?")
SERVER_IDLE_ENV = "ORDEAL_CHECK_SERVER_IDLE"


def server_idle() -> float:
    """How long the shared local Connect server waits for its next check (ORDEAL_CHECK_SERVER_IDLE); 0: none shared, each `ordeal check` in a server of its own.
    ValueError (one line) for a value that is not seconds."""
    raw = os.environ.get(SERVER_IDLE_ENV)
    if raw is None or raw.strip() == "":
        from checkers.runtime.connect import DEFAULT_IDLE
        return DEFAULT_IDLE
    try:
        idle = float(raw)
    except ValueError:
        idle = -1.0
    if not 0 <= idle < float("inf"):
        raise ValueError(f"{SERVER_IDLE_ENV}={raw!r}: not a number of seconds (0: no shared check server)")
    return idle


def spark_remote() -> str | None:
    """The Spark Connect server a user runs, from ORDEAL_SPARK_REMOTE (read here at the edge), or None."""
    return os.environ.get(SPARK_REMOTE_ENV) or None
