"""Kafka's Java client behind confluent-kafka's shape (workloads/java/), without a cluster: its
errors judged as librdkafka's are, and a process that drove it still ends. The client against
a real cluster is in test_on_cluster.py."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from ground.op import FAIL, INFO
from workloads.kafka_errors import error_code, send_outcome

VERSION = "3.9.2"  # the brokers' default


@pytest.fixture(scope="module")
def rel():
    from workloads.java.libs import release

    return release(VERSION)


@pytest.fixture(scope="module")
def jvm(rel):
    return lambda name, *args: rel.cls(f"org.apache.kafka.common.errors.{name}")(*args)


def test_an_expired_delivery_is_request_timed_out_and_indeterminate(jvm, rel):
    from workloads.java.kafka import kafka_error

    err = kafka_error(jvm("TimeoutException", "Expiring 1 record(s)"), rel)
    assert error_code(err.code()) == "request-timed-out" and send_outcome(err.code(), 3) == INFO
    assert err.retriable() and not err.fatal() and not err.txn_requires_abort()


def test_not_enough_replicas_is_a_certain_refusal_only_without_retries_as_with_librdkafka(jvm, rel):
    from workloads.java.kafka import kafka_error

    err = kafka_error(jvm("NotEnoughReplicasException", "ISR 1 < 2"), rel)
    assert error_code(err.code()) == "not-enough-replicas"
    assert send_outcome(err.code(), 0) == FAIL and send_outcome(err.code(), 3) == INFO


def test_a_fenced_producer_is_fatal_and_a_wrapped_error_is_judged_by_its_cause(jvm, rel):
    from workloads.java.kafka import kafka_error

    fenced = jvm("ProducerFencedException", "fenced")
    assert kafka_error(fenced, rel).fatal() and error_code(kafka_error(fenced, rel).code()) == "producer-fenced"
    wrapped = rel.cls("org.apache.kafka.common.KafkaException")("in an error state", fenced)
    assert kafka_error(wrapped, rel).fatal() and kafka_error(wrapped, rel).code() == kafka_error(fenced, rel).code()
    abortable = jvm("RecordTooLargeException", "too large")
    assert kafka_error(abortable, rel).txn_requires_abort() and not kafka_error(abortable, rel).fatal()


def test_a_process_whose_worker_thread_started_the_java_client_still_ends():
    """The JVM's creator thread and every thread that calls the client are daemons to the JVM:
    at exit it waits for non-daemon threads, and a worker that lives on kept a bench from ending."""
    code = textwrap.dedent(f"""
        import threading, time
        ready = threading.Event()
        def worker():
            from workloads.java.kafka import Consumer
            Consumer({{"bootstrap.servers": "127.0.0.1:1", "group.id": "g"}}, "{VERSION}").close()
            ready.set()
            time.sleep(600)
        threading.Thread(target=worker, daemon=True).start()
        assert ready.wait(60)
        print("started")
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "started" in done.stdout, done.stderr[-2000:]


def test_two_java_client_releases_run_side_by_side_in_one_process_each_with_its_own_classes():
    """A suite's cells run 3.9.2 and 4.4.0 clients in one process (one JVM): each release's
    client is built from its own jars, through its own class loader."""
    code = textwrap.dedent("""
        from workloads.java.kafka import Consumer, Producer
        for version in ("3.9.2", "4.4.0"):
            config = {"bootstrap.servers": "127.0.0.1:1", "group.id": "g"}
            consumer, producer = Consumer(config, version), Producer({"bootstrap.servers": "127.0.0.1:1"}, version)
            for client in (consumer, producer):
                jar = str(client._java.getClass().getProtectionDomain().getCodeSource().getLocation())
                assert jar.endswith(f"kafka-clients-{version}.jar"), (version, jar)
            consumer.close()
            producer.flush(0)
        print("both")
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0 and "both" in done.stdout, done.stderr[-2000:]


def test_the_jvms_segv_handler_outlives_faulthandler_being_turned_off_as_pytest_does_at_its_end():
    """make test's pytest passed every test and then died of SIGSEGV at exit: pytest turns
    faulthandler off at its end, which put back the default SIGSEGV action over the JVM's
    handler, and the JVM's next fault of its own (at its exit) killed the process."""
    code = textwrap.dedent("""
        import ctypes, faulthandler, signal
        class SigAction(ctypes.Structure):
            _fields_ = [("handler", ctypes.c_void_p), ("mask", ctypes.c_ulong * 16),
                        ("flags", ctypes.c_int), ("restorer", ctypes.c_void_p)]
        def handler():
            action = SigAction()
            assert ctypes.CDLL(None).sigaction(signal.SIGSEGV, None, ctypes.byref(action)) == 0
            return action.handler
        faulthandler.enable()
        from workloads.java.libs import start_jvm
        start_jvm()
        jvms = handler()
        faulthandler.disable()
        print("kept" if handler() == jvms and jvms else f"lost {handler()} {jvms}")
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "kept" in done.stdout, (done.stdout, done.stderr[-2000:])
