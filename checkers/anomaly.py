"""The shape every anomaly transform returns, so that all of them can be unioned.

An anomaly row is (anomaly, evidence, example, order): the anomaly's name as in
DESIGN.md, the sorted history indices that prove it, a small JSON object explaining
it, and a key that orders examples (the first evidence index).
"""
from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

COLUMNS = ("anomaly", "evidence", "example", "order")


def anomaly_rows(df: DataFrame, name: str, evidence: Column, example: Column) -> DataFrame:
    """`df` as anomaly rows named `name`; `evidence` is an array of indices, `example` a struct."""
    ev = F.array_sort(F.array_distinct(F.filter(evidence, lambda x: x.isNotNull())))
    return df.select(
        F.lit(name).alias("anomaly"),
        ev.alias("evidence"),
        F.to_json(example).alias("example"),
    ).withColumn("order", F.col("evidence")[0])
