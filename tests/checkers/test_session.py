"""The session's small-machine settings."""
from __future__ import annotations

from checkers.session import local_cores


def test_local_masters_are_read_for_their_worker_threads():
    assert [local_cores(m) for m in ("local", "local[3]", "local[4,2]")] == [1, 3, 4]


def test_a_jvm_for_large_histories_gets_the_throughput_heap(spark):
    # The checker tests' session is started as for large histories (spark_session's default).
    max_gib = spark.sparkContext._jvm.java.lang.Runtime.getRuntime().maxMemory() / 2**30
    assert spark.conf.get("spark.driver.memory") == "6g"
    assert max_gib > 5
