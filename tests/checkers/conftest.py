"""Checker tests: `ordeal check` pointed at the tests' Spark server (tests/conftest.py: one
for the whole session), and small helpers to run transforms."""
from __future__ import annotations

import json
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession

from checkers.ingest.history import Tables, tables_of
from checkers.ingest.lines import Chunk, flatten, parse
from tests.histories import HistoryBuilder


@pytest.fixture(autouse=True)
def _check_here(request, monkeypatch):
    """`ordeal check` in the Spark Connect server of the `spark` fixture where the test uses
    it (as a user's --remote: no shared server of the user's is used or started), else in
    none: tests/checkers/test_connect.py tests the servers ordeal starts."""
    monkeypatch.setenv("ORDEAL_CHECK_SERVER_IDLE", "0")
    monkeypatch.delenv("ORDEAL_SPARK_REMOTE", raising=False)
    if "spark" in request.fixturenames:
        monkeypatch.setenv("ORDEAL_SPARK_REMOTE", request.getfixturevalue("_server")[0].url)


@pytest.fixture
def ops_of(spark: SparkSession):
    """Turn a HistoryBuilder into the tables (checkers.ingest.history.Tables) the checkers take."""

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
