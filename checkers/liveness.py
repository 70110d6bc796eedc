"""Whether the system served again once the faults were healed: liveness as a finding.

A run whose system stops serving for good used to end unknown (its final reads never
complete, so nothing can be said of the data they would have read). Jepsen counts
availability for nothing; redpanda's chaos tests call a service that never answers again
after its faults a HANG. Here three anomalies say what did not come back, with the ops that
show it:

unavailable-partition: a topic-partition none of whose final reads completed ok (every one
failed or timed out, until the final-read time limit: leaderless to the end, or its
replicas gone). Evidence: its final reads.
halted-channel: a channel whose final Deliver from an OSN did not end and whose chain then
refused a strict read (`errored`, checkers.ordering: Fabric 1.4's Kafka chain halts for good
once its partition lost offsets it had read, and still answers SUCCESS to Broadcast). One
row per channel and OSN. Evidence: those delivers.
hang: after the final heal (the nemesis's last op), client ops were invoked and none
completed ok. Evidence: the heal and the first of those ops.
stalled-osn: an OSN whose chain of a channel stopped for good after the final heal: it
delivered no new block while the channel's chain grew on the others, or it refused every
broadcast with SERVICE_UNAVAILABLE while the others took them. Unlike lagging-osn (behind
at the end, still moving), it never came back. Where availability is not promised it makes
the verdict unknown rather than valid.

Whether they fail the verdict is the variant's promise for the run's fault kind
(`[available]`, checkers.verdict); where nothing was promised they are reported only.
"""
from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from checkers.anomaly import anomaly_rows
from checkers.checker import Checker, Findings
from checkers.ingest.history import HISTORY, Counts, Tables
from checkers.ingest.schema import NEMESIS
from checkers.ordering import stalled_chains
from checkers.verdict import LIVENESS

# Indices of the failed attempts kept as evidence per partition or chain: enough to show it.
_EVIDENCE = 8


def _completions(ops: DataFrame) -> DataFrame:
    return ops.filter(F.col("type") != "invoke")


def unavailable_partitions(ops: DataFrame) -> DataFrame:
    """One unavailable-partition per topic-partition whose final reads never completed ok."""
    reads = _completions(ops).filter(F.col("f") == "final-read")
    by_partition = reads.groupBy(HISTORY, "topic", "partition").agg(
        F.max((F.col("type") == "ok").cast("int")).alias("served"),
        F.count("*").alias("attempts"),
        F.slice(F.array_sort(F.collect_list("index")), 1, _EVIDENCE).alias("indices"))
    never = by_partition.filter(F.col("served") == 0)
    return anomaly_rows(never, "unavailable-partition", F.col("indices"),
                        F.struct("topic", "partition", "attempts"))


def halted_channels(ops: DataFrame) -> DataFrame:
    """One halted-channel per (channel, OSN) whose chain a final deliver that did not end found
    errored (`errored`, checkers.ordering.errored_chains): it refused a strict read."""
    errored = ops.filter((F.col("f") == "deliver") & F.coalesce(F.col("errored"), F.lit(False)))
    by_chain = errored.groupBy(HISTORY, "channel", "osn").agg(
        F.count("*").alias("refusals"),
        F.slice(F.array_sort(F.collect_list("index")), 1, _EVIDENCE).alias("indices"))
    return anomaly_rows(by_chain, "halted-channel", F.col("indices"), F.struct("channel", "osn", "refusals"))


def hangs(ops: DataFrame) -> DataFrame:
    """One hang per history whose client ops after the final heal all failed."""
    heal = (ops.filter(F.col("process") == NEMESIS).groupBy(HISTORY)
            .agg(F.max(F.struct("time", "index")).alias("heal")))
    after = (_completions(ops).filter(F.col("process") != NEMESIS).join(heal, HISTORY)
             .filter(F.col("time") > F.col("heal.time")))
    per_history = after.groupBy(HISTORY).agg(
        F.max((F.col("type") == "ok").cast("int")).alias("served"),
        F.count("*").alias("failed"),
        F.min("index").alias("first"),
        F.first("heal.index").alias("heal_index"))
    hung = per_history.filter(F.col("served") == 0)
    return anomaly_rows(hung, "hang", F.array("heal_index", "first"), F.struct(F.col("failed").alias("ops_after_heal")))


def stalled_osns(tables: Tables) -> DataFrame:
    """One stalled-osn per (channel, OSN) whose chain stopped for good after the final heal
    (checkers.ordering.stalled_chains), with its height against the channel's."""
    stalled = stalled_chains(tables.ops, tables.blocks)
    return anomaly_rows(stalled, "stalled-osn", F.col("indices"),
                        F.struct("channel", "osn", "height", "channel_height", F.col("refused").alias("refused_broadcasts")))


def liveness_findings(tables: Tables) -> Findings:
    ops = tables.ops
    return Findings(rows=unavailable_partitions(ops).unionByName(halted_channels(ops)).unionByName(hangs(ops))
                    .unionByName(stalled_osns(tables)))


def _reads(counts: Counts) -> bool:
    return counts.has("final-read") or counts.has("deliver")


# It judges only runs with a final-read phase; its findings are about serving, not about the
# data, so it proves nothing of the data (checkers.checker).
CHECKER = Checker(name="liveness", anomalies=LIVENESS, reads=_reads, proves=lambda counts: False,
                  find=liveness_findings)
