"""Kafka anomalies, one transform each: history tables in, anomaly rows out (checkers.anomaly).

Jepsen's rules for indeterminacy: an `info` send (or an invoke left without
completion) may or may not have happened, so it is never lost and never aborted; a
`fail` send must never be read.

Consumer positions are judged per consumer and partition (poll_sequences): only an
assign that drops a partition or seeks it resets that partition's position. Where a
partition has no ok final read, lost-write (if sends there were acknowledged) and
poll-skip (if it was polled) are not judged, and say so. A txn's poll micro-ops (format
2) are polls here: their records are in the records table under the txn's index, so a
consumer's positions run through txns and plain polls alike.

Cost: the big inputs (acks, polled and final records) go through hash aggregations
with min/max/count only, which Spark combines map-side before it shuffles; those
summaries name the few keys that may hold an anomaly, and only the rows under those
keys are then examined in detail (joined against the keys, broadcast). Sorts are of
acks, of one row per poll and partition, and, in a partition whose final offsets have
holes (a transactional log's), of its polled records with those offsets (final_steps:
so that the offset gaps no reader sees leave few polls and gaps to look at in
detail; a plain log's steps are arithmetic). Every step
is a hash aggregation, a sort or a join, so the cost grows as n log n at worst; none
collects rows to the driver.
"""
from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from checkers.anomaly import anomaly_rows
from checkers.checker import (TP, TV, Checker, Findings, gathered, not_judged_rows, padded, shared, shuffle_partitions,
                              stat_rows)
from checkers.consumer_groups import moves, start_records, unexplained_starts, unprocessed_inputs
from checkers.ingest.history import HISTORY, Counts, Tables
from checkers.txn import txn_anomalies
from checkers.verdict import KAFKA

# How many indices of one anomaly row to keep: enough to prove it, bounded.
_EVIDENCE_PER_ROW = 8
# Where an observation of a (topic, partition, offset, value) comes from: one bit each, so
# that the sources of a cell fold into one integer (a cheap aggregate).
ACK, POLL, FINAL = 1, 2, 4
# Folded in beside them where a record at the offset lacks its value.
_BLANK = 8


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
            .groupBy(*TP).agg(F.max("index").alias("final_index")))


def observations(acked: DataFrame, polls: DataFrame, finals: DataFrame) -> DataFrame:
    """Every (topic, partition, offset, value) an ack, a poll or a final read reported, with its
    op's index and its `source`."""
    cols = [*TP, "offset", "value", "index"]
    return (acked.select(*cols, F.lit(ACK).alias("source"))
            .unionByName(polls.select(*cols, F.lit(POLL).alias("source")))
            .unionByName(finals.select(*cols, F.lit(FINAL).alias("source"))))


def _any(condition: Column) -> Column:
    return F.coalesce(F.max(condition.cast("int")), F.lit(0)) == 1


def offset_summary(seen: DataFrame) -> DataFrame:
    """Per (topic, partition, offset) observed (`observations`): the lowest and highest value seen
    there, the sources that saw it, whether a final read holds it, and whether one value and
    nothing else was seen there (`single`; true but where offsets are inconsistent, or where a
    record lacks its value, topic, partition or offset).

    The one aggregation over every observation: what follows works on its (far fewer) rows.
    """
    sources = F.col("sources")
    single = (F.coalesce(F.col("low") == F.col("high"), F.lit(False)) & (sources.bitwiseAND(_BLANK) == 0)
              & F.col("topic").isNotNull() & F.col("partition").isNotNull() & F.col("offset").isNotNull())
    source = F.col("source").bitwiseOR(F.when(F.col("value").isNull(), _BLANK).otherwise(0))
    return (seen.groupBy(*TP, "offset")
            .agg(F.min("value").alias("low"), F.max("value").alias("high"), F.bit_or(source).alias("sources"))
            .select(*TP, "offset", "low", "high", "sources", (sources.bitwiseAND(FINAL) != 0).alias("final"),
                    single.alias("single")))


def _flags(rows: DataFrame) -> DataFrame:
    sources = F.col("sources")
    return rows.select(*TP, "offset", "value", (sources.bitwiseAND(ACK) != 0).alias("acked"),
                       (sources.bitwiseAND(POLL) != 0).alias("polled"),
                       (sources.bitwiseAND(FINAL) != 0).alias("final"))


def cells(seen: DataFrame, offsets: DataFrame) -> DataFrame:
    """Distinct (topic, partition, offset, value) observations, and which sources saw each.

    Where one value and nothing else was seen at an offset (`offset_summary`: nearly
    everywhere) its cell is that offset's row; the observations at the other offsets
    (a key part missing counts as one: null-safe equality) are aggregated again. Asking
    first whether there are any would cost a Spark job per check; instead, where there
    are none, adaptive execution drops the join on an empty broadcast side without
    reading the observations again (and a small history is cheap to read twice).
    """
    plain = _flags(offsets.filter(F.col("single")).select(*TP, "offset", F.col("low").alias("value"), "sources"))
    keys = F.broadcast(offsets.filter(~F.col("single")).select(*(F.col(c).alias(f"odd_{c}") for c in (*TP, "offset"))))
    again = (seen.join(keys, _null_safe_equal((*TP, "offset"), "odd_"), "left_semi")
             .groupBy(*TP, "offset", "value").agg(F.bit_or("source").alias("sources")))
    return plain.unionByName(_flags(again))


def value_summary(observed: DataFrame, sends: DataFrame) -> DataFrame:
    """Per (topic, value) sent or read: at how many cells it was seen (`observed` is `cells`) and
    at how many of them with a partition and offset, whether one cell was both acknowledged
    and finally read (`kept`), whether it was acknowledged, polled, read at all, sent with
    `fail`, and how many `info` sends carried it.

    Counts, not spans: a value is sent once, so nearly every value has one cell, and
    the checks look in detail only at the others."""
    unsure = sends.filter(F.col("type").isin("fail", "info")).select(*TV, "type")
    no = F.lit(False)
    rows = (observed.select(*TV, "partition", "offset", "acked", "polled", "final",
                            F.lit(None).cast("string").alias("type"))
            .unionByName(unsure.select(*TV, F.lit(None).cast("int").alias("partition"),
                                       F.lit(None).cast("long").alias("offset"), no.alias("acked"),
                                       no.alias("polled"), no.alias("final"), "type")))
    cell = F.col("type").isNull()
    at = cell & F.col("offset").isNotNull() & F.col("partition").isNotNull()
    return (rows.filter(F.col("value").isNotNull()).groupBy(*TV).agg(
        F.count(F.when(cell, 1)).alias("cells"),
        F.count(F.when(at, 1)).alias("positions"),
        _any(F.col("acked") & F.col("final")).alias("kept"),
        _any(F.col("acked")).alias("acked"),
        _any(F.col("polled")).alias("polled"),
        _any(F.col("polled") | F.col("final")).alias("read"),
        _any(F.col("type") == "fail").alias("failed"),
        F.sum((F.col("type") == "info").cast("long")).alias("info")))


def _under(rows: DataFrame, keys: DataFrame, on: list[str]) -> DataFrame:
    """The rows of `rows` under `keys` (few: the suspects of a summary), without shuffling `rows`."""
    return rows.join(F.broadcast(keys.select(*on)), on, "left_semi")


def _indexed_cells(seen: DataFrame) -> DataFrame:
    """Distinct (topic, partition, offset, value) observations, with a few indices each."""
    return (seen.filter(F.col("offset").isNotNull() & F.col("value").isNotNull())
            .groupBy(*TP, "offset", "value")
            .agg(F.slice(F.array_sort(F.collect_set("index")), 1, 3).alias("indices")))


def _evidence(indices: Column) -> Column:
    return F.slice(F.array_sort(F.flatten(indices)), 1, _EVIDENCE_PER_ROW)


def inconsistent_offsets(seen: DataFrame, offsets: DataFrame) -> DataFrame:
    """Two different values seen at one (topic, partition, offset), by acks or reads."""
    suspects = offsets.filter(F.col("low") < F.col("high"))
    bad = (_indexed_cells(_under(seen, suspects, [*TP, "offset"])).groupBy(*TP, "offset")
           .agg(F.count("*").alias("n"), F.sort_array(F.collect_list("value")).alias("values"),
                F.collect_list("indices").alias("indices"))
           .filter(F.col("n") > 1))
    return anomaly_rows(bad, "inconsistent-offsets", _evidence(F.col("indices")),
                        F.struct("topic", "partition", "offset", F.slice("values", 1, 5).alias("values")))


def duplicates(seen: DataFrame, values: DataFrame) -> DataFrame:
    """One sent value at more than one offset (values are unique per topic)."""
    suspects = values.filter(F.col("positions") > 1)  # cells are distinct: at two offsets
    bad = (_indexed_cells(_under(seen, suspects, TV)).groupBy(*TV)
           .agg(F.count("*").alias("n"),
                F.sort_array(F.collect_list(F.struct("partition", "offset"))).alias("at"),
                F.collect_list("indices").alias("indices"))
           .filter(F.col("n") > 1))
    return anomaly_rows(bad, "duplicate", _evidence(F.col("indices")),
                        F.struct("topic", "value", F.slice("at", 1, 5).alias("at")))


def lost_writes(acked: DataFrame, finals: DataFrame, drained: DataFrame, values: DataFrame) -> DataFrame:
    """An ok send whose value is missing from the final read of its partition.

    A value seen at one cell only, acknowledged and finally read there (as nearly all
    are), is not lost; the others are checked send by send.
    """
    suspects = values.filter(F.col("acked") & ~((F.col("cells") == 1) & F.col("kept")))
    present = _under(finals, suspects, TV).select(*TP, "value").distinct()
    lost = (_under(acked, suspects, TV).join(F.broadcast(drained), TP)
            .join(present, TP + ["value"], "left_anti"))
    return anomaly_rows(lost, "lost-write", F.array("index", "final_index"),
                        F.struct("topic", "partition", "offset", "value", "process"))


def undrained_partitions(acked: DataFrame, drained: DataFrame) -> DataFrame:
    """Partitions with acknowledged sends but no ok final read: losses there are unknown."""
    return acked.select(*TP).distinct().join(drained, TP, "left_anti")


def unseen(acked: DataFrame, values: DataFrame, runs: DataFrame) -> DataFrame:
    """Acknowledged, never returned by any poll (informational), on partitions that were polled."""
    suspects = values.filter(F.col("acked") & ~F.col("polled"))
    polled = runs.select(*TP).distinct()
    missing = _under(acked, suspects, TV).join(F.broadcast(polled), TP, "left_semi")
    return anomaly_rows(missing, "unseen", F.array("index"),
                        F.struct("topic", "partition", "offset", "value", "process"))


def realtime_order(acked: DataFrame) -> DataFrame:
    """Send A completed before send B was invoked, same partition, yet offset(B) < offset(A).

    One sort per partition, by offset from the highest down: B is the anomaly when the
    earliest completion among the acks at higher offsets came before B's invoke, and
    that ack is its A (strictly before: an ack completing at B's invoke time is concurrent).
    """
    base = acked.filter(F.col("invoke_time").isNotNull())
    above = Window.partitionBy(*TP).orderBy(F.col("offset").desc()).rangeBetween(Window.unboundedPreceding, -1)
    done = F.when(F.col("time").isNotNull(), F.struct(F.col("time").alias("done"), "offset", "index", "value"))
    bad = (base.select(*TP, "offset", "index", "invoke_index", "invoke_time", "value",
                       F.min(done).over(above).alias("before"))
           .filter(F.col("before.done") < F.col("invoke_time")))
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


def held_offsets(offsets: DataFrame) -> DataFrame:
    """The (topic, partition, offset)s the final reads hold (from `offset_summary`)."""
    return offsets.filter(F.col("final") & F.col("offset").isNotNull()).select(*TP, "offset")


def final_spans(held: DataFrame) -> DataFrame:
    """Per partition whose offsets the final reads hold (`held_offsets`): how many (`held`),
    the lowest and highest, and whether they run from lowest to highest without a hole
    (`dense`: a plain topic's log; a transactional one's markers leave holes)."""
    return (held.groupBy(*TP).agg(F.count("*").alias("held"), F.min("offset").alias("low"),
                                  F.max("offset").alias("high"))
            .withColumn("dense", F.col("held") == F.col("high") - F.col("low") + 1))


def _null_safe_equal(columns, prefix: str) -> Column:
    """The rows' `columns` are the prefixed ones', a missing part matching a missing part (as
    Spark's grouping and window partitions have it)."""
    same = [F.col(c).eqNullSafe(F.col(f"{prefix}{c}")) for c in columns]
    out = same[0]
    for more in same[1:]:
        out = out & more
    return out


def _same_partition(prefix: str) -> Column:
    """The rows' (history, topic, partition) is the prefixed one's (`_null_safe_equal`)."""
    return _null_safe_equal(TP, prefix)


def final_steps(polls: DataFrame, offsets: DataFrame) -> DataFrame:
    """Every polled record with its `step`: where the final reads hold its (topic, partition,
    offset), how many offsets they hold there up to it (1, 2, ...); else null.

    Two records of a consumer follow one another without a skip or a rewind between them
    when their steps do (the second's is the first's + 1), however far apart their offsets
    are: in a transactional log, commit and abort markers and aborted records leave offset
    gaps that no read_committed reader sees and no final read holds.

    Where a partition's held offsets are dense (`final_spans`: every plain topic's) the step
    is arithmetic, offset - lowest + 1, and its records are not moved; where it holds none,
    there is no step. Only the records of the other partitions (transactional logs) are
    sorted with the offsets held there (`_counted_steps`). A small history (one shuffle
    partition) is sorted whole: its sort is cheap, and the join that tells the partitions
    apart would cost it more than it saves (0.3 s a check of 3,000 ops).
    """
    held = held_offsets(offsets)
    records = polls.select("consumer", *TP, "index", "pos", "offset")
    if shuffle_partitions(polls) == 1:
        return _counted_steps(records, held)
    spans = final_spans(held)
    placed = records.join(F.broadcast(spans.select(*(F.col(c).alias(f"span_{c}") for c in TP), "low", "high", "dense")),
                          _same_partition("span_"), "left")
    inside = F.col("dense") & (F.col("offset") >= F.col("low")) & (F.col("offset") <= F.col("high"))
    direct = placed.filter(F.coalesce(F.col("dense"), F.lit(True))).select(
        *records.columns, F.when(inside, F.col("offset") - F.col("low") + 1).alias("step"))
    sparse = placed.filter(~F.coalesce(F.col("dense"), F.lit(True))).select(*records.columns)
    keys = F.broadcast(spans.filter(~F.col("dense")).select(*(F.col(c).alias(f"span_{c}") for c in TP)))
    return direct.unionByName(_counted_steps(sparse, held.join(keys, _same_partition("span_"), "left_semi")))


def _counted_steps(records: DataFrame, held: DataFrame) -> DataFrame:
    """`final_steps` of `records` by sorting them with the `held` offsets of their partitions,
    per partition, and counting the held offsets as they run."""
    none = {c: F.lit(None).cast(records.schema[c].dataType).alias(c) for c in ("consumer", "index", "pos")}
    marks = held.select(none["consumer"], *TP, none["index"], none["pos"], "offset", F.lit(0).alias("kind"))
    upto = Window.partitionBy(*TP).orderBy("offset", "kind").rowsBetween(Window.unboundedPreceding, 0)
    final = F.col("kind") == 0
    return (marks.unionByName(records.withColumn("kind", F.lit(1)))
            .select(*records.columns, "kind",
                    F.sum(final.cast("long")).over(upto).alias("count"),
                    F.max(F.when(final, F.col("offset"))).over(upto).alias("last_held"))
            .filter(F.col("kind") == 1)
            .select(*records.columns, F.when(F.col("last_held") == F.col("offset"), F.col("count")).alias("step")))


def poll_runs(steps: DataFrame) -> DataFrame:
    """One row per poll and partition: its records' first and last offset and step (in `pos`
    order; `steps` is `final_steps`), and whether they run on without a skip or a rewind
    inside the poll (`run`: contiguous positions, and offset - pos or step - pos constant).

    A hash aggregation: a poll's records of a partition fold into one row where they are read.
    """
    contiguous = ((F.col("n") == F.col("n_offsets")) & (F.col("last_pos") - F.col("first_pos") + 1 == F.col("n")))
    shift, step_shift = F.col("offset") - F.col("pos"), F.col("step") - F.col("pos")
    return (steps.groupBy("consumer", *TP, "index")
            .agg(F.count("*").alias("n"), F.count("offset").alias("n_offsets"), F.count("step").alias("n_steps"),
                 F.min("pos").alias("first_pos"), F.max("pos").alias("last_pos"),
                 F.min(shift).alias("low_shift"), F.max(shift).alias("high_shift"),
                 F.min(step_shift).alias("low_step_shift"), F.max(step_shift).alias("high_step_shift"),
                 F.min_by("offset", "pos").alias("first_offset"), F.max_by("offset", "pos").alias("last_offset"),
                 F.min_by("step", "pos").alias("first_step"), F.max_by("step", "pos").alias("last_step"))
            .withColumn("run", contiguous & ((F.col("low_shift") == F.col("high_shift"))
                                             | ((F.col("n_steps") == F.col("n"))
                                                & (F.col("low_step_shift") == F.col("high_step_shift")))))
            .drop("n_offsets", "n_steps", "low_shift", "high_shift", "low_step_shift", "high_step_shift"))


def assign_invokes(ops: DataFrame) -> DataFrame:
    """Every assign's invoke (it may take effect any time after): consumer, index, seek, and
    the partitions it names (null when it names none that could be read). A subscribe is
    one that names none: the group decides what the consumer reads, and from where."""
    return (ops.filter(F.col("f").isin("assign", "subscribe") & (F.col("type") == "invoke"))
            .select(HISTORY, "consumer", "index", "seek", "partitions"))


def kept_positions(assigns: DataFrame) -> DataFrame:
    """(consumer, topic, partition, index) for each partition an assign keeps: it names the
    partition and does not seek (`seek` null). The consumer then goes on from where it was
    in that partition, as the kafka-log workload's does (workloads.kafka_log)."""
    return (assigns.filter(F.col("seek").isNull() & F.col("partitions").isNotNull())
            .select(HISTORY, "consumer", "index", F.explode("partitions").alias("tp"))
            .select(HISTORY, "consumer", F.col("tp.topic").alias("topic"), F.col("tp.partition").alias("partition"),
                    "index")
            .distinct())


def _between(events: DataFrame, spans: DataFrame, by: list[str]) -> DataFrame:
    """Per span of `spans` (its columns: `by`, others, prev_index and index): how many
    `events` (`by`, index) of the same `by` lie strictly between prev_index and index.

    One sort of the events with the span ends, per `by`, and a running count: n log n.
    (Indices are unique: an event never sits at a span's end.)"""
    extra = [c for c in spans.columns if c not in by]
    marks = events.select(*by, F.col("index").alias("at"), F.lit(0).alias("kind"),
                          *(F.lit(None).cast(spans.schema[c].dataType).alias(c) for c in extra), F.lit(0).alias("sign"))
    low = spans.select(*by, F.col("prev_index").alias("at"), F.lit(1).alias("kind"), *extra, F.lit(-1).alias("sign"))
    high = spans.select(*by, F.col("index").alias("at"), F.lit(1).alias("kind"), *extra, F.lit(1).alias("sign"))
    before = Window.partitionBy(*by).orderBy("at", "kind").rowsBetween(Window.unboundedPreceding, 0)
    return (marks.unionByName(low).unionByName(high)
            .withColumn("below", F.sum((F.col("kind") == 0).cast("long")).over(before))
            .filter(F.col("kind") == 1)
            .groupBy(*spans.columns).agg(F.sum(F.col("below") * F.col("sign")).alias("n")))


def poll_sequences(ops: DataFrame, polls: DataFrame, runs: DataFrame, moved: DataFrame | None = None) -> DataFrame:
    """Each polled record that does not follow its consumer's previous record of the same
    partition by one offset nor by one step (final_steps), beside that previous record
    (prev_offset, prev_index): only these can be a skip or a rewind.

    Between polls, a poll's first record follows the previous poll's last one; within a
    poll only the polls whose records do not run by one offset or one step (`poll_runs`:
    few, in a transactional log as in a plain one) are looked at record by record. Positions are judged per consumer and partition: an assign of the consumer
    (its invoke: it may take effect any time after) resets the partitions it drops or
    seeks, and a pair that breaks the sequence across such an assign is dropped. An
    assign that keeps a partition without seeking (`kept_positions`) leaves its position
    as it was: a later skip or rewind there is judged as if it were not there.

    Whether an assign between two polls resets a partition is told by counting, per
    pair of polls: the consumer's assigns between them, and those that keep the
    partition; fewer kept than made means one reset it. Only pairs that break the
    sequence (few) are counted, against the assigns (few). In a consumer group, `moved`
    (checkers.consumer_groups.moves) names the partitions each rebalance revoked or assigned
    at the index of the poll that saw it, before that poll's records: one in (previous
    poll, poll] resets that partition only.
    """
    by_poll = Window.partitionBy("consumer", *TP).orderBy("index")
    # Two polls' records that follow one another by one step (final_steps) are no break,
    # however far apart their offsets: a transactional log's markers between them.
    between = (runs.select("consumer", *TP, F.col("first_offset").alias("offset"), "index",
                           F.lag("last_offset").over(by_poll).alias("prev_offset"),
                           F.lag("index").over(by_poll).alias("prev_index"),
                           F.coalesce(F.col("first_step") == F.lag("last_step").over(by_poll) + 1,
                                      F.lit(False)).alias("step"))
               .filter(~F.col("step")).drop("step"))
    in_poll = Window.partitionBy("consumer", *TP, "index").orderBy("pos")
    rough = _under(polls, runs.filter(~F.col("run")), ["consumer", *TP, "index"])
    within = rough.select("consumer", *TP, "offset", "index",
                          F.lag("offset").over(in_poll).alias("prev_offset"),
                          F.lag("index").over(in_poll).alias("prev_index"))
    breaks = F.col("offset") != F.col("prev_offset") + 1
    # Only pairs of polls can have an assign between them: within a poll there is none
    # (and the records of rough polls, read from every polled record, are read once).
    # Read five times below (the spans, and the pairs themselves): computed once, as the
    # window that finds them sorts every poll (a 10M-op check sorted them five times).
    across = shared(between.filter(breaks))
    span = ["consumer", *TP, "prev_index", "index"]
    spans = across.select(*span).distinct()
    assigns = assign_invokes(ops)
    made = _between(assigns.select(HISTORY, "consumer", "index"), spans, [HISTORY, "consumer"])
    kept = _between(kept_positions(assigns), spans, ["consumer", *TP]).withColumnRenamed("n", "kept")
    reset = made.join(kept, span, "left")
    resets = F.coalesce(F.col("kept"), F.lit(0)) < F.col("n")
    if moved is not None:
        shifted = _between(moved, spans, ["consumer", *TP]).withColumnRenamed("n", "moved")
        reset = reset.join(shifted, span, "left")
        resets = resets | (F.coalesce(F.col("moved"), F.lit(0)) > 0)
    reset = reset.filter(resets)
    return across.join(reset.select(*span), span, "left_anti").unionByName(within.filter(breaks))


def nonmonotonic_polls(sequences: DataFrame) -> DataFrame:
    """A consumer's next record of a partition is not after its last one, with no assign
    between that dropped or sought that partition."""
    bad = sequences.filter(F.col("offset") <= F.col("prev_offset"))
    return anomaly_rows(bad, "nonmonotonic-poll", F.array("prev_index", "index"),
                        F.struct("consumer", "topic", "partition", "prev_offset", "offset"))


def poll_skips(sequences: DataFrame, offsets: DataFrame) -> DataFrame:
    """Consecutive records of a consumer jump over offsets that hold values in the final read.

    Counting final offsets strictly between the two is a range query. Where a partition's
    final offsets are dense (lowest to highest without a hole, as a plain topic's log is)
    it is arithmetic; elsewhere it is answered by sorting the gap ends together with the
    final offsets of the partition and keeping a running count, so the cost stays
    n log n however many gaps there are.

    A partition no ok final read holds offsets of is not judged (kafka_findings says so): its
    gaps may be markers and aborted records. (It was joined with a missing span once, and as
    Spark's least and greatest pass over a null, every gap there counted as skipped: false
    poll-skips in a transactional partition whose final reads all ended incomplete.)
    """
    gaps = (sequences.filter(F.col("offset") > F.col("prev_offset") + 1)
            .withColumn("gap", F.monotonically_increasing_id()))
    held = held_offsets(offsets)
    span = final_spans(held)
    placed = gaps.join(F.broadcast(span), TP)
    inside = F.least(F.col("offset") - 1, F.col("high")) - F.greatest(F.col("prev_offset") + 1, F.col("low")) + 1
    direct = placed.filter(F.col("dense")).withColumn("skipped", F.greatest(inside, F.lit(0)))
    sparse = placed.filter(~F.col("dense")).drop("held", "low", "high", "dense")
    # Only the partitions where a gap needs counting are sorted (none, most often).
    marks = _under(held, sparse.select(*TP).distinct(), TP).select(
        *TP, "offset", F.lit(0).alias("kind"), F.lit(None).cast("long").alias("gap"), F.lit(0).alias("sign"))
    # Final offsets <= prev_offset (query after them at a tie) are subtracted from those < offset.
    low = sparse.select(*TP, F.col("prev_offset").alias("offset"), F.lit(1).alias("kind"), "gap",
                        F.lit(-1).alias("sign"))
    high = sparse.select(*TP, "offset", F.lit(-1).alias("kind"), "gap", F.lit(1).alias("sign"))
    in_offsets = Window.partitionBy(*TP).orderBy("offset", "kind").rowsBetween(Window.unboundedPreceding, 0)
    counted = (marks.unionByName(low).unionByName(high)
               .withColumn("below", F.sum((F.col("kind") == 0).cast("long")).over(in_offsets))
               .filter(F.col("gap").isNotNull())
               .groupBy("gap").agg(F.sum(F.col("below") * F.col("sign")).alias("skipped")))
    bad = (direct.select(*sparse.columns, "skipped")
           .unionByName(sparse.join(counted, "gap").select(*sparse.columns, "skipped"))
           .filter(F.col("skipped") > 0))
    return anomaly_rows(bad, "poll-skip", F.array("prev_index", "index"),
                        F.struct("consumer", "topic", "partition", "prev_offset", "offset", "skipped"))


def aborted_reads(sends: DataFrame, reads: DataFrame, values: DataFrame) -> DataFrame:
    """A send that completed `fail` is seen by a poll or a final read."""
    suspects = values.filter(F.col("failed") & F.col("read"))
    failed = _under(sends.filter(F.col("type") == "fail"), suspects, TV).select(*TV, "process", "index")
    seen = (_under(reads, suspects, TV)
            .select(*TV, F.col("index").alias("read_index"),
                    F.col("partition").alias("read_partition"), F.col("offset").alias("read_offset"))
            .groupBy(*TV)
            .agg(F.slice(F.array_sort(F.collect_set("read_index")), 1, _EVIDENCE_PER_ROW - 1).alias("reads"),
                 F.min(F.struct("read_partition", "read_offset")).alias("at")))
    bad = failed.join(seen, TV)
    return anomaly_rows(bad, "aborted-read", F.concat(F.array("index"), F.col("reads")),
                        F.struct("topic", "value", "process", F.col("at.read_partition").alias("partition"),
                                 F.col("at.read_offset").alias("offset")))


def indeterminate_seen(sends: DataFrame, values: DataFrame) -> DataFrame:
    """Info sends whose value was read: they happened after all (counted, never an anomaly)."""
    return _under(sends.filter(F.col("type") == "info"), values.filter((F.col("info") > 0) & F.col("read")),
                  TV)


def unread_polled_partitions(runs: DataFrame, drained: DataFrame) -> DataFrame:
    """Partitions polled but without an ok final read: skips there cannot be counted (poll-skip
    counts the offsets the final read holds)."""
    return runs.select(*TP).distinct().join(drained, TP, "left_anti")


def kafka_findings(tables: Tables) -> Findings:
    """Anomaly rows of every Kafka checker, the partitions where lost-write or poll-skip cannot
    be judged, and how many info sends were seen after all. With txns (format 2) the txn
    checks (checkers.txn) too: transactions are Kafka's, and so are their lost writes and
    aborted reads.

    The summaries several checkers share are computed once (checkers.checker.shared).
    """
    ops = tables.ops
    sends = send_completions(tables.sends)
    acked = acks(sends)
    polls = poll_records(tables.records)
    finals = final_records(tables.records)
    drained = final_partitions(ops)
    seen = observations(acked, polls, finals)
    offsets = shared(offset_summary(seen))
    values = shared(value_summary(cells(seen, offsets), sends))
    # In a consumer group, each assignment a poll saw is a record at its start position - 1
    # where positions are judged (checkers.consumer_groups).
    group = tables.group
    positions = polls if group is None else polls.unionByName(start_records(group), allowMissingColumns=True)
    runs = shared(poll_runs(final_steps(positions, offsets)))
    reads = polls.drop("consumer", "pos").unionByName(finals.drop("pos"))
    sequences = shared(poll_sequences(ops, positions, runs, None if group is None else moves(group)))
    found = [
        lost_writes(acked, finals, drained, values),
        inconsistent_offsets(seen, offsets),
        duplicates(seen, values),
        realtime_order(acked),
        nonmonotonic_polls(sequences),
        poll_skips(sequences, offsets),
        nonmonotonic_sends(acked),
        aborted_reads(sends, reads, values),
        unseen(acked, values, runs),
    ]
    if group is not None:
        found.append(unexplained_starts(group))
        if tables.txns is not None:
            found.append(unprocessed_inputs(group, polls, tables.txns, held_offsets(offsets)))
    rows = found[0]
    for more in found[1:]:
        rows = rows.unionByName(more)
    # Sends answered ok name their partition even where no offset came back (acks=0).
    sent = sends.filter((F.col("type") == "ok") & F.col("partition").isNotNull())
    undrained = undrained_partitions(sent, drained)
    if tables.mops is not None and tables.txns is not None:
        # The txn checks read this checker's rows (int_poll_orders): computed once.
        rows = shared(gathered(rows))
        txn_rows, txn_undrained = txn_anomalies(tables, rows)
        rows, undrained = rows.unionByName(txn_rows), undrained.unionByName(txn_undrained).distinct()
    where = F.concat_ws("/", "topic", "partition")
    order = F.concat_ws("/", "topic", padded(F.col("partition")))
    return Findings(
        rows=rows,
        not_judged=[
            not_judged_rows(undrained, "lost-write",
                            F.concat(F.lit("no final read of "), where, F.lit(" which had acknowledged sends")), order),
            not_judged_rows(unread_polled_partitions(runs, drained), "poll-skip",
                            F.concat(F.lit("no final read of "), where, F.lit(" which was polled")), order)],
        stats={"info_sends_seen": stat_rows(indeterminate_seen(sends, values), F.count(F.lit(1)))})


def _proves(counts: Counts) -> bool:
    """An ok send, a committed txn's send, records polled (by a poll or a txn's poll micro-op:
    the checks read them whatever the txn's end) or an ok final read."""
    return bool(counts.ok("send") or counts.ok_mops("send") or counts.records.get("poll")
                or counts.ok("final-read"))


CHECKER = Checker(name="kafka", anomalies=KAFKA, reads=_proves, proves=_proves, find=kafka_findings)
