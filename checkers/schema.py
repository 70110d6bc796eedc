"""Explicit Spark schemas for history format version 1 (DESIGN.md), and the flat rows
the Parquet copy holds.

`value` is polymorphic: its schema is the union of every op's shape. The shapes do
not clash, and Spark's JSON reader nulls only a field whose type does not match, so
nemesis values (free-form) cannot spoil a line. Only the fields the checkers read are
parsed: the others (key, partitions, seek, high_watermark, from, last_offset, node,
error) are allowed and skipped, which makes parsing cheaper.

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
    StructField("data", ArrayType(StringType())),
])

VALUE = StructType([
    # send, final-read
    StructField("topic", StringType()),
    StructField("value", LongType()),
    StructField("partition", IntegerType()),
    StructField("offset", LongType()),
    # assign, poll
    StructField("consumer", StringType()),
    StructField("records", ArrayType(RECORD)),
    # broadcast, deliver
    StructField("channel", StringType()),
    StructField("osn", StringType()),
    StructField("tx", StringType()),
    StructField("status", StringType()),
    StructField("blocks", ArrayType(BLOCK)),
])

OP = StructType([
    StructField("index", LongType()),
    StructField("time", LongType()),
    # Jepsen's processes are integers, the nemesis is a name: read both as text.
    StructField("process", StringType()),
    StructField("type", StringType()),
    StructField("f", StringType()),
    StructField("value", VALUE),
])

# One flat row of the Parquet copy. `kind` says what it is: an op (its value's scalar
# fields), a record of an ok poll or final read (`pos` in the op's records), or a block
# of an ok deliver (`pos` in the op's blocks); `index` is always the op's.
FACT = StructType([
    StructField("kind", StringType()),
    StructField("index", LongType()),
    StructField("time", LongType()),
    StructField("process", StringType()),
    StructField("type", StringType()),
    StructField("f", StringType()),
    StructField("topic", StringType()),
    StructField("partition", IntegerType()),
    StructField("offset", LongType()),
    StructField("value", LongType()),
    StructField("consumer", StringType()),
    StructField("channel", StringType()),
    StructField("osn", StringType()),
    StructField("tx", StringType()),
    StructField("status", StringType()),
    StructField("pos", IntegerType()),
    StructField("number", LongType()),
    StructField("hash", StringType()),
    StructField("previous_hash", StringType()),
    StructField("data_hash", StringType()),
    StructField("txs", ArrayType(StringType())),
    StructField("data", ArrayType(StringType())),
])
OP_COLUMNS = ("index", "time", "process", "type", "f", "topic", "partition", "offset", "value", "consumer",
              "channel", "osn", "tx", "status")
RECORD_COLUMNS = ("index", "f", "consumer", "pos", "topic", "partition", "offset", "value")
BLOCK_COLUMNS = ("index", "channel", "osn", "pos", "number", "hash", "previous_hash", "data_hash", "txs", "data")

TYPES = ("invoke", "ok", "fail", "info")
KAFKA_FS = ("send", "assign", "poll", "final-read")
ORDERING_FS = ("broadcast", "deliver")
CLIENT_FS = KAFKA_FS + ORDERING_FS
NEMESIS_FS = ("kill", "start", "pause", "resume", "partition", "heal", "link-fault", "config")
NEMESIS = "nemesis"
