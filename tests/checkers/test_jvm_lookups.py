"""checkers.jvm_lookups: a class or method of the JVM is looked up once per process."""
from __future__ import annotations

import pytest
from py4j.java_gateway import JavaClass, JavaPackage
from py4j.protocol import Py4JError
from pyspark import SparkContext
from pyspark.sql import functions as F


@pytest.fixture
def lookups(spark, monkeypatch):
    """The reflection commands (py4j's "r") sent to the JVM from now on."""
    client = spark.sparkContext._gateway._gateway_client
    sent: list[str] = []
    send = client.send_command

    def counting(command, *args, **kwargs):
        if command.startswith("r\n"):
            sent.append(command)
        return send(command, *args, **kwargs)

    monkeypatch.setattr(client, "send_command", counting)
    return sent


def test_a_column_function_used_again_asks_the_jvm_no_class_or_method(spark, lookups):
    F.col("a")
    F.lit(1)
    lookups.clear()
    for _ in range(3):
        F.col("a")
        F.lit(1)
    assert lookups == []


def test_the_session_starts_with_the_view_that_keeps_lookups_and_py4j_alone_asks_each_time(spark, lookups):
    from checkers.jvm_lookups import _KnownView

    view = SparkContext._jvm
    assert isinstance(view, _KnownView)
    raw = view._view
    getattr(raw, "org.apache.spark.sql.functions").col("a")
    lookups.clear()
    getattr(raw, "org.apache.spark.sql.functions").col("a")
    assert len(lookups) == 2  # the class, then the method: what the view saves


def test_a_kept_class_is_still_a_java_class_and_fields_packages_and_missing_names_are_asked_each_time(spark, lookups):
    view = SparkContext._jvm
    integer = getattr(view, "java.lang.Integer")
    assert isinstance(integer, JavaClass) and integer is getattr(view, "java.lang.Integer")
    array = spark.sparkContext._gateway.new_array(integer, 2)
    assert len(array) == 2
    lookups.clear()
    assert integer.MAX_VALUE == 2**31 - 1 and integer.MAX_VALUE == 2**31 - 1
    assert len(lookups) == 2
    for _ in range(2):  # py4j answers a name it does not know as a package
        assert isinstance(getattr(view, "ordeal.NoSuchClass"), JavaPackage)
    assert len(lookups) == 4
    with pytest.raises(Py4JError):
        integer.noSuchMethod  # noqa: B018 - the look-up is the test
