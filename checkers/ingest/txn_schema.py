"""History format version 2: the `txn` op (Jepsen's shape), its schemas as read and the flat
tables it gives.

A txn's value is a list of micro-ops, each a pair [name, map]: ["send", {topic, key, value}]
(its result adds partition and offset) or ["poll", {consumer}] (its result adds records, and
optionally isolation). Arrow's JSON reader cannot read a list that holds a string and a map,
so the lines are read after each micro-op's head `["send",` is rewritten to
`[{"mf": "send"},` (checkers.ingest.txn_lines): a list of two maps of one struct type, MOP, the
first holding the name only. Fields not listed are allowed and ignored, as in format 1.

Tables: mops, one row per micro-op of a txn completion (MOPS: the completion's index, process
and type, the micro-op's place `pos` and name `mf`, and its fields); txns, one row per txn
completion beside its invoke's index and time (TXNS, from checkers.ingest.pairing). A poll micro-op's
records join the records table (checkers.ingest.schema.RECORDS, f "poll", the txn's index, `pos`
counted over all the txn's polls in order), where the format-1 checks read polls.
"""
from __future__ import annotations

import pyarrow as pa

from checkers.ingest.schema import COMMITTED, OP, OPS, REBALANCE, RECORD

TXN = "txn"
SEND, POLL, COMMIT = "send", "poll", "commit"
# commit: a consumer group's offsets committed inside the txn (send_offsets_to_transaction):
# committed if the txn commits. A poll may carry the rebalances it saw, as a format-1 poll.
MICRO_OPS = (SEND, POLL, COMMIT)
READ_UNCOMMITTED = "read_uncommitted"

MOP = pa.struct([
    ("mf", pa.string()),
    # send
    ("topic", pa.string()),
    ("value", pa.int64()),
    ("partition", pa.int32()),
    ("offset", pa.int64()),
    # poll
    ("consumer", pa.string()),
    ("isolation", pa.string()),
    ("records", pa.list_(RECORD)),
    ("rebalances", pa.list_(REBALANCE)),
    # commit
    ("offsets", pa.list_(COMMITTED)),
])
MOP_LIST = pa.list_(pa.list_(MOP))

# What Arrow's reader parses a txn line of a client process as (its value rewritten, see above).
TXN_OP = pa.schema([*(f for f in OP if f.name != "value"), pa.field("value", MOP_LIST)]).set(
    OP.get_field_index("process"), pa.field("process", pa.int64()))

MOPS = pa.schema([OPS.field("index"), OPS.field("process"), OPS.field("type"), pa.field("pos", pa.int32()),
                  pa.field("mf", pa.string()), *(f for f in MOP if f.name != "mf" and not pa.types.is_list(f.type))])
MOP_COLUMNS = tuple(MOPS.names)
TXNS = pa.schema([OPS.field("process"), OPS.field("index"), OPS.field("time"), OPS.field("type"),
                  pa.field("invoke_index", pa.int64()), pa.field("invoke_time", pa.int64())])
TXN_COLUMNS = tuple(TXNS.names)

# The micro-op fields the checks read, per micro-op (checkers.ingest.lines.mistyped).
READ_MOP_FIELDS: dict[str, tuple[str, ...]] = {
    SEND: ("topic", "value", "partition", "offset"),
    POLL: ("consumer", "isolation", "records", "rebalances"),
    COMMIT: ("consumer", "offsets"),
}
