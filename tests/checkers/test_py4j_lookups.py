"""py4j lookups kept per JVM: a column expression built again costs its calls only, and
what may change (fields) or was not found is asked every time."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from py4j.clientserver import ClientServerConnection
from py4j.protocol import Py4JError
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from checkers import py4j_lookups

REFLECTION = "r\n"


@contextmanager
def sent(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The py4j commands sent meanwhile."""
    commands: list[str] = []
    send = ClientServerConnection.send_command

    def counted(self, command):  # noqa: ANN001, ANN202 - py4j's own signature
        commands.append(command)
        return send(self, command)

    with monkeypatch.context() as m:
        m.setattr(ClientServerConnection, "send_command", counted)
        yield commands


def build() -> None:
    F.when(F.col("type") == "ok", F.lit(1)).otherwise(F.coalesce(F.col("n"), F.lit(0))).alias("x")


def test_an_expression_built_again_sends_no_lookup_only_its_calls(spark: SparkSession, monkeypatch) -> None:
    py4j_lookups.install()  # spark_session installs it; a second install changes nothing
    py4j_lookups.install()
    build()
    with sent(monkeypatch) as again:
        build()
    assert again and not [c for c in again if c.startswith(REFLECTION)], again
    # The same expression as py4j alone builds it (lookups kept aside): the calls are the same.
    monkeypatch.setattr(spark.sparkContext._gateway._gateway_client, py4j_lookups._ATTR, {})
    with sent(monkeypatch) as first:
        build()
    calls = [c for c in first if not c.startswith(REFLECTION)]
    assert len(calls) == len(again) and len(first) > len(again)


def test_fields_and_missing_names_are_asked_every_time(spark: SparkSession, monkeypatch) -> None:
    jvm = spark.sparkContext._jvm
    jvm.java.lang.Integer.MAX_VALUE  # noqa: B018 - a static field: its value is read each time
    with sent(monkeypatch) as read:
        assert jvm.java.lang.Integer.MAX_VALUE == 2**31 - 1
    assert [c for c in read if c.startswith("r\nm\njava.lang.Integer\nMAX_VALUE")]
    for _ in range(2):
        with pytest.raises(Py4JError), sent(monkeypatch) as missing:
            jvm.org.apache.spark.sql.functions.no_such_function_here  # noqa: B018
        assert missing
