"""Explicit Spark schemas for history format version 1 (DESIGN.md).

`value` is polymorphic: its schema is the union of every op's shape. The shapes do
not clash, and Spark's JSON reader nulls only a field whose type does not match, so
nemesis values (free-form) cannot spoil a line.

Optional block fields this checker understands beyond the contract: `data`, a list of
hex-encoded marshalled envelopes; when present, data_hash and the header hash are
recomputed from it (see checkers.ordering).
"""
from __future__ import annotations

from pyspark.sql.types import (
    ArrayType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

RECORD = StructType([
    StructField("topic", StringType()),
    StructField("partition", IntegerType()),
    StructField("offset", LongType()),
    StructField("value", LongType()),
])

BLOCK = StructType([
    StructField("number", LongType()),
    StructField("hash", StringType()),
    StructField("previous_hash", StringType()),
    StructField("data_hash", StringType()),
    StructField("txs", ArrayType(StringType())),
    StructField("last_offset", LongType()),
    StructField("data", ArrayType(StringType())),
])

VALUE = StructType([
    # send
    StructField("topic", StringType()),
    StructField("key", StringType()),
    StructField("value", LongType()),
    StructField("partition", IntegerType()),
    StructField("offset", LongType()),
    # assign, poll
    StructField("consumer", StringType()),
    StructField("partitions", ArrayType(ArrayType(StringType()))),
    StructField("seek", StringType()),
    StructField("records", ArrayType(RECORD)),
    # final-read
    StructField("high_watermark", LongType()),
    # broadcast, deliver
    StructField("channel", StringType()),
    StructField("osn", StringType()),
    StructField("tx", StringType()),
    StructField("status", StringType()),
    StructField("from", LongType()),
    StructField("blocks", ArrayType(BLOCK)),
])

OP = StructType([
    StructField("index", LongType()),
    StructField("time", LongType()),
    # Jepsen's processes are integers, the nemesis is a name: read both as text.
    StructField("process", StringType()),
    StructField("type", StringType()),
    StructField("f", StringType()),
    StructField("node", StringType()),
    StructField("error", StringType()),
    StructField("value", VALUE),
])

TYPES = ("invoke", "ok", "fail", "info")
KAFKA_FS = ("send", "assign", "poll", "final-read")
ORDERING_FS = ("broadcast", "deliver")
CLIENT_FS = KAFKA_FS + ORDERING_FS
NEMESIS_FS = ("kill", "start", "pause", "resume", "partition", "heal", "link-fault", "config")
NEMESIS = "nemesis"
