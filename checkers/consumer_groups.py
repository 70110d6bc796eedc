"""Consumer groups: a consumer's positions across rebalances, judged from what its polls and
the group's commits recorded (the group table, checkers.ingest.schema.GROUP).

In a group the partitions a consumer reads are the group's to hand out: a rebalance
revokes some and assigns others, and an assigned partition starts at the group's committed
offset. Jepsen's Kafka checker therefore allows every skip and rewind once consumers
subscribe; here only those the recorded rebalances and commits explain are allowed:

- a rebalance that names a partition resets the consumer's position there, as an assign
  that drops or seeks it does (`moves`, read by checkers.kafka.poll_sequences);
- the assignment itself counts as a record at its start position - 1, read just before the
  poll's own records (`start_records`), so the consumer's first record there after the
  rebalance is judged by poll-skip and nonmonotonic-poll like any other: it must be the
  start position, or past offsets the final read does not hold;
- the start position must be one the group's commits explain (`unexplained_starts`): the
  offset of the last commit of the partition acknowledged before the poll that saw the
  assignment, or of a commit that may have landed after it (acknowledged later, or
  indeterminate); with no commit acknowledged before, the beginning also. A start below
  the last acknowledged commit is group-rewind (the group reads again what it committed as
  done: a commit was lost); any other is group-skip (a position nothing committed).

And for transactions on subscribe (consume-transform-produce, history format 2's commit
micro-op): a record the group committed past in a committed txn should have been polled by
some committed txn (`unprocessed_inputs`). A consumer that does not seek back to the group's
commit after an aborted txn goes on after what that txn polled, and the next txn commits
past it: unprocessed-input, informational (Kafka leaves the rewind to the application;
KAFKA-17582 is this ground).

The group is the partition's: ordeal's workloads each subscribe one group to topics of
their own, so a partition's commits are its group's.
"""
from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from checkers.anomaly import anomaly_rows
from checkers.checker import TP
from checkers.ingest.history import HISTORY

ASSIGNED = "assigned"
# A rebalance names a partition by one of these; each resets the consumer's position there.
MOVED = (ASSIGNED, "revoked", "lost")


def start_records(group: DataFrame) -> DataFrame:
    """Per partition a poll saw assigned: a record at its start position - 1 (-1 for the
    beginning), at the poll's index, before its first record (pos -1), without a value.
    Union them with the polled records where positions are judged, never where values are."""
    return (group.filter(F.col("f") == ASSIGNED)
            .select(HISTORY, "consumer", "topic", "partition", "index", F.lit(-1).cast("int").alias("pos"),
                    (F.coalesce(F.col("offset"), F.lit(0)) - 1).alias("offset")))


def moves(group: DataFrame) -> DataFrame:
    """(consumer, topic, partition, index) for every partition a poll saw revoked, lost or
    assigned: its index is the poll's, whose records come after the rebalance."""
    return group.filter(F.col("f").isin(*MOVED)).select(HISTORY, "consumer", "topic", "partition", "index")


def unexplained_starts(group: DataFrame) -> DataFrame:
    """group-rewind and group-skip: assignments whose start position the commits do not explain.

    One sort of the assignments with the acknowledged commits, per partition, finds the last
    commit before each assignment; the assignments not at its offset (few) are then matched
    against the commits that may have landed after it (few)."""
    commits = group.filter((F.col("f") == "commit") & F.col("type").isin("ok", "info"))
    starts = group.filter(F.col("f") == ASSIGNED).select(
        *TP, "consumer", "index", F.col("offset").alias("position"), F.lit(0).alias("kind"))
    acked = commits.filter(F.col("type") == "ok").select(
        *TP, F.lit(None).cast("string").alias("consumer"), "index", F.col("offset").alias("position"),
        F.lit(1).alias("kind"))
    # A txn's rebalances come before its commit micro-op, under the same index: starts sort first.
    upto = Window.partitionBy(*TP).orderBy("index", "kind").rowsBetween(Window.unboundedPreceding, 0)
    last = F.last(F.when(F.col("kind") == 1, F.struct(F.col("index").alias("at"), F.col("position").alias("offset"))),
                  ignorenulls=True).over(upto)
    placed = (starts.unionByName(acked).withColumn("last", last).filter(F.col("kind") == 0)
              .select(*TP, "consumer", "index", "position", F.col("last.at").alias("commit_index"),
                      F.col("last.offset").alias("committed")))
    start = F.coalesce(F.col("position"), F.lit(0))
    plain = F.col("position").eqNullSafe(F.col("committed")) | (F.col("committed").isNull() & (start == 0))
    suspects = placed.filter(~plain)
    later = commits.select(*(F.col(c).alias(f"c_{c}") for c in (*TP, "index", "type", "offset")))
    same = [F.col(c) == F.col(f"c_{c}") for c in TP]
    cond = same[0] & same[1] & same[2] & (F.col("c_offset") == start) & (
        (F.col("c_type") == "info") | (F.col("c_index") > F.coalesce(F.col("commit_index"), F.lit(-1))))
    bad = suspects.join(F.broadcast(later), cond, "left_anti")
    example = F.struct("consumer", "topic", "partition", "position", "committed")
    rewinds = bad.filter(F.col("committed").isNotNull() & (start < F.col("committed")))
    skips = bad.filter(F.col("committed").isNull() | (start >= F.col("committed")))
    return (anomaly_rows(rewinds, "group-rewind", F.array("commit_index", "index"), example)
            .unionByName(anomaly_rows(skips, "group-skip", F.array("commit_index", "index"), example)))


def unprocessed_inputs(group: DataFrame, polls: DataFrame, txns: DataFrame, held: DataFrame) -> DataFrame:
    """unprocessed-input, one row per partition: offsets the final reads hold below the last
    offset committed there by a committed txn, that no committed (or indeterminate) txn polled.

    `polls` are the polled records (their index: the txn's, for a txn's), `txns` the txn
    completions, `held` the (topic, partition, offset)s the final reads hold. A hash join of
    the held offsets below the commits (few partitions: broadcast) against the offsets
    committed txns polled."""
    commits = group.filter((F.col("f") == "commit") & (F.col("type") == "ok"))
    committed_txns = txns.filter(F.col("type") == "ok").select(HISTORY, "index")
    # Commit micro-ops only (under a committed txn's index): a format-1 commit op is no txn's.
    upto = (commits.join(committed_txns, [HISTORY, "index"], "left_semi")
            .groupBy(*TP).agg(F.max("offset").alias("upto"), F.max_by("index", "offset").alias("commit_index")))
    # A txn that ended indeterminate may have committed: what it polled may have been processed.
    maybe = txns.filter(F.col("type").isin("ok", "info")).select(HISTORY, "index")
    processed = polls.join(maybe, [HISTORY, "index"], "left_semi").select(*TP, "offset").distinct()
    missed = (held.join(F.broadcast(upto), TP).filter(F.col("offset") < F.col("upto"))
              .join(processed, [*TP, "offset"], "left_anti")
              .groupBy(*TP, "upto", "commit_index")
              .agg(F.count("*").alias("n"), F.slice(F.array_sort(F.collect_list("offset")), 1, 5).alias("offsets")))
    return anomaly_rows(missed, "unprocessed-input", F.array("commit_index"),
                        F.struct("topic", "partition", F.col("upto").alias("committed"), "n", "offsets"))
