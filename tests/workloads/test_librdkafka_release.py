"""A librdkafka release other than ordeal's own, in a process of its own (workloads/librdkafka/),
without a cluster: its environment, the process's start and end, and what crosses between the
processes where no broker is involved (nothing listens at the address the clients are given).
What needs a broker (acknowledged sends, rebalance callbacks, transactions) is the real-cluster
test in tests/workloads/test_on_cluster.py.

The release's environment is built in ordeal's cache, once per machine (the first test that
needs it installs confluent-kafka RELEASE from the package index, a few seconds)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from confluent_kafka import KafkaError, KafkaException

from tests.support import until
from workloads.librdkafka import process
from workloads.librdkafka.environments import ClientUnavailable, environment, environment_key, python_of

RELEASE = "2.3.0"
NOBODY = "127.0.0.1:1"  # nothing listens here: the clients never reach a broker
REPO = Path(__file__).resolve().parents[2]


def _alive(pid: int) -> bool:
    """Whether process `pid` runs (a zombie nobody reaped has ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state not in ("Z", "X")


def test_a_releases_environment_is_keyed_by_the_release_and_the_python():
    assert environment_key("2.3.0", (3, 11)) == "confluent-kafka-2.3.0-py3.11"
    assert len({environment_key("2.3.0", (3, 11)), environment_key("2.3.0", (3, 12)),
                environment_key("2.4.0", (3, 11))}) == 3


def test_a_release_is_installed_once_and_its_process_says_what_it_loaded():
    from workloads.kafka_clients import OWN_RELEASE, KafkaClient

    client = KafkaClient("librdkafka", RELEASE)
    assert client.isolated
    client.prepare()
    t = time.monotonic()
    assert environment(RELEASE) == environment(RELEASE)  # built: found, not built again
    assert time.monotonic() - t < 1
    assert client.describe() == {"implementation": "librdkafka", "version": RELEASE, "confluent_kafka": RELEASE,
                                 "process": "own"}
    own = KafkaClient("librdkafka", OWN_RELEASE)  # ordeal's own release stays in this process
    assert not own.isolated and own.describe()["confluent_kafka"] == OWN_RELEASE and "process" not in own.describe()


def test_a_release_the_index_does_not_have_is_one_line_naming_it_and_leaves_nothing(tmp_path):
    with pytest.raises(ClientUnavailable) as err:
        environment("2.99.0", cache=tmp_path)
    assert str(err.value).startswith("confluent-kafka 2.99.0 could not be installed: ") and "\n" not in str(err.value)
    assert not (tmp_path / "librdkafka-client" / environment_key("2.99.0")).exists()


def test_the_process_ends_when_its_parent_closes_the_socket():
    release = process.Release(RELEASE, python_of(environment(RELEASE)))
    assert release.versions["libversion"] == RELEASE
    release.close()
    assert release.proc.wait(timeout=10) == 0
    until(lambda: release.dead, 10, what="the parent to see its child gone")
    with pytest.raises(KafkaException) as err:
        release.call(0, "hello")
    assert err.value.args[0].fatal()


def test_the_process_ends_when_its_parent_is_killed():
    parent = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys, time
        from workloads.librdkafka.process import release
        print(release({RELEASE!r}).proc.pid, flush=True)
        time.sleep(120)
        """)], cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        child = int(parent.stdout.readline())
        assert _alive(child)
    finally:
        parent.kill()
        parent.wait()
    until(lambda: not _alive(child), 10, what=f"the child {child} to end with its killed parent")


def test_errors_cross_as_the_release_raised_them():
    from workloads.librdkafka.kafka import Consumer, Producer

    full = Producer({"bootstrap.servers": NOBODY, "queue.buffering.max.messages": 1}, RELEASE)
    full.produce("t", value=b"x", partition=0)
    with pytest.raises(BufferError):
        full.produce("t", value=b"y", partition=0)
    small = Producer({"bootstrap.servers": NOBODY, "message.max.bytes": 1000}, RELEASE)
    with pytest.raises(KafkaException) as err:
        small.produce("t", value=b"z" * 2000, partition=0)
    assert err.value.args[0].code() == KafkaError.MSG_SIZE_TOO_LARGE
    consumer = Consumer({"bootstrap.servers": NOBODY, "group.id": "g"}, RELEASE)
    consumer.close()
    with pytest.raises(RuntimeError):
        consumer.consume(num_messages=1, timeout=0)


def test_a_delivery_report_runs_on_the_thread_that_polls_with_the_records_fields():
    from workloads.librdkafka.kafka import Producer

    producer = Producer({"bootstrap.servers": NOBODY, "message.timeout.ms": 300}, RELEASE)
    seen: list[tuple] = []
    producer.produce("t", key=b"k", value=b"v", partition=2, on_delivery=lambda err, msg: seen.append(
        (threading.current_thread(), err.code(), msg.topic(), msg.partition(), msg.key(), msg.value())))
    until(lambda: producer.poll(0.1) >= 0 and seen, 10, what="the delivery report")
    assert seen == [(threading.current_thread(), KafkaError._MSG_TIMED_OUT, "t", 2, b"k", b"v")]


def test_a_call_the_process_does_not_answer_is_given_up_after_its_timeout_and_a_margin(monkeypatch):
    from workloads.librdkafka.kafka import Producer

    producer = Producer({"bootstrap.servers": NOBODY}, RELEASE)
    monkeypatch.setattr(process, "MARGIN", 0.5)
    pid = process.release(RELEASE).proc.pid
    os.kill(pid, signal.SIGSTOP)
    try:
        t = time.monotonic()
        with pytest.raises(KafkaException) as err:
            producer.poll(0.1)
        assert err.value.args[0].code() == KafkaError._TIMED_OUT and time.monotonic() - t < 5
    finally:
        os.kill(pid, signal.SIGCONT)
    assert producer.poll(0) >= 0  # answered again; the late answer went nowhere


def test_a_dead_processs_clients_fail_and_the_next_client_starts_another():
    from workloads.librdkafka.kafka import Producer

    producer = Producer({"bootstrap.servers": NOBODY}, RELEASE)
    first = process.release(RELEASE)
    first.proc.kill()
    until(lambda: first.dead, 10, what="the parent to see its child killed")
    with pytest.raises(KafkaException) as err:
        producer.poll(0)
    assert err.value.args[0].fatal() and "process ended" in err.value.args[0].str()
    assert Producer({"bootstrap.servers": NOBODY}, RELEASE).poll(0) >= 0
    assert process.release(RELEASE) is not first
