"""Anomalies of any node, from the nemesis ops that harness.crash_watch records.

node-crash: a node (ZooKeeper, broker, OSN, toxiproxy) exited while no fault had stopped
it. Each `crash` op is one anomaly, its own index the evidence, with the node, its role,
exit code, whether the kernel OOM-killed it, and the last lines of its log.
"""
from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from checkers.anomaly import anomaly_rows
from checkers.checker import Checker, Findings
from checkers.ingest.history import Tables
from checkers.ingest.schema import NEMESIS
from checkers.verdict import NODES

CRASH = "crash"


def node_crashes(ops: DataFrame) -> DataFrame:
    """One node-crash per crash op of the nemesis."""
    crashes = ops.filter((F.col("process") == NEMESIS) & (F.col("f") == CRASH))
    return anomaly_rows(crashes, "node-crash", F.array("index"),
                        F.struct("node", "role", "exit_code", "oom_killed", "log_tail"))


def node_findings(tables: Tables) -> Findings:
    """Anomaly rows of every node checker."""
    return Findings(rows=node_crashes(tables.ops))


# Only a history that records crashes is judged: one from a harness that watched for none
# says nothing about its nodes. Crashes show what the nodes did, not what the clients
# saw: they prove nothing about the data (an invalid verdict needs no such proof).
CHECKER = Checker(name="nodes", anomalies=NODES, reads=lambda counts: counts.has(CRASH), proves=lambda counts: False,
                  find=node_findings)
