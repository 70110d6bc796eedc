"""The schemas of history format version 1 (docs/history-format.md) as read (format 2's txn op adds
checkers.ingest.txn_schema), and of the flat tables
the Parquet copy holds, each declared once, in Arrow; Spark's are derived from them.

`value` is polymorphic: its schema is the union of every op's shape. The shapes do
not clash; where a field's JSON type does not fit (nemesis values are free-form) the
field is read as null. Only the fields the checkers read are parsed: the others (key,
high_watermark, from, last_offset, the op's own node, error) are allowed and skipped.
An assign's `partitions` are [topic, partition] pairs, which Arrow's reader cannot take
(a list of mixed types): checkers.ingest.lines reads assign lines with the json module and
holds each pair as a struct (ASSIGNED); CLIENT_OP, what Arrow parses, leaves them out.
Of nemesis values only the `crash` op's are read (node, role, exit_code, oom_killed,
log_tail: harness.crash_watch), for the node-crash anomaly.

Optional block fields this checker understands beyond the contract: `data`, a list of
hex-encoded marshalled envelopes; when present, data_hash and the header hash are
recomputed from it (see checkers.ordering).
"""
from __future__ import annotations

import pyarrow as pa
from pyspark.sql.pandas.types import from_arrow_schema
from pyspark.sql.types import StructType

from ground.op import CLIENT_CRASH

RECORD = pa.struct([
    ("topic", pa.string()),
    ("partition", pa.int32()),
    ("offset", pa.int64()),
    ("value", pa.int64()),
])

# One [topic, partition] pair of an assign, as held.
ASSIGNED = pa.struct([
    ("topic", pa.string()),
    ("partition", pa.int32()),
])

# A consumer group's rebalance as its poll saw it, one element per partition: "revoked" (or
# "lost"), or "assigned" with the `position` the partition starts from (null: nothing
# committed, so from its beginning). And one partition's offset in a commit op.
REBALANCE = pa.struct([
    ("event", pa.string()),
    ("topic", pa.string()),
    ("partition", pa.int32()),
    ("position", pa.int64()),
])
COMMITTED = pa.struct([
    ("topic", pa.string()),
    ("partition", pa.int32()),
    ("offset", pa.int64()),
])

BLOCK = pa.struct([
    ("number", pa.int64()),
    ("hash", pa.string()),
    ("previous_hash", pa.string()),
    ("data_hash", pa.string()),
    ("txs", pa.list_(pa.string())),
    ("data", pa.list_(pa.string())),
])

VALUE = pa.struct([
    # send, final-read
    ("topic", pa.string()),
    ("value", pa.int64()),
    ("partition", pa.int32()),
    ("offset", pa.int64()),
    # assign, poll
    ("consumer", pa.string()),
    ("partitions", pa.list_(ASSIGNED)),
    ("seek", pa.string()),
    ("records", pa.list_(RECORD)),
    # poll, commit (consumer groups)
    ("rebalances", pa.list_(REBALANCE)),
    ("offsets", pa.list_(COMMITTED)),
    # broadcast, deliver
    ("channel", pa.string()),
    ("osn", pa.string()),
    ("tx", pa.string()),
    ("status", pa.string()),
    ("blocks", pa.list_(BLOCK)),
    ("final", pa.bool_()),  # the harness marks its final delivers (checkers.ordering)
    ("errored", pa.bool_()),  # a final deliver that did not end ok: its chain refused a strict read
    # config-update (with channel, osn, tx, status): the batch setting it changes, one of the
    # two, and the version it writes to that config value
    ("max_message_count", pa.int64()),
    ("batch_timeout_ms", pa.int64()),
    ("version", pa.int64()),
    # crash (nemesis)
    ("node", pa.string()),
    ("role", pa.string()),
    ("exit_code", pa.int64()),
    ("oom_killed", pa.bool_()),
    ("log_tail", pa.list_(pa.string())),
    # poll, final-read (format 2): "read_committed" (or absent) | "read_uncommitted"
    ("isolation", pa.string()),
])

# Jepsen's processes are integers, the nemesis is a name: tables hold both as text.
OP = pa.schema([
    ("index", pa.int64()),
    ("time", pa.int64()),
    ("process", pa.string()),
    ("type", pa.string()),
    ("f", pa.string()),
    ("value", VALUE),
])
# What Arrow's reader parses a line of a client process as: no field of the ops it is never
# given (checkers.ingest.lines reads assign, commit, config-update, nemesis lines and polls that saw
# a rebalance with the json module), so no assign's
# pairs (see above) or seek, nor a crash's fields. Each field of the schema costs the reader
# a null per line that lacks it: the seek and the crash's five fields cost a 10M-op
# history's convert 2.5 of its 40 CPU seconds (3 alternating pairs, 2026-11-28: 40.0-41.8 ->
# 38.0-38.3 s).
# A consumer group's rebalances and commits are few: their lines are set aside too, and so are
# the ordering workload's config updates (a handful a run): their three fields would cost every
# other line three nulls.
_NOT_PARSED = ("partitions", "seek", "node", "role", "exit_code", "oom_killed", "log_tail", "rebalances", "offsets",
               "max_message_count", "batch_timeout_ms", "version")
_ARROW_VALUE = pa.struct([f for f in VALUE if f.name not in _NOT_PARSED])
CLIENT_OP = pa.schema([pa.field("process", pa.int64()) if f.name == "process" else
                       pa.field("value", _ARROW_VALUE) if f.name == "value" else f for f in OP])

# The value's fields kept beside the op's own: the scalars, an assign's partitions and a
# crash's few log lines.
_KEPT_LISTS = ("log_tail", "partitions")
_KEPT_VALUE = [f for f in VALUE if not pa.types.is_list(f.type) or f.name in _KEPT_LISTS]
_OP_HEAD = [f for f in OP if f.name != "value"]

# The flat tables. ops: one row per usable op, the value's scalar fields (and log_tail)
# beside the op's own, and the line of the file it was read from; records: one row per record of an ok
# poll or final read, or of a poll micro-op of a completed txn (`pos` in the op's records, topic and
# partition taken from the op when the record omits them, the read's isolation level); blocks: one row per block of an ok deliver.
OPS = pa.schema([pa.field("line", pa.int64()), *_OP_HEAD, *_KEPT_VALUE])
RECORDS = pa.schema([OP.field("index"), OP.field("f"), VALUE.field("consumer"), pa.field("pos", pa.int32()),
                     *RECORD, VALUE.field("isolation")])
BLOCKS = pa.schema([OP.field("index"), VALUE.field("channel"), VALUE.field("osn"), pa.field("pos", pa.int32()),
                    *BLOCK])
OP_COLUMNS = tuple(OPS.names[1:])
RECORD_COLUMNS = tuple(RECORDS.names)
BLOCK_COLUMNS = tuple(BLOCKS.names)
# group: one row per partition a poll saw revoked or assigned (f "revoked", "lost" or
# "assigned", `offset` the assigned position), and per partition of a commit's completion
# (f "commit", `offset` the committed one), with the op's index, type and consumer.
GROUP = pa.schema([OP.field("index"), OP.field("type"), pa.field("f", pa.string()), VALUE.field("consumer"),
                   *COMMITTED])
GROUP_COLUMNS = tuple(GROUP.names)


def spark_schema(schema: pa.Schema) -> StructType:
    """The Spark schema of an Arrow one."""
    return from_arrow_schema(schema)


# The value fields the checks read, per client f (and of the nemesis' crash op): one of
# them present with a JSON type that does not fit the schema makes the history unreadable
# (checkers.ingest.lines), never a null that hides what it said. Other fields are ignored.
READ_FIELDS: dict[str, tuple[str, ...]] = {
    "send": ("topic", "value", "partition", "offset"),
    "assign": ("consumer", "partitions", "seek"),
    "poll": ("consumer", "records", "isolation", "rebalances"),
    "subscribe": ("consumer",),
    "commit": ("consumer", "offsets"),
    "final-read": ("topic", "partition", "records", "isolation"),
    "broadcast": ("channel", "osn", "tx", "status"),
    "config-update": ("channel", "osn", "tx", "status", "max_message_count", "batch_timeout_ms", "version"),
    "deliver": ("channel", "osn", "blocks", "final", "errored"),
    "crash": ("node", "role", "exit_code", "oom_killed", "log_tail"),
}
READ_OP_FIELDS = ("time",)

TYPES = ("invoke", "ok", "fail", "info")
# "txn" is format 2's (checkers.ingest.txn_schema): transactions of send and poll micro-ops.
KAFKA_FS = ("send", "assign", "subscribe", "poll", "commit", "final-read", "txn")
# A channel config update (Fabric's orderer: one batch setting of one channel) is a client op; the
# nemesis' "config" is another thing.
CONFIG_UPDATE = "config-update"
ORDERING_FS = ("broadcast", "deliver", CONFIG_UPDATE)
CLIENT_FS = KAFKA_FS + ORDERING_FS + (CLIENT_CRASH,)  # a crash op is the worker's, of any workload
NEMESIS_FS = ("kill", "start", "pause", "resume", "partition", "heal", "link-fault", "config", "crash")
NEMESIS = "nemesis"
