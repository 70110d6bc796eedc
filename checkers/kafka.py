"""Kafka anomalies, one transform each: history ops in, anomaly rows out (checkers.anomaly).

Jepsen's rules for indeterminacy: an `info` send (or an invoke left without
completion) may or may not have happened, so it is never lost and never aborted; a
`fail` send must never be read. Every transform is a sort, a shuffle or a join keyed
on topic-partition, so the cost grows as n log n; none collects rows to the driver.
"""
from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from checkers.anomaly import anomaly_rows
from checkers.history import Tables

TP = ["topic", "partition"]
# How many indices of one anomaly row to keep: enough to prove it, bounded.
_EVIDENCE_PER_ROW = 8


def send_completions(sends: DataFrame) -> DataFrame:
    """Each send completion with its invoke's index and time, and the sent value (Tables.sends)."""
    return sends


def acks(sends: DataFrame) -> DataFrame:
    """Acknowledged sends: an ok carrying the partition and offset it landed at."""
    return sends.filter((F.col("type") == "ok") & F.col("offset").isNotNull()
                        & F.col("partition").isNotNull())


def poll_records(records: DataFrame) -> DataFrame:
    """Every record returned by an ok poll, with the poll's index and consumer (from Tables.records)."""
    return records.filter(F.col("f") == "poll").drop("f")


def final_records(records: DataFrame) -> DataFrame:
    """Every record of every ok final read (from Tables.records)."""
    return records.filter(F.col("f") == "final-read").drop("f", "consumer")


def final_partitions(ops: DataFrame) -> DataFrame:
    """Partitions drained by an ok final read, with the last such read's index."""
    return (ops.filter((F.col("f") == "final-read") & (F.col("type") == "ok"))
            .groupBy("topic", "partition").agg(F.max("index").alias("final_index")))


def cells(acked: DataFrame, polls: DataFrame, finals: DataFrame) -> DataFrame:
    """Distinct (topic, partition, offset, value) observations, with a few indices each."""
    cols = ["topic", "partition", "offset", "value", "index"]
    seen = acked.select(*cols).unionByName(polls.select(*cols)).unionByName(finals.select(*cols))
    return (seen.filter(F.col("offset").isNotNull() & F.col("value").isNotNull())
            .groupBy("topic", "partition", "offset", "value")
            .agg(F.slice(F.array_sort(F.collect_set("index")), 1, 3).alias("indices")))


def _evidence(indices: Column) -> Column:
    return F.slice(F.array_sort(F.flatten(indices)), 1, _EVIDENCE_PER_ROW)


def inconsistent_offsets(observed: DataFrame) -> DataFrame:
    """Two different values seen at one (topic, partition, offset), by acks or reads."""
    bad = (observed.groupBy("topic", "partition", "offset")
           .agg(F.count("*").alias("n"), F.sort_array(F.collect_list("value")).alias("values"),
                F.collect_list("indices").alias("indices"))
           .filter(F.col("n") > 1))
    return anomaly_rows(bad, "inconsistent-offsets", _evidence(F.col("indices")),
                        F.struct("topic", "partition", "offset", F.slice("values", 1, 5).alias("values")))


def duplicates(observed: DataFrame) -> DataFrame:
    """One sent value at more than one offset (values are unique per topic)."""
    bad = (observed.groupBy("topic", "value")
           .agg(F.count("*").alias("n"),
                F.sort_array(F.collect_list(F.struct("partition", "offset"))).alias("at"),
                F.collect_list("indices").alias("indices"))
           .filter(F.col("n") > 1))
    return anomaly_rows(bad, "duplicate", _evidence(F.col("indices")),
                        F.struct("topic", "value", F.slice("at", 1, 5).alias("at")))


def lost_writes(acked: DataFrame, finals: DataFrame, drained: DataFrame) -> DataFrame:
    """An ok send whose value is missing from the final read of its partition.

    A window over (partition, value) rather than a join: on inputs already partitioned by
    topic-partition it needs no shuffle.
    """
    rows = (acked.select(*TP, "value", "offset", "index", "process", F.lit(False).alias("final"))
            .unionByName(finals.select(*TP, "value", F.lit(True).alias("final")), allowMissingColumns=True))
    lost = (rows.withColumn("in_final", F.max("final").over(Window.partitionBy(*TP, "value")))
            .filter(~F.col("final") & ~F.col("in_final"))
            .join(F.broadcast(drained), TP))
    return anomaly_rows(lost, "lost-write", F.array("index", "final_index"),
                        F.struct("topic", "partition", "offset", "value", "process"))


def undrained_partitions(acked: DataFrame, drained: DataFrame) -> DataFrame:
    """Partitions with acknowledged sends but no ok final read: losses there are unknown."""
    return acked.select(*TP).distinct().join(drained, TP, "left_anti")


def unseen(acked: DataFrame, polls: DataFrame) -> DataFrame:
    """Acknowledged, never returned by any poll (informational), on partitions that were polled."""
    polled = polls.select(*TP).distinct()
    read = polls.select("topic", "value").distinct()
    missing = acked.join(polled, TP, "left_semi").join(read, ["topic", "value"], "left_anti")
    return anomaly_rows(missing, "unseen", F.array("index"),
                        F.struct("topic", "partition", "offset", "value", "process"))


def realtime_order(acked: DataFrame) -> DataFrame:
    """Send A completed before send B was invoked, same partition, yet offset(B) < offset(A).

    One sort per partition: walk invokes and completions in time order keeping the
    highest offset acknowledged so far; an invoke finding it above its own offset is
    the anomaly. At equal times the invoke goes first, since A must complete strictly
    before B starts.
    """
    base = acked.filter(F.col("invoke_time").isNotNull())
    done = base.select(*TP, F.col("time").alias("t"), F.lit(1).alias("kind"),
                       F.struct("offset", "index", "value").alias("ack"),
                       F.lit(None).cast("long").alias("offset"), F.lit(None).cast("long").alias("index"),
                       F.lit(None).cast("long").alias("invoke_index"), F.lit(None).cast("long").alias("value"))
    start = base.select(*TP, F.col("invoke_time").alias("t"), F.lit(0).alias("kind"),
                        F.lit(None).cast(done.schema["ack"].dataType).alias("ack"),
                        "offset", "index", "invoke_index", "value")
    in_time = Window.partitionBy(*TP).orderBy("t", "kind").rowsBetween(Window.unboundedPreceding, 0)
    walked = done.unionByName(start).withColumn("before", F.max("ack").over(in_time))
    bad = walked.filter((F.col("kind") == 0) & (F.col("before.offset") > F.col("offset")))
    return anomaly_rows(
        bad, "realtime-order", F.array("before.index", "invoke_index", "index"),
        F.struct("topic", "partition",
                 F.struct(F.col("before.offset").alias("offset"), F.col("before.value").alias("value"),
                          F.col("before.index").alias("index")).alias("earlier"),
                 F.struct("offset", "value", "index").alias("later")))


def nonmonotonic_sends(acked: DataFrame) -> DataFrame:
    """A process's later send to a partition lands at or before its earlier one."""
    w = Window.partitionBy("process", *TP).orderBy("index")
    bad = (acked.select("process", *TP, "offset", "value", "index",
                        F.lag("offset").over(w).alias("prev_offset"),
                        F.lag("index").over(w).alias("prev_index"))
           .filter(F.col("offset") <= F.col("prev_offset")))
    return anomaly_rows(bad, "nonmonotonic-send", F.array("prev_index", "index"),
                        F.struct("process", "topic", "partition", "prev_offset", "offset", "value"))


def poll_sequences(ops: DataFrame, polls: DataFrame) -> DataFrame:
    """Each polled record that does not follow its consumer's previous record of the same
    partition by one offset, beside that previous record.

    A consumer's assign (its invoke: it may take effect any time after) starts a new
    epoch; records are only compared within an epoch. Records are paired in one window
    per consumer and partition; only the pairs that break the sequence are then checked
    against the consumer's last assign before them, in a second (small) sort.
    """
    seq = Window.partitionBy("consumer", *TP).orderBy("index", "pos")
    pairs = (polls.select("consumer", *TP, "offset", "index",
                          F.lag("offset").over(seq).alias("prev_offset"),
                          F.lag("index").over(seq).alias("prev_index"))
             .filter(F.col("offset") != F.col("prev_offset") + 1))
    assigns = (ops.filter((F.col("f") == "assign") & (F.col("type") == "invoke"))
               .select("consumer", "index", F.lit(0).alias("kind")))
    marks = pairs.select("consumer", "index", F.lit(1).alias("kind"), F.struct(*pairs.columns).alias("pair"))
    in_order = Window.partitionBy("consumer").orderBy("index", "kind").rowsBetween(Window.unboundedPreceding, 0)
    last_assign = F.max(F.when(F.col("kind") == 0, F.col("index"))).over(in_order)
    return (assigns.unionByName(marks, allowMissingColumns=True)
            .withColumn("last_assign", last_assign)
            .filter((F.col("kind") == 1)
                    & (F.col("last_assign").isNull() | (F.col("last_assign") < F.col("pair.prev_index"))))
            .select("pair.*"))


def nonmonotonic_polls(sequences: DataFrame) -> DataFrame:
    """A consumer's next record of a partition is not after its last one, with no assign between."""
    bad = sequences.filter(F.col("offset") <= F.col("prev_offset"))
    return anomaly_rows(bad, "nonmonotonic-poll", F.array("prev_index", "index"),
                        F.struct("consumer", "topic", "partition", "prev_offset", "offset"))


def poll_skips(sequences: DataFrame, finals: DataFrame, partitions: int | None = None) -> DataFrame:
    """Consecutive records of a consumer jump over offsets that hold values in the final read.

    Counting final offsets strictly between the two is a range query; it is answered by
    sorting the gap ends together with the final offsets of the partition and keeping a
    running count, so the cost stays n log n however many gaps there are.
    """
    gaps = (sequences.filter(F.col("offset") > F.col("prev_offset") + 1)
            .withColumn("gap", F.monotonically_increasing_id()))
    if partitions:  # the finals are partitioned by topic-partition: move the (few) gaps to them
        gaps = gaps.repartition(partitions, *TP)
    held = finals.select(*TP, "offset").distinct().select(*TP, "offset", F.lit(0).alias("kind"),
                                                         F.lit(None).cast("long").alias("gap"),
                                                         F.lit(0).alias("sign"))
    # Final offsets <= prev_offset (query after them at a tie) are subtracted from those < offset.
    low = gaps.select(*TP, F.col("prev_offset").alias("offset"), F.lit(1).alias("kind"), "gap",
                      F.lit(-1).alias("sign"))
    high = gaps.select(*TP, "offset", F.lit(-1).alias("kind"), "gap", F.lit(1).alias("sign"))
    in_offsets = Window.partitionBy(*TP).orderBy("offset", "kind").rowsBetween(Window.unboundedPreceding, 0)
    counted = (held.unionByName(low).unionByName(high)
               .withColumn("below", F.sum((F.col("kind") == 0).cast("long")).over(in_offsets))
               .filter(F.col("gap").isNotNull())
               .groupBy("gap").agg(F.sum(F.col("below") * F.col("sign")).alias("skipped")))
    bad = gaps.join(counted.filter(F.col("skipped") > 0), "gap")
    return anomaly_rows(bad, "poll-skip", F.array("prev_index", "index"),
                        F.struct("consumer", "topic", "partition", "prev_offset", "offset", "skipped"))


def aborted_reads(sends: DataFrame, reads: DataFrame) -> DataFrame:
    """A send that completed `fail` is seen by a poll or a final read."""
    failed = sends.filter(F.col("type") == "fail").select("topic", "value", "process", "index")
    seen = (reads.select("topic", "value", F.col("index").alias("read_index"),
                         F.col("partition").alias("read_partition"), F.col("offset").alias("read_offset"))
            .join(failed.select("topic", "value"), ["topic", "value"], "left_semi")
            .groupBy("topic", "value")
            .agg(F.slice(F.array_sort(F.collect_set("read_index")), 1, _EVIDENCE_PER_ROW - 1).alias("reads"),
                 F.min(F.struct("read_partition", "read_offset")).alias("at")))
    bad = failed.join(seen, ["topic", "value"])
    return anomaly_rows(bad, "aborted-read", F.concat(F.array("index"), F.col("reads")),
                        F.struct("topic", "value", "process", F.col("at.read_partition").alias("partition"),
                                 F.col("at.read_offset").alias("offset")))


def indeterminate_seen(sends: DataFrame, reads: DataFrame) -> DataFrame:
    """Info sends whose value was read: they happened after all (counted, never an anomaly)."""
    info = sends.filter(F.col("type") == "info").select("topic", "value")
    return info.join(reads.select("topic", "value").distinct(), ["topic", "value"], "left_semi")


def kafka_anomalies(tables: Tables) -> tuple[DataFrame, DataFrame]:
    """(anomaly rows of every Kafka checker, partitions whose losses cannot be judged).

    The frames several checkers share are persisted: the caller clears the cache.
    """
    ops = tables.ops
    # Acks and records are moved once, by topic-partition: every checker keyed on it (or a
    # superset of it) then runs without another shuffle.
    n = int(ops.sparkSession.conf.get("spark.sql.shuffle.partitions"))
    sends = send_completions(tables.sends)
    acked = acks(sends).repartition(n, *TP)
    polls = poll_records(tables.records).repartition(n, *TP)
    finals = final_records(tables.records).repartition(n, *TP)
    drained = final_partitions(ops)
    observed = cells(acked, polls, finals).persist()
    reads = polls.drop("consumer", "pos").unionByName(finals.drop("pos"))
    sequences = poll_sequences(ops, polls).persist()
    found = [
        lost_writes(acked, finals, drained),
        inconsistent_offsets(observed),
        duplicates(observed),
        realtime_order(acked),
        nonmonotonic_polls(sequences),
        poll_skips(sequences, finals, n),
        nonmonotonic_sends(acked),
        aborted_reads(sends, reads),
        unseen(acked, polls),
    ]
    rows = found[0]
    for more in found[1:]:
        rows = rows.unionByName(more)
    return rows, undrained_partitions(acked, drained)
