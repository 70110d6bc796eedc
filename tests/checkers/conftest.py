"""One local Spark session for all checker tests, and small helpers to run transforms."""
from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession

from checkers.history import Tables, tables_of
from checkers.ingest import Chunk, flatten, parse
from checkers.session import spark_session
from checkers.synthetic import HistoryBuilder


@pytest.fixture(autouse=True)
def _check_here(monkeypatch):
    """`ordeal check` in the test's own process and session (the `spark` fixture), not in a
    check server: tests/checkers/test_server.py tests the server."""
    monkeypatch.setenv("ORDEAL_CHECK_SERVER_IDLE", "0")


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    session = spark_session("local[2]", app_name="ordeal-checker-tests")
    # Tiny inputs: compiling generated code and re-planning cost more than they save.
    for key, value in {"spark.sql.shuffle.partitions": "1", "spark.sql.adaptive.enabled": "false",
                       "spark.sql.codegen.wholeStage": "false"}.items():
        session.conf.set(key, value)
    yield session


@pytest.fixture
def ops_of(spark: SparkSession):
    """Turn a HistoryBuilder into the tables (checkers.history.Tables) the checkers take."""

    def build(history: HistoryBuilder) -> Tables:
        chunk = Chunk(1, "".join(line + "\n" for line in history.lines()).encode(), last=True)
        return tables_of(spark, flatten(parse(chunk), last=True))

    return build


def _collect(rows: DataFrame) -> list[dict[str, Any]]:
    out = [{"anomaly": r["anomaly"], "evidence": list(r["evidence"]), "example": json.loads(r["example"])}
           for r in rows.collect()]
    return sorted(out, key=lambda a: a["evidence"])


@pytest.fixture
def found():
    """Anomaly rows as dicts: anomaly, evidence, example (parsed), sorted by evidence."""
    return _collect
