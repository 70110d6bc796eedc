"""What a Kafka error means for an op: `fail` (it certainly did not happen) or `info`.

Jepsen's rule: a write is failed only when it certainly did not take effect; anything
else is indeterminate, and the checkers never count an indeterminate send as lost. The
short codes are the history's `error` field ("not-enough-replicas", ...).
"""
from __future__ import annotations

from confluent_kafka import KafkaError

from ground.op import FAIL, INFO

# The broker refuses these on every attempt of the same request, before anything is
# appended, whatever the cluster's state: the record batch itself is unacceptable
# (size against message.max.bytes, malformed records, acks the broker rejects, no right
# to write). A retry cannot have fared differently, so they are certain even after retries.
DETERMINISTIC_REFUSALS = frozenset({
    KafkaError.MSG_SIZE_TOO_LARGE,
    KafkaError.RECORD_LIST_TOO_LARGE,
    KafkaError.INVALID_RECORD,
    KafkaError.INVALID_REQUIRED_ACKS,
    KafkaError.INVALID_TIMESTAMP,
    KafkaError.TOPIC_AUTHORIZATION_FAILED,
    KafkaError.CLUSTER_AUTHORIZATION_FAILED,
    KafkaError.UNSUPPORTED_FOR_MESSAGE_FORMAT,
    KafkaError._INVALID_ARG,
})

# Refused before the append because of the cluster's state at that moment. Kafka's
# Partition.appendRecordsToLeader checks the ISR against min.insync.replicas (acks=all)
# before it writes to the log, so one attempt answered NOT_ENOUGH_REPLICAS appended
# nothing. But librdkafka retries it (it is retriable), and an earlier attempt that timed
# out or lost its connection may have been appended; confluent-kafka does not expose
# librdkafka's per-message persistence status, so this is certain only when the producer
# makes a single attempt (retries=0). Even with idempotence a retry of an appended batch
# gets NOT_ENOUGH_REPLICAS: the ISR check comes before the duplicate-sequence check.
STATE_REFUSALS = frozenset({
    KafkaError.NOT_ENOUGH_REPLICAS,
})


def error_code(code: int) -> str:
    """KafkaError code -> the history's short code: NOT_ENOUGH_REPLICAS -> not-enough-replicas,
    _MSG_TIMED_OUT -> msg-timed-out (librdkafka's local errors start with an underscore)."""
    try:
        name = KafkaError(code).name()
    except Exception:  # noqa: BLE001 - an unknown code still gets a stable name
        return f"kafka-error-{code}"
    return name.strip("_").lower().replace("_", "-")


def send_outcome(code: int, retries: int) -> str:
    """FAIL or INFO for a send whose delivery report carried `code`, from a producer allowed
    `retries` retries. Everything not known to be refused on every attempt is INFO:
    timeouts (_MSG_TIMED_OUT, _TIMED_OUT, REQUEST_TIMED_OUT), NOT_ENOUGH_REPLICAS_AFTER_APPEND
    (the record is in the leader's log), NOT_LEADER_*, disconnects (_TRANSPORT), unknown codes."""
    if code in DETERMINISTIC_REFUSALS:
        return FAIL
    if code in STATE_REFUSALS and retries == 0:
        return FAIL
    return INFO
