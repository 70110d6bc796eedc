"""Anomalies of any node, from the nemesis ops that harness.crash_watch records.

node-crash: a node (ZooKeeper, broker, OSN, toxiproxy) exited while no fault had stopped
it. Each `crash` op is one anomaly, its own index the evidence, with the node, its role,
exit code, whether the kernel OOM-killed it, and the last lines of its log.
"""
from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from checkers.anomaly import anomaly_rows
from checkers.history import Tables
from checkers.schema import NEMESIS

CRASH = "crash"


def node_crashes(ops: DataFrame) -> DataFrame:
    """One node-crash per crash op of the nemesis."""
    crashes = ops.filter((F.col("process") == NEMESIS) & (F.col("f") == CRASH))
    return anomaly_rows(crashes, "node-crash", F.array("index"),
                        F.struct("node", "role", "exit_code", "oom_killed", "log_tail"))


def node_anomalies(tables: Tables) -> DataFrame:
    """Anomaly rows of every node checker."""
    return node_crashes(tables.ops)
