"""Ordering-service anomalies, one transform each: history ops in, anomaly rows out.

An OSN's chain for a channel is every block it delivered in any ok deliver, one row
per (number, hash). Hashes are compared as lower-case hex (lower-cased as the
history is read, checkers.ingest.lines).

Block bytes: when a delivered block carries `data` (hex-encoded marshalled
envelopes, an optional field of this checker), data_hash is recomputed as SHA-256 of
their concatenation, and the header hash as SHA-256 of the DER encoding of
SEQUENCE{INTEGER number, OCTET STRING previous_hash, OCTET STRING data_hash} (Fabric
v1.x common/block.go); a mismatch is a broken-chain. Without `data` only the chain of
reported hashes is checked. Both are computed in Spark SQL, never in Python.

Final delivers: lost-tx and lagging-osn speak of the chains after recovery, so they are
judged only on final delivers, like lost-write on final reads. A deliver is final when
its invoke (or completion) value carries `"final": true`, as the harness marks them; in a
history that marks no op final, when it was invoked after the history's last `heal`
nemesis op (format version 1: final delivers are recorded after the heal). Without a
final deliver of a channel (an interrupted run), lost-tx is not judged there, and an
OSN without one is not judged for lagging-osn: the verdict is unknown, not invalid. A
final deliver that did not end ok may say that the OSN's chain is errored (`errored`: it
refused a strict read, as a Fabric 1.4 Kafka chain does for good once its partition lost
records it had consumed, while its Broadcast still answers SUCCESS); the not-judged
reasons then say so, since that, not the run's length, is why no final deliver ended.

As in checkers.kafka, forks, duplicate and lost txs are first told apart by a hash
aggregation with cheap functions over every row; only the suspects are examined in
detail.

Config updates (`config-update` ops: one orderer batch setting of one channel, BatchSize's
MaxMessageCount or BatchTimeout) are Broadcast calls too: answered SUCCESS and in no block,
one is a lost-tx like a broadcast, unless it was superseded: another update of this history
on that channel wrote the same key at the same version and is in a block. Fabric re-validates
a config message validated under an older config sequence and discards it, SUCCESS answered,
when that version was taken meanwhile. Fabric orders a config update alone in its block
(config-not-alone where not), and the blocks after one that set MaxMessageCount hold at most
that many txs (batch-overflow). Config updates are a handful a run: every join against them
broadcasts them, and the chain is neither exploded nor sorted whole for their sake.
"""
from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from checkers.anomaly import anomaly_rows
from checkers.checker import Checker, Findings, not_judged_rows, shared
from checkers.ingest.history import HISTORY, Counts, Tables
from checkers.ingest.schema import CONFIG_UPDATE, NEMESIS
from checkers.verdict import ORDERING

# An OSN's chain of a channel, in a history of the batch (checkers.ingest.history.HISTORY); a
# channel of one.
CHAIN = [HISTORY, "channel", "osn"]
CHANNEL = [HISTORY, "channel"]
_EVIDENCE_PER_ROW = 8
# The client ops that Broadcast a tx: a config update's tx is the label it is delivered as.
_BROADCASTS = ("broadcast", CONFIG_UPDATE)
# The batch settings a config update changes (one of them, a column of its ops each).
MAX_MESSAGE_COUNT, BATCH_TIMEOUT = "max_message_count", "batch_timeout_ms"


def _hex(c: Column) -> Column:
    """A hash as the checks compare it: lower-case hex (lower-cased as read, checkers.ingest.lines),
    "" where the block has none."""
    return F.coalesce(c, F.lit(""))


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


def delivered_blocks(blocks: DataFrame) -> DataFrame:
    """One row per block an OSN delivered for a channel, with the first deliver that carried it
    (Tables.blocks).

    Every field is a grouping key, so that Spark deduplicates the many deliveries of a
    block by hashing, not by sorting them. Should an OSN deliver one (number, hash) with
    different contents, each variant is a row, so that the hash checks see every variant
    that carries its bytes (without them, variants under one header hash look alike).
    """
    return (
        blocks.select("index", *CHAIN, "number", _hex(F.col("hash")).alias("hash"),
                      _hex(F.col("previous_hash")).alias("previous_hash"),
                      _hex(F.col("data_hash")).alias("data_hash"), "txs", "data")
        .groupBy(*CHAIN, "number", "hash", "previous_hash", "data_hash", "txs", "data")
        .agg(F.min("index").alias("index"))
    )


def final_delivers(ops: DataFrame) -> DataFrame:
    """(channel, osn, index) of every ok final deliver (see the module's docstring)."""
    delivers = ops.filter(F.col("f") == "deliver")
    w = Window.partitionBy(HISTORY, "process").orderBy("index")
    marked = F.coalesce(F.col("final"), F.lit(False))
    # A process's deliver rows alternate invoke, completion (pairing checked it): the row
    # before an ok deliver is its invoke.
    paired = delivers.select("index", "type", *CHAIN,
                             (marked | F.coalesce(F.lag(marked).over(w), F.lit(False))).alias("final_mark"),
                             F.lag("index").over(w).alias("invoke_index"))
    marks = ops.groupBy(HISTORY).agg(F.max(marked.cast("int")).alias("any_marked"),
                    F.max(F.when((F.col("process") == NEMESIS) & (F.col("f") == "heal"), F.col("index")))
                    .alias("last_heal"))
    final = F.when(F.coalesce(F.col("any_marked"), F.lit(0)) == 1, F.col("final_mark")).otherwise(
        F.coalesce(F.col("invoke_index") > F.col("last_heal"), F.lit(False)))
    return (paired.filter(F.col("type") == "ok").join(F.broadcast(marks), HISTORY).filter(final)
            .select(*CHAIN, "index"))


def heights(finals: DataFrame, chain: DataFrame) -> DataFrame:
    """Each OSN's height per channel (highest delivered number + 1, 0 for none), and its last
    final deliver: only OSNs with an ok final deliver (`final_delivers`) have one."""
    last = finals.groupBy(*CHAIN).agg(F.max("index").alias("index"))
    top = chain.groupBy(*CHAIN).agg((F.max("number") + 1).alias("height"))
    return (last.join(top, CHAIN, "left")
            .select(*CHAIN, F.coalesce("height", F.lit(0)).alias("height"), "index"))


def _under(rows: DataFrame, keys: DataFrame, on: list[str]) -> DataFrame:
    """The rows of `rows` under `keys` (few: the suspects of a summary), without shuffling `rows`."""
    return rows.join(F.broadcast(keys.select(*on)), on, "left_semi")


def block_forks(chain: DataFrame) -> DataFrame:
    """Two OSNs hold different blocks (header hash) at one number of a channel.

    Numbers whose hashes all agree are told apart first by a cheap summary (lowest and
    highest 64-bit hash of the hash); only the others are looked at in detail.
    """
    h = F.xxhash64("hash")
    suspects = (chain.groupBy(*CHANNEL, "number").agg(F.min(h).alias("low"), F.max(h).alias("high"))
                .filter(F.col("low") != F.col("high")))
    bad = (_under(chain, suspects, [*CHANNEL, "number"]).groupBy(*CHANNEL, "number")
           .agg(F.countDistinct("hash").alias("n"),
                F.sort_array(F.collect_list(F.struct("osn", "hash"))).alias("held"),
                F.collect_list("index").alias("indices"))
           .filter(F.col("n") > 1))
    return anomaly_rows(bad, "block-fork", F.slice(F.array_sort("indices"), 1, _EVIDENCE_PER_ROW),
                        F.struct("channel", "number", F.slice("held", 1, 5).alias("held")))


def broken_chains(chain: DataFrame) -> DataFrame:
    """A block whose previous_hash is not its predecessor's hash on the same OSN, or whose
    data_hash / header hash do not match its bytes (when it carries them)."""
    w = Window.partitionBy(*CHAIN).orderBy("number", "hash", "index")
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


def tx_summary(chain: DataFrame, broadcasts: DataFrame) -> DataFrame:
    """Per (channel, tx) broadcast with SUCCESS or in a block: in how many places of the
    channel's distinct blocks (one held alike by several OSNs counts once) it is, and
    whether a broadcast of it was answered SUCCESS. Distinct blocks keep this to about one
    chain's worth of txs."""
    blocks = chain.select(*CHANNEL, "number", "hash", "txs").distinct()
    placed = blocks.select(*CHANNEL, F.explode("txs").alias("tx"), F.lit(0).alias("kind"))
    kind = F.col("kind")
    return (placed.unionByName(broadcasts.select(*CHANNEL, "tx", F.lit(1).alias("kind")))
            .groupBy(*CHANNEL, "tx")
            .agg(F.sum((kind == 0).cast("int")).alias("places"), F.max((kind == 1).cast("int")).alias("broadcast")))


def duplicate_txs(txs: DataFrame, summary: DataFrame, ours: DataFrame) -> DataFrame:
    """One tx id this history broadcast (`ours`) in more than one place of one OSN's chain.

    Twice in one OSN's chain means in two places of the distinct blocks: only those txs
    (`tx_summary`) are counted per OSN. A channel outlives a run on a reused cluster, so
    earlier runs' blocks are delivered too: their duplicates were those runs' to report.
    """
    twice = summary.filter(F.col("places") > 1)
    suspects = _under(ours, twice, [*CHANNEL, "tx"]).select(*CHANNEL, "tx").distinct()
    bad = (_under(txs, suspects, [*CHANNEL, "tx"]).groupBy(*CHAIN, "tx")
           .agg(F.sort_array(F.collect_set(F.struct("number", "pos"))).alias("at"),
                F.collect_set("index").alias("indices"))
           .filter(F.size("at") > 1))
    return anomaly_rows(bad, "duplicate-tx", F.slice(F.array_sort("indices"), 1, _EVIDENCE_PER_ROW),
                        F.struct("channel", "osn", "tx", F.slice("at", 1, 5).alias("at")))


def broadcast_txs(ops: DataFrame) -> DataFrame:
    """(channel, tx) of every broadcast and config update this history invoked, whatever its outcome."""
    return ops.filter(F.col("f").isin(*_BROADCASTS) & (F.col("type") == "invoke")).select(*CHANNEL, "tx")


def successful_broadcasts(ops: DataFrame) -> DataFrame:
    """The completions of broadcasts and config updates answered SUCCESS."""
    return (ops.filter(F.col("f").isin(*_BROADCASTS) & (F.col("type") == "ok") & (F.col("status") == "SUCCESS"))
            .select("index", "process", *CHAIN, "tx"))


def config_updates(ops: DataFrame) -> DataFrame:
    """One row per config update this history invoked, whatever its outcome: (channel, tx), the
    `key` it sets (max_message_count or batch_timeout_ms), the max_message_count it sets (null
    for a timeout) and the `version` it writes.

    Each field is taken from the invoke or the completion, whichever carries it (a workload
    may learn the version only once it has read the channel's config). They are a handful of
    rows: the ops' row groups of other fs are skipped by their statistics on f."""
    key = (F.when(F.col(MAX_MESSAGE_COUNT).isNotNull(), F.lit(MAX_MESSAGE_COUNT))
           .when(F.col(BATCH_TIMEOUT).isNotNull(), F.lit(BATCH_TIMEOUT)))
    return (ops.filter((F.col("f") == CONFIG_UPDATE) & F.col("tx").isNotNull())
            .groupBy(*CHANNEL, "tx")
            .agg(F.max(key).alias("key"), F.max(MAX_MESSAGE_COUNT).alias(MAX_MESSAGE_COUNT),
                 F.max("version").alias("version")))


def config_blocks(chain: DataFrame, updates: DataFrame) -> DataFrame:
    """One row per block of an OSN's chain (`chain`) and config update of this history (`updates`)
    whose tx it holds: the block's place, deliver index and txs, the tx's position in them, and
    the update's key, value and version.

    Each chain row meets its channel's few config txs by a broadcast join (one row per
    channel), and only the blocks whose txs overlap them are exploded: the chain is neither
    shuffled nor exploded whole."""
    labels = updates.groupBy(*CHANNEL).agg(F.collect_set("tx").alias("config_txs"))
    held = (chain.join(F.broadcast(labels), CHANNEL)
            .filter(F.arrays_overlap("txs", "config_txs"))
            .select(*CHAIN, "number", "index", "txs", F.explode(F.array_intersect("txs", "config_txs")).alias("tx")))
    return (held.join(F.broadcast(updates.select(*CHANNEL, "tx", "key", MAX_MESSAGE_COUNT, "version")),
                      [*CHANNEL, "tx"])
            .withColumn("pos", F.array_position("txs", F.col("tx"))))


def superseded_updates(updates: DataFrame, placed: DataFrame) -> DataFrame:
    """(channel, tx) of each config update whose key another update of this history wrote at the
    same version and that is in a block of the channel (`placed`: config_blocks). Fabric
    discards the later one as it re-validates it, though Broadcast answered it SUCCESS: not a
    loss. An update in a block supersedes no other here unless they share a version."""
    taken = placed.select(*CHANNEL, "key", "version").distinct()
    return updates.join(F.broadcast(taken), [*CHANNEL, "key", "version"], "left_semi").select(*CHANNEL, "tx")


def lost_txs(broadcasts: DataFrame, summary: DataFrame, delivered: DataFrame, superseded: DataFrame) -> DataFrame:
    """Broadcast answered SUCCESS, yet the tx is in no block of any OSN; judged only on the
    channels of `delivered` (heights: those with an ok final deliver). A config update
    `superseded` (superseded_updates) is not lost."""
    suspects = summary.filter((F.col("broadcast") == 1) & (F.col("places") == 0))
    lost = (_under(broadcasts, suspects, [*CHANNEL, "tx"])
            .join(F.broadcast(delivered.select(*CHANNEL).distinct()), CHANNEL, "left_semi")
            .join(F.broadcast(superseded), [*CHANNEL, "tx"], "left_anti"))
    return anomaly_rows(lost, "lost-tx", F.array("index"), F.struct("channel", "tx", "osn", "process"))


def configs_not_alone(placed: DataFrame) -> DataFrame:
    """A block of an OSN's chain holding a config update of this history and any other tx
    (`placed`: config_blocks): Fabric cuts the pending batch before it orders a config
    message, and puts that message in a block of its own."""
    bad = placed.filter(F.size("txs") > 1)
    return anomaly_rows(bad, "config-not-alone", F.array("index"),
                        F.struct("channel", "osn", "number", "tx", F.slice("txs", 1, 5).alias("txs")))


def batch_overflows(chain: DataFrame, placed: DataFrame) -> DataFrame:
    """A block holding more txs than the MaxMessageCount in force when it was cut: on an OSN's
    chain, the value of the last config update of this history that set max_message_count in
    a block before it (`placed`: config_blocks), whatever its Broadcast answered. Blocks before
    the first such block are not judged (the setting before it is not known), nor the blocks
    holding such an update (config-not-alone's, where they hold another tx).

    A cheap summary first: per chain, its first such block and the lowest max any sets; the
    chain meets it by a broadcast join of one row per chain, so that only the blocks after the
    first and above the lowest max are suspects. Only they, with the few config blocks, are
    sorted by number to find the max in force at each, where a range join would pair every
    block with every config block of its chain.
    """
    cut = (placed.filter(F.col("key") == MAX_MESSAGE_COUNT).groupBy(*CHAIN, "number")
           # several in one block: the last of them is in force after it
           .agg(F.max(F.struct("pos", MAX_MESSAGE_COUNT, "tx", "index")).alias("cut")))
    cuts = cut.select(*CHAIN, "number", F.col("number").alias("config_number"),
                      F.col(f"cut.{MAX_MESSAGE_COUNT}").alias(MAX_MESSAGE_COUNT),
                      F.col("cut.tx").alias("config_tx"), F.col("cut.index").alias("config_index"))
    bounds = cuts.groupBy(*CHAIN).agg(F.min("number").alias("first_cut"), F.min(MAX_MESSAGE_COUNT).alias("lowest"))
    suspects = (chain.join(F.broadcast(bounds), CHAIN)
                .filter((F.col("number") > F.col("first_cut")) & (F.size("txs") > F.col("lowest")))
                .select(*CHAIN, "number", "index", F.size("txs").alias("size")))
    # A config block sorts before a block of its number (size null first): that block then
    # finds it in force, and is dropped as one holding such an update.
    w = (Window.partitionBy(*CHAIN).orderBy("number", F.col("size").asc_nulls_first())
         .rowsBetween(Window.unboundedPreceding, Window.currentRow))
    in_force = ("config_number", MAX_MESSAGE_COUNT, "config_tx", "config_index")
    judged = (suspects.unionByName(cuts, allowMissingColumns=True)
              .select(*CHAIN, "number", "index", "size",
                      *(F.last(c, ignorenulls=True).over(w).alias(c) for c in in_force)))
    bad = judged.filter(F.col("size").isNotNull() & (F.col("config_number") < F.col("number"))
                        & (F.col("size") > F.col(MAX_MESSAGE_COUNT)))
    return anomaly_rows(bad, "batch-overflow", F.array("config_index", "index"),
                        F.struct("channel", "osn", "number", F.col("size").alias("txs"), MAX_MESSAGE_COUNT,
                                 "config_tx", "config_number"))


def lagging_osns(height: DataFrame, stalled: DataFrame | None = None) -> DataFrame:
    """An OSN whose height for a channel is below the channel's highest and that was still
    moving (verdict unknown); one that stopped for good is a stalled-osn instead (`stalled_chains`)."""
    top = height.groupBy(*CHANNEL).agg(F.max("height").alias("channel_height"))
    bad = height.join(top, CHANNEL).filter(F.col("height") < F.col("channel_height"))
    if stalled is not None:
        bad = bad.join(stalled.select(*CHAIN), CHAIN, "left_anti")
    return anomaly_rows(bad, "lagging-osn", F.array("index"),
                        F.struct("channel", "osn", "height", "channel_height"))


# Broadcasts after the final heal an OSN must have refused, all SERVICE_UNAVAILABLE and none
# SUCCESS, while another OSN took the channel's, for it to count as having stopped serving.
STALL_REFUSALS = 3
_EVIDENCE = 8


def stalled_chains(ops: DataFrame, blocks: DataFrame) -> DataFrame:
    """(channel, osn) whose chain stopped for good once the faults were healed: after the
    final heal it delivered no block it had not delivered before, while the channel's chain
    grew on other OSNs and it ended behind them; or it answered every broadcast of the channel
    after the heal (at least STALL_REFUSALS) with SERVICE_UNAVAILABLE while another OSN
    answered SUCCESS. With its height against the channel's, how many broadcasts it refused,
    and the indices that show it (its refusals, else its last deliver)."""
    heal = (ops.filter((F.col("process") == NEMESIS) & (F.col("f") == "heal"))
            .groupBy(HISTORY).agg(F.max("time").alias("heal_time")))
    times = ops.select(HISTORY, "index", "time")
    delivered = (blocks.select(HISTORY, "index", "channel", "osn", "number").join(times, [HISTORY, "index"])
                 .join(heal, HISTORY))
    after = F.col("time") > F.col("heal_time")
    chains = delivered.groupBy(*CHAIN).agg(
        F.max(F.when(~after, F.col("number"))).alias("before"),
        F.max(F.when(after, F.col("number"))).alias("after"),
        F.max("number").alias("top"), F.max("index").alias("last_deliver"))
    channel = chains.groupBy(*CHANNEL).agg(F.max("top").alias("channel_top"),
                                           F.max("before").alias("channel_before"))
    by_blocks = (chains.join(channel, CHANNEL)
                 .filter((F.col("top") < F.col("channel_top"))
                         & (F.coalesce("after", F.lit(-1)) <= F.coalesce("before", F.lit(-1)))
                         & (F.col("channel_top") > F.coalesce("channel_before", F.lit(-1))))
                 .select(*CHAIN, F.array("last_deliver").alias("indices"), F.lit(0).alias("refused")))
    answers = (ops.filter(F.col("f").isin(*_BROADCASTS) & (F.col("type") != "invoke")
                          & F.col("channel").isNotNull() & F.col("osn").isNotNull())
               .join(heal, HISTORY).filter(after))
    per_chain = answers.groupBy(*CHAIN).agg(
        F.sum(((F.col("type") == "ok") & (F.col("status") == "SUCCESS")).cast("int")).alias("ok"),
        F.sum((F.col("status") == "SERVICE_UNAVAILABLE").cast("int")).alias("refused"),
        F.count("*").alias("answers"),
        F.slice(F.array_sort(F.collect_list("index")), 1, _EVIDENCE).alias("indices"))
    served = per_chain.groupBy(*CHANNEL).agg(F.sum("ok").alias("channel_ok"))
    by_refusals = (per_chain.join(served, CHANNEL)
                   .filter((F.col("ok") == 0) & (F.col("refused") >= STALL_REFUSALS)
                           & (F.col("refused") == F.col("answers")) & (F.col("channel_ok") > 0))
                   .select(*CHAIN, "indices", "refused"))
    stalled = (by_blocks.unionByName(by_refusals).groupBy(*CHAIN)
               .agg(F.flatten(F.collect_list("indices")).alias("indices"), F.max("refused").alias("refused")))
    heights = (chains.join(channel, CHANNEL)
               .select(*CHAIN, (F.col("top") + 1).alias("height"), (F.col("channel_top") + 1).alias("channel_height")))
    return stalled.join(heights, CHAIN, "left")


def errored_chains(ops: DataFrame) -> DataFrame:
    """(channel, osn) whose chain a final deliver that did not end ok found errored (`errored`:
    a strict read refused, as Fabric's deliver handler refuses it once the chain's consumer
    has failed), with the first such deliver's index."""
    return (ops.filter((F.col("f") == "deliver") & F.coalesce(F.col("errored"), F.lit(False)))
            .groupBy(*CHAIN).agg(F.min("index").alias("errored_index")))


def undelivered_channels(broadcasts: DataFrame, height: DataFrame, errored: DataFrame) -> DataFrame:
    """Channels with SUCCESS broadcasts but no ok final deliver: lost-tx is not judged there;
    `errored_osns` names the OSNs whose chain was found errored (`errored_chains`), if any."""
    osns = errored.groupBy(*CHANNEL).agg(F.concat_ws(", ", F.array_sort(F.collect_list("osn"))).alias("errored_osns"))
    return (broadcasts.select(*CHANNEL).distinct().join(height.select(*CHANNEL), CHANNEL, "left_anti")
            .join(osns, CHANNEL, "left"))


def unfinished_osns(ops: DataFrame, height: DataFrame, errored: DataFrame) -> DataFrame:
    """(channel, osn) a broadcast, config update or deliver of this history named, without an ok final
    deliver: lagging-osn is not judged there; `errored` whether its chain was found errored."""
    named = (ops.filter(F.col("f").isin(*_BROADCASTS, "deliver") & F.col("channel").isNotNull()
                        & F.col("osn").isNotNull()).select(*CHAIN).distinct())
    return (named.join(height.select(*CHAIN), CHAIN, "left_anti")
            .join(errored, CHAIN, "left").withColumn("errored", F.col("errored_index").isNotNull()))


# Said where a final deliver found the chain errored: why the run cannot be judged there.
_ERRORED = ("a strict Deliver was refused with SERVICE_UNAVAILABLE: the chain is errored (halted for good where "
            "its Kafka partition lost records the OSN had read; else cut off from Kafka)")


def ordering_findings(tables: Tables) -> Findings:
    """Anomaly rows of every ordering checker, the channels where lost-tx cannot be judged and
    the (channel, osn) where lagging-osn cannot.

    The chain, the tx summary and the config blocks, which several checkers share, are computed
    once (checkers.checker.shared).
    """
    chain = shared(delivered_blocks(tables.blocks))
    txs = chain_txs(chain)
    height = shared(heights(final_delivers(tables.ops), chain))
    broadcasts = successful_broadcasts(tables.ops)
    summary = shared(tx_summary(chain, broadcasts))
    errored = errored_chains(tables.ops)
    updates = config_updates(tables.ops)
    placed = shared(config_blocks(chain, updates))
    rows = (block_forks(chain)
            .unionByName(broken_chains(chain))
            .unionByName(lost_txs(broadcasts, summary, height, superseded_updates(updates, placed)))
            .unionByName(duplicate_txs(txs, summary, broadcast_txs(tables.ops)))
            .unionByName(lagging_osns(height, shared(stalled_chains(tables.ops, tables.blocks))))
            .unionByName(configs_not_alone(placed))
            .unionByName(batch_overflows(chain, placed)))
    return Findings(rows=rows, not_judged=[
        not_judged_rows(undelivered_channels(broadcasts, height, errored), "lost-tx",
                        F.concat(F.lit("no final deliver of channel "), F.col("channel"),
                                 F.lit(" ended ok (read to the chain's end), and it had SUCCESS broadcasts"),
                                 F.coalesce(F.concat(F.lit("; on "), F.col("errored_osns"), F.lit(" "),
                                                     F.lit(_ERRORED)), F.lit(""))),
                        F.col("channel")),
        not_judged_rows(unfinished_osns(tables.ops, height, errored), "lagging-osn",
                        F.concat(F.lit("no final deliver of channel "), F.col("channel"), F.lit(" from "), F.col("osn"),
                                 F.lit(" ended ok (read to the chain's end)"),
                                 F.when(F.col("errored"), F.lit("; " + _ERRORED)).otherwise(F.lit(""))),
                        F.concat_ws("/", "channel", "osn"))])


def _proves(counts: Counts) -> bool:
    return bool(counts.ok("broadcast") or counts.ok("deliver"))


CHECKER = Checker(name="ordering", anomalies=ORDERING, reads=_proves, proves=_proves,
                  find=ordering_findings)
