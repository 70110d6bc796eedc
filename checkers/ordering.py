"""Ordering-service anomalies, one transform each: history ops in, anomaly rows out.

An OSN's chain for a channel is every block it delivered in any ok deliver, one row
per (number, hash). Hashes are compared as lower-case hex.

Block bytes: when a delivered block carries `data` (hex-encoded marshalled
envelopes, an optional field of this checker), data_hash is recomputed as SHA-256 of
their concatenation, and the header hash as SHA-256 of the DER encoding of
SEQUENCE{INTEGER number, OCTET STRING previous_hash, OCTET STRING data_hash} (Fabric
v1.x common/block.go); a mismatch is a broken-chain. Without `data` only the chain of
reported hashes is checked. Both are computed in Spark SQL, never in Python.
"""
from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from checkers.anomaly import anomaly_rows

CHAIN = ["channel", "osn"]
_EVIDENCE_PER_ROW = 8


def _hex(c: Column) -> Column:
    return F.lower(F.coalesce(c, F.lit("")))


def _der_length(n: Column) -> Column:
    """DER length octets (hex) for a content of n bytes."""
    return (F.when(n < 128, F.lpad(F.hex(n), 2, "0"))
            .when(n < 256, F.concat(F.lit("81"), F.lpad(F.hex(n), 2, "0")))
            .otherwise(F.concat(F.lit("82"), F.lpad(F.hex(n), 4, "0"))))


def _der(tag: str, content_hex: Column) -> Column:
    # The lambda binds the content once: nesting plain expressions would copy each inner
    # encoding into every length branch, and Spark's generated code outgrows 64 KB.
    return F.transform(F.array(content_hex),
                       lambda c: F.concat(F.lit(tag), _der_length(F.length(c) / 2), c))[0]


def _der_unsigned(n: Column) -> Column:
    """Minimal two's-complement content octets (hex) of a non-negative integer."""
    h = F.hex(n)
    even = F.when(F.length(h) % 2 == 1, F.concat(F.lit("0"), h)).otherwise(h)
    return F.when(F.substring(even, 1, 1).isin(*"89ABCDEF"), F.concat(F.lit("00"), even)).otherwise(even)


def header_hash(number: Column, previous_hash: Column, data_hash: Column) -> Column:
    """SHA-256 (hex) of the DER-encoded block header, as Fabric hashes it."""
    body = F.concat(_der("02", _der_unsigned(number)), _der("04", _hex(previous_hash)),
                    _der("04", _hex(data_hash)))
    return F.sha2(F.unhex(_der("30", body)), 256)


def data_hash(data: Column) -> Column:
    """SHA-256 (hex) of the concatenated envelopes given as hex strings."""
    return F.sha2(F.unhex(F.concat_ws("", data)), 256)


def delivered_blocks(ops: DataFrame) -> DataFrame:
    """One row per block an OSN delivered for a channel, with the delivers that carried it."""
    v = F.col("value")
    return (
        ops.filter((F.col("f") == "deliver") & (F.col("type") == "ok"))
        .select("index", v["channel"].alias("channel"), v["osn"].alias("osn"),
                F.explode(v["blocks"]).alias("b"))
        .select("index", *CHAIN, F.col("b.number").alias("number"), _hex(F.col("b.hash")).alias("hash"),
                _hex(F.col("b.previous_hash")).alias("previous_hash"),
                _hex(F.col("b.data_hash")).alias("data_hash"), F.col("b.txs").alias("txs"),
                F.col("b.data").alias("data"))
        .groupBy(*CHAIN, "number", "hash")
        .agg(F.first("previous_hash").alias("previous_hash"), F.first("data_hash").alias("data_hash"),
             F.first("txs").alias("txs"), F.first("data", ignorenulls=True).alias("data"),
             F.min("index").alias("index"))
    )


def heights(ops: DataFrame) -> DataFrame:
    """Each OSN's height per channel (highest delivered number + 1, 0 for none), and its last deliver."""
    v = F.col("value")
    return (
        ops.filter((F.col("f") == "deliver") & (F.col("type") == "ok"))
        .select("index", v["channel"].alias("channel"), v["osn"].alias("osn"),
                F.explode_outer(v["blocks"]["number"]).alias("number"))
        .groupBy(*CHAIN)
        .agg(F.coalesce(F.max("number") + 1, F.lit(0)).alias("height"), F.max("index").alias("index"))
    )


def block_forks(chain: DataFrame) -> DataFrame:
    """Two OSNs hold different blocks (header hash) at one number of a channel."""
    bad = (chain.groupBy("channel", "number")
           .agg(F.countDistinct("hash").alias("n"),
                F.sort_array(F.collect_list(F.struct("osn", "hash"))).alias("held"),
                F.collect_list("index").alias("indices"))
           .filter(F.col("n") > 1))
    return anomaly_rows(bad, "block-fork", F.slice(F.array_sort("indices"), 1, _EVIDENCE_PER_ROW),
                        F.struct("channel", "number", F.slice("held", 1, 5).alias("held")))


def broken_chains(chain: DataFrame) -> DataFrame:
    """A block whose previous_hash is not its predecessor's hash on the same OSN, or whose
    data_hash / header hash do not match its bytes (when it carries them)."""
    w = Window.partitionBy(*CHAIN).orderBy("number", "hash")
    linked = chain.select("*", F.lag("number").over(w).alias("prev_number"),
                          F.lag("hash").over(w).alias("prev_hash"),
                          F.lag("index").over(w).alias("prev_index"))
    has_data = F.col("data").isNotNull()
    hashed = (linked.withColumn("computed_data_hash", data_hash(F.col("data")))
              .withColumn("computed_hash", header_hash(F.col("number"), F.col("previous_hash"),
                                                       F.col("computed_data_hash"))))
    reason = (
        F.when((F.col("prev_number") == F.col("number") - 1) & (F.col("previous_hash") != F.col("prev_hash")),
               F.lit("previous_hash"))
        .when(has_data & (F.col("computed_data_hash") != F.col("data_hash")), F.lit("data_hash"))
        .when(has_data & (F.col("computed_hash") != F.col("hash")), F.lit("hash"))
    )
    bad = hashed.withColumn("mismatch", reason).filter(F.col("mismatch").isNotNull())
    evidence = F.when(F.col("mismatch") == "previous_hash", F.array("prev_index", "index")).otherwise(F.array("index"))
    return anomaly_rows(bad, "broken-chain", evidence,
                        F.struct("channel", "osn", "number", "mismatch", "previous_hash",
                                 F.when(F.col("mismatch") == "previous_hash", F.col("prev_hash"))
                                 .alias("predecessor_hash")))


def chain_txs(chain: DataFrame) -> DataFrame:
    """Each tx id at its place (block number, position) in an OSN's chain."""
    return chain.select(*CHAIN, "number", "index", F.posexplode("txs").alias("pos", "tx"))


def broadcast_txs(ops: DataFrame) -> DataFrame:
    """(channel, tx) of every broadcast this history invoked, whatever its outcome."""
    v = F.col("value")
    return (ops.filter((F.col("f") == "broadcast") & (F.col("type") == "invoke"))
            .select(v["channel"].alias("channel"), v["tx"].alias("tx")).distinct())


def duplicate_txs(txs: DataFrame, ours: DataFrame) -> DataFrame:
    """One tx id this history broadcast (`ours`) in more than one place of one OSN's chain.
    A channel outlives a run on a reused cluster: the blocks of earlier runs are delivered
    too, and their duplicates were those runs' to report."""
    bad = (txs.join(ours, ["channel", "tx"], "left_semi")
           .groupBy(*CHAIN, "tx")
           .agg(F.count("*").alias("n"), F.sort_array(F.collect_list(F.struct("number", "pos"))).alias("at"),
                F.collect_set("index").alias("indices"))
           .filter(F.col("n") > 1))
    return anomaly_rows(bad, "duplicate-tx", F.slice(F.array_sort("indices"), 1, _EVIDENCE_PER_ROW),
                        F.struct("channel", "osn", "tx", F.slice("at", 1, 5).alias("at")))


def successful_broadcasts(ops: DataFrame) -> DataFrame:
    v = F.col("value")
    return (ops.filter((F.col("f") == "broadcast") & (F.col("type") == "ok") & (v["status"] == "SUCCESS"))
            .select("index", "process", v["channel"].alias("channel"), v["osn"].alias("osn"),
                    v["tx"].alias("tx")))


def lost_txs(broadcasts: DataFrame, txs: DataFrame, delivered: DataFrame) -> DataFrame:
    """Broadcast answered SUCCESS, yet the tx is in no block of any OSN."""
    lost = (broadcasts.join(delivered.select("channel").distinct(), "channel", "left_semi")
            .join(txs.select("channel", "tx").distinct(), ["channel", "tx"], "left_anti"))
    return anomaly_rows(lost, "lost-tx", F.array("index"), F.struct("channel", "tx", "osn", "process"))


def lagging_osns(height: DataFrame) -> DataFrame:
    """An OSN whose height for a channel is below the channel's highest (verdict unknown)."""
    top = height.groupBy("channel").agg(F.max("height").alias("channel_height"))
    bad = height.join(top, "channel").filter(F.col("height") < F.col("channel_height"))
    return anomaly_rows(bad, "lagging-osn", F.array("index"),
                        F.struct("channel", "osn", "height", "channel_height"))


def undelivered_channels(broadcasts: DataFrame, height: DataFrame) -> DataFrame:
    """Channels with SUCCESS broadcasts but no ok deliver: losses there are unknown."""
    return broadcasts.select("channel").distinct().join(height.select("channel"), "channel", "left_anti")


def ordering_anomalies(ops: DataFrame) -> tuple[DataFrame, DataFrame]:
    """(anomaly rows of every ordering checker, channels whose losses cannot be judged).

    The chain, which several checkers share, is persisted: the caller clears the cache.
    """
    chain = delivered_blocks(ops).persist()
    txs = chain_txs(chain)
    height = heights(ops)
    broadcasts = successful_broadcasts(ops)
    rows = (block_forks(chain)
            .unionByName(broken_chains(chain))
            .unionByName(lost_txs(broadcasts, txs, height))
            .unionByName(duplicate_txs(txs, broadcast_txs(ops)))
            .unionByName(lagging_osns(height)))
    return rows, undelivered_channels(broadcasts, height)
