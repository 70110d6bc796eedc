"""Which Kafka errors make a send `fail` (certainly not written) and which `info`; no Kafka needed."""
from __future__ import annotations

import pytest
from confluent_kafka import KafkaError

from ground.op import FAIL, INFO
from workloads.kafka_errors import error_code, send_outcome


@pytest.mark.parametrize("code", [KafkaError.MSG_SIZE_TOO_LARGE, KafkaError.RECORD_LIST_TOO_LARGE,
                                  KafkaError.INVALID_RECORD, KafkaError.INVALID_REQUIRED_ACKS,
                                  KafkaError.TOPIC_AUTHORIZATION_FAILED])
def test_a_request_refused_on_every_attempt_fails_even_after_retries(code):
    assert send_outcome(code, retries=0) == FAIL
    assert send_outcome(code, retries=3) == FAIL


def test_not_enough_replicas_fails_when_the_only_attempt_was_refused():
    assert send_outcome(KafkaError.NOT_ENOUGH_REPLICAS, retries=0) == FAIL


def test_not_enough_replicas_after_retries_is_indeterminate():
    # An earlier attempt may have timed out after the append; only the last answer is known.
    assert send_outcome(KafkaError.NOT_ENOUGH_REPLICAS, retries=3) == INFO


@pytest.mark.parametrize("code", [KafkaError.NOT_ENOUGH_REPLICAS_AFTER_APPEND, KafkaError._MSG_TIMED_OUT,
                                  KafkaError._TIMED_OUT, KafkaError.REQUEST_TIMED_OUT,
                                  KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError._TRANSPORT,
                                  KafkaError._ALL_BROKERS_DOWN, KafkaError.UNKNOWN_TOPIC_OR_PART, 12345])
def test_timeouts_disconnects_after_append_and_unknown_errors_are_indeterminate(code):
    assert send_outcome(code, retries=0) == INFO
    assert send_outcome(code, retries=3) == INFO


def test_error_codes_are_short_lowercase_names():
    assert error_code(KafkaError.NOT_ENOUGH_REPLICAS) == "not-enough-replicas"
    assert error_code(KafkaError.NOT_ENOUGH_REPLICAS_AFTER_APPEND) == "not-enough-replicas-after-append"
    assert error_code(KafkaError._MSG_TIMED_OUT) == "msg-timed-out"
