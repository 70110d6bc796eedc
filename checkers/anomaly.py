"""The shape every anomaly transform returns, so that all of them can be unioned.

An anomaly row is (history, anomaly, evidence, example, order): which history of the
batch it is of (checkers.ingest.history.HISTORY), the anomaly's name as in docs/anomalies.md, the sorted
history indices that prove it, a small JSON object explaining it, and a key that orders
examples (the first evidence index).
"""
from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from checkers.ingest.history import HISTORY

COLUMNS = (HISTORY, "anomaly", "evidence", "example", "order")


def anomaly_rows(df: DataFrame, name: str, evidence: Column, example: Column) -> DataFrame:
    """`df` (with its HISTORY column) as anomaly rows named `name`; `evidence` is an array of
    indices, `example` a struct."""
    ev = F.array_sort(F.array_distinct(F.filter(evidence, lambda x: x.isNotNull())))
    return df.select(
        HISTORY,
        F.lit(name).alias("anomaly"),
        ev.alias("evidence"),
        F.to_json(example).alias("example"),
    ).withColumn("order", F.col("evidence")[0])
