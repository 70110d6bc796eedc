"""What a checker is to checkers.check: when it runs, whether its ops prove anything, and
its findings as frames that check.py folds into results.json in one pass.

Each checker module (checkers.kafka, checkers.ordering, checkers.nodes) declares one
`CHECKER`, with the anomalies it may find (named, with their rules, in checkers.verdict);
checkers/registry.py lists them (CHECKS). A new kind of op is checked by a new module with
its own Checker, added there: nothing in check.py knows which checkers exist.

A checker runs only where the history holds something it can judge (`reads`, from the
counts taken while the history was read: no Spark), so a history of one kind starts no
Spark job for the others, and a history no checker can judge starts no Spark at all.
`proves` says whether its ops could show anything about the data (an ok op that sent or
read something): a history where no checker's do is unknown, not valid (checkers.check).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from checkers.ingest.history import HISTORY, Counts, Tables

# A partition of a history of the batch (checkers.ingest.history.HISTORY), and a value sent to a
# topic of one: the keys most of the Kafka checks (plain and transactional) group, sort and join by.
TP = [HISTORY, "topic", "partition"]
TV = [HISTORY, "topic", "value"]

NOT_JUDGED_COLUMNS = (HISTORY, "anomaly", "reason", "order")
STAT_COLUMNS = (HISTORY, "value")


@dataclass(frozen=True)
class Findings:
    """A checker's anomaly rows (checkers.anomaly.COLUMNS), the places where it could not
    judge an anomaly (NOT_JUDGED_COLUMNS: one row each, with a reason), and its statistics by
    name (STAT_COLUMNS: one row per history that has any; a count, 0 where a history has
    none), each row of the history of the batch it is of."""

    rows: DataFrame
    not_judged: list[DataFrame] = field(default_factory=list)
    stats: dict[str, DataFrame] = field(default_factory=dict)


@dataclass(frozen=True)
class Checker:
    """One checker as checkers.check runs it (see the module's docstring)."""

    name: str
    anomalies: tuple[str, ...]  # every anomaly its findings may name (checkers.verdict)
    reads: Callable[[Counts], bool]
    proves: Callable[[Counts], bool]
    find: Callable[[Tables], Findings]


def not_judged_rows(df: DataFrame, anomaly: str, reason: Column, order: Column) -> DataFrame:
    """`df` as places where `anomaly` could not be judged: `reason` says where and why,
    `order` (text) sorts them as the reader expects."""
    return df.select(HISTORY, F.lit(anomaly).alias("anomaly"), reason.alias("reason"),
                     order.cast("string").alias("order"))


def stat_rows(df: DataFrame, value: Column) -> DataFrame:
    """A statistic, one row per history: `value` is an aggregate over its rows of `df` (a
    count: a history without rows has no row, and counts 0)."""
    return df.groupBy(HISTORY).agg(value.cast("long").alias("value"))


def padded(n: Column) -> Column:
    """A non-negative number as text that sorts as the number does."""
    return F.lpad(n.cast("string"), 12, "0")


def shuffle_partitions(df: DataFrame) -> int:
    """How many partitions the session shuffles into: 1 for a small history (checkers.runtime.session)."""
    return int(df.sparkSession.conf.get("spark.sql.shuffle.partitions"))


def gathered(df: DataFrame) -> DataFrame:
    """`df` (a union, or a small history's table) in one partition where the history is
    small. Spark then knows that partition holds every key, so group-bys, windows and
    joins over it need no shuffle (checkers.check.batch_tables). And a stage runs a task
    per partition, and each task deserializes the whole plan of its stage, so the union of a
    small check's anomaly rows (16 one-partition frames) ran 16 tasks that each read every
    check's plan: a quarter of the JVM's time in a warm check of 3,000 ops (its flight
    recording). A large history's union keeps its partitions, to run them side by side."""
    return df.coalesce(1) if shuffle_partitions(df) == 1 else df


def shared(df: DataFrame) -> DataFrame:
    """A frame several checks read, computed once, at once, into a plan leaf of its own (a
    local checkpoint), so that the plans that read it stay small and cheap to plan and run.

    Not persist(): every frame built after a persisted one is matched against the cached
    plans, and a 10M-op check in a warm JVM then spent 8 s planning before its first task
    and took 37 s (28-32 s with checkpoints; Spark's event log). Its blocks go when the
    frame is no longer referenced (Spark's context cleaner).

    Its blocks are kept as rows (Spark's default), not serialized: serialized blocks cut a
    10M-op check's collector pauses, but their writes and reads cost what that saved (with
    Kryo as the serializer, 4 checks each way alternating in one JVM: median 48.7 s
    serialized, 47.8 s not; with Java's serializer, no faster either, in JVMs of their own).

    Over Spark Connect, PySpark 4.3.0 gives the checkpointed frame to the thread's active
    session, not to `df`'s (pyspark.sql.connect.conversion.proto_to_remote_cached_dataframe):
    with two sessions in a process (a test's and a command's), or a session started on
    another thread (SessionOnDemand.start_early), it would belong to the wrong one. So `df`'s
    session is made the thread's active one first."""
    session = df.sparkSession
    type(session)._active_session.session = session  # PySpark's own thread-local (see above)
    return df.localCheckpoint(eager=True)
