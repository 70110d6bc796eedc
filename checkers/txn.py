"""Transaction anomalies (history format 2), one transform each: tables in, anomaly rows out.

Kafka's transactions promise atomic visibility to read_committed readers: every send of a
committed txn becomes visible, none of an aborted one ever does, and nothing of a txn is
visible before it commits (Jepsen's jepsen.tests.kafka and its 2022 and 2024 analyses).
Reads are those of polls (plain, or micro-ops of any completed txn: Kafka's pollers must
return safe data whether or not their own txn commits) and final reads, unless marked
read_uncommitted. A txn that completed `info` may or may not have committed: never lost,
never aborted, but all or nothing like any other.

Anomalies (checkers.verdict says which fail a verdict):

- aborted-read: a send of a txn that completed fail is seen by a read_committed read;
- lost-write: a send of a committed txn, on a partition with a final read, is not in it;
- torn-txn: a committed or indeterminate txn some of whose sends (on partitions with final
  reads) the final reads hold, and some not;
- precommitted-read: a txn's poll returns a value the same txn sent (Kafka's sends are
  invisible to every poller until their txn commits);
- int-nonmonotonic-send: a txn's later send to a partition lands at or before its earlier one;
- int-poll-skip / int-nonmonotonic-poll: within one txn, a consumer's next record of a
  partition jumps over offsets the final read holds, or does not move forward (the kafka
  checker's poll-skip and nonmonotonic-poll between two records of one txn).

Cost: sends and final records meet in one aggregation per (topic, value) (values are unique
per topic); reads are looked at only where they may hold an aborted value (a semi-join
against the few aborted sends), and within-txn orders only where a txn has two sends to a
partition.
"""
from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from checkers.anomaly import COLUMNS, anomaly_rows
from checkers.checker import TP, TV, shared
from checkers.ingest.history import HISTORY, Tables
from checkers.ingest.txn_schema import POLL, READ_UNCOMMITTED, SEND
from checkers.txn_cycles import cycle_anomalies

# A txn of a history of the batch (checkers.ingest.history.HISTORY): txns are known by their index.
TXN = [HISTORY, "index"]
_EVIDENCE_PER_ROW = 8


def committed(isolation: Column) -> Column:
    """Whether a read was read_committed (the default where the history does not say)."""
    return isolation.isNull() | (isolation != READ_UNCOMMITTED)


def txn_sends(mops: DataFrame) -> DataFrame:
    """Every send micro-op of a txn completion: the txn's index, process and type, its place."""
    return (mops.filter(F.col("mf") == SEND)
            .select(*TXN, "process", "type", "pos", "topic", "partition", "offset", "value"))


def committed_reads(records: DataFrame) -> DataFrame:
    """Records of polls and final reads that were read_committed."""
    return records.filter(committed(F.col("isolation")))


def committed_finals(records: DataFrame) -> DataFrame:
    """Records of read_committed final reads."""
    return records.filter((F.col("f") == "final-read") & committed(F.col("isolation"))).select(
        *TP, "offset", "value", "index")


def drained_partitions(ops: DataFrame) -> DataFrame:
    """Partitions with an ok read_committed final read, and the last such read's index."""
    return (ops.filter((F.col("f") == "final-read") & (F.col("type") == "ok") & committed(F.col("isolation")))
            .groupBy(*TP).agg(F.max("index").alias("final_index")))


def visibility(sends: DataFrame, finals: DataFrame, drained: DataFrame) -> DataFrame:
    """Each send of a txn with whether the final reads hold its value (`visible`) and whether
    they can say (`judged`: its partition was drained), beside that partition's final read.

    One aggregation over sends and final records, keyed by (topic, value).
    """
    send = F.struct("index", "process", "type", "pos", "partition", "offset").alias("send")
    mine = sends.select(*TV, send, F.lit(None).cast("long").alias("seen"))
    rows = mine.unionByName(finals.select(*TV, F.lit(None).cast(mine.schema["send"].dataType)
                                          .alias("send"), F.col("index").alias("seen")))
    by_value = (rows.filter(F.col("value").isNotNull()).groupBy(*TV)
                .agg(F.max("send").alias("send"), F.max("seen").alias("seen"))
                .filter(F.col("send").isNotNull()))
    return (by_value.select(*TV, "send.*", F.col("seen").isNotNull().alias("visible"))
            .join(F.broadcast(drained), TP, "left")
            .withColumn("judged", F.col("final_index").isNotNull()))


def undrained_partitions(sends: DataFrame, drained: DataFrame) -> DataFrame:
    """Partitions committed txns sent to without a final read: losses there are unknown."""
    return (sends.filter((F.col("type") == "ok") & F.col("partition").isNotNull()).select(*TP).distinct()
            .join(drained, TP, "left_anti"))


def lost_writes(seen: DataFrame) -> DataFrame:
    """A send of a committed txn missing from the final read of its partition."""
    lost = seen.filter((F.col("type") == "ok") & F.col("judged") & ~F.col("visible"))
    return anomaly_rows(lost, "lost-write", F.array("index", "final_index"),
                        F.struct("topic", "partition", "offset", "value", "process", F.col("index").alias("txn")))


def aborted_reads(sends: DataFrame, reads: DataFrame) -> DataFrame:
    """A send of an aborted (fail) txn seen by a read_committed read."""
    failed = sends.filter(F.col("type") == "fail").select(*TV, "process", F.col("index").alias("txn"))
    seen = (reads.join(F.broadcast(failed.select(*TV)), TV, "left_semi")
            .groupBy(*TV)
            .agg(F.slice(F.array_sort(F.collect_set("index")), 1, _EVIDENCE_PER_ROW - 1).alias("reads"),
                 F.min(F.struct("partition", "offset")).alias("at")))
    bad = failed.join(seen, TV)
    return anomaly_rows(bad, "aborted-read", F.concat(F.array("txn"), F.col("reads")),
                        F.struct("topic", "value", "process", "txn", F.col("at.partition").alias("partition"),
                                 F.col("at.offset").alias("offset"), "reads"))


def torn_txns(seen: DataFrame) -> DataFrame:
    """A committed or indeterminate txn whose sends the final reads hold in part.

    Only sends on drained partitions are judged; a txn needs two of them to be torn.
    """
    judged = seen.filter(F.col("type").isin("ok", "info") & F.col("judged"))
    # Counts first (a cheap aggregate): only the few txns seen in part are listed in detail.
    part = (judged.groupBy(*TXN).agg(F.count("*").alias("n"), F.count(F.when(F.col("visible"), 1)).alias("v"))
            .filter((F.col("v") > 0) & (F.col("v") < F.col("n"))))
    where = F.struct("topic", "partition", "value")
    torn = (judged.join(F.broadcast(part.select(*TXN)), TXN, "left_semi").groupBy(*TXN, "process", "type")
            .agg(F.sort_array(F.collect_list(F.when(F.col("visible"), where))).alias("visible"),
                 F.sort_array(F.collect_list(F.when(~F.col("visible"), where))).alias("missing"),
                 F.array_sort(F.collect_set("final_index")).alias("finals"))
            .filter((F.size("visible") > 0) & (F.size("missing") > 0)))
    return anomaly_rows(torn, "torn-txn", F.concat(F.array("index"), F.slice("finals", 1, _EVIDENCE_PER_ROW - 1)),
                        F.struct(F.col("index").alias("txn"), "process", "type", F.slice("visible", 1, 5).alias("visible"),
                                 F.slice("missing", 1, 5).alias("missing")))


def txn_polls(mops: DataFrame, records: DataFrame) -> DataFrame:
    """The read_committed records of txns' poll micro-ops (records under a txn's index)."""
    polled = mops.filter(F.col("mf") == POLL).select(*TXN).distinct()
    return (records.filter((F.col("f") == "poll") & committed(F.col("isolation")))
            .join(polled, TXN, "left_semi"))


def precommitted_reads(sends: DataFrame, polls: DataFrame) -> DataFrame:
    """A txn's poll returned a value the same txn sent."""
    own = polls.select("index", *TV, "partition", "offset").join(
        sends.select("index", *TV, "process"), ["index", *TV])
    return anomaly_rows(own, "precommitted-read", F.array("index"),
                        F.struct(F.col("index").alias("txn"), "process", "topic", "partition", "offset", "value"))


def int_nonmonotonic_sends(sends: DataFrame) -> DataFrame:
    """Within one txn, a later send to a partition lands at or before an earlier one."""
    key = ["index", *TP]
    placed = sends.filter(F.col("offset").isNotNull())
    several = placed.groupBy(*key).count().filter(F.col("count") > 1)
    in_txn = Window.partitionBy(*key).orderBy("pos")
    bad = (placed.join(several, key, "left_semi")
           .select(*key, "process", "pos", "offset", "value", F.lag("offset").over(in_txn).alias("prev_offset"),
                   F.lag("value").over(in_txn).alias("prev_value"))
           .filter(F.col("offset") <= F.col("prev_offset")))
    return anomaly_rows(bad, "int-nonmonotonic-send", F.array("index"),
                        F.struct(F.col("index").alias("txn"), "process", "topic", "partition",
                                 F.array("prev_offset", "offset").alias("offsets"),
                                 F.array("prev_value", "value").alias("values")))


def int_poll_orders(kafka_rows: DataFrame, txns: DataFrame) -> DataFrame:
    """int-poll-skip and int-nonmonotonic-poll: the poll-skips and nonmonotonic-polls the kafka
    checker found between two records of one txn, named again.

    A txn's polls are among the records the format-1 checks read (checkers.kafka), which
    compare a consumer's consecutive records within one op as well as across ops: a pair within
    one op has that op's index as its only evidence. Of those few rows, the ones of a txn are
    internal; looking them up costs nothing next to ordering every polled record again.
    """
    inner = (kafka_rows.filter(F.col("anomaly").isin("poll-skip", "nonmonotonic-poll") & (F.size("evidence") == 1))
             .withColumn("index", F.col("evidence")[0]))
    of_txns = txns.select(*TXN).join(F.broadcast(inner.select(*TXN).distinct()), TXN, "left_semi")
    return (inner.join(of_txns, TXN, "left_semi")
            .withColumn("anomaly", F.concat(F.lit("int-"), F.col("anomaly")))
            .select(*COLUMNS))


def txn_anomalies(tables: Tables, kafka_rows: DataFrame) -> tuple[DataFrame, DataFrame]:
    """(anomaly rows of every txn check, partitions whose losses cannot be judged) of a history
    with txns (tables.mops and tables.txns set); `kafka_rows` are the kafka checker's
    (checkers.kafka), of which int_poll_orders names the txns' own.

    The frames several checks read are computed once (checkers.checker.shared)."""
    assert tables.mops is not None and tables.txns is not None
    sends = shared(txn_sends(tables.mops))
    finals = committed_finals(tables.records)
    drained = drained_partitions(tables.ops)
    seen = shared(visibility(sends, finals, drained))
    reads = committed_reads(tables.records).select(*TP, "offset", "value", "index")
    polls = shared(txn_polls(tables.mops, tables.records))
    found = [
        aborted_reads(sends, reads),
        lost_writes(seen),
        torn_txns(seen),
        precommitted_reads(sends, polls),
        int_nonmonotonic_sends(sends),
        int_poll_orders(kafka_rows, tables.txns),
        cycle_anomalies(sends, polls, finals, tables.txns),
    ]
    rows = found[0]
    for more in found[1:]:
        rows = rows.unionByName(more)
    return rows, undrained_partitions(sends, drained)
