"""The real Kafka log's clients take the OSN's configuration (no broker needed: the bootstrap
address is a closed loopback port): librdkafka builds them (it refuses a configuration it
cannot use, such as a fetch larger than what it may receive), its producer accepts an
envelope of AbsoluteMaxBytes and refuses one well above, and a chain's reader starts where
it is asked to."""
import pytest
from confluent_kafka import OFFSET_BEGINNING

from osn.kafka_log import KafkaLogs
from osn.partition_log import LogUnavailable
from osn.settings import OsnSettings

MARGIN = 64 * 1024  # what the producer's message.max.bytes allows above AbsoluteMaxBytes (kafka_log.py)


@pytest.fixture(params=[10 * 1024 * 1024, 99 * 1024 * 1024], ids=["10MiB", "99MiB"])
def logs(request, tmp_path):
    """The OSN's Kafka clients for AbsoluteMaxBytes = the parameter, with 1 s to deliver."""
    settings = OsnSettings.model_validate({
        "name": "osn1", "kafka_bootstrap_servers": ["127.0.0.1:1"], "ledger_dir": str(tmp_path),
        "channels": ["ch0"], "batch": {"absolute_max_bytes": request.param},
        "producer": {"acks": "all", "retries": 3, "delivery_timeout_ms": 1000}})
    made = KafkaLogs(settings)  # librdkafka raises KafkaException here for a configuration it refuses
    yield made, request.param
    made.close()


def test_kafka_producer_accepts_an_envelope_of_absolute_max_bytes(logs):
    made, absolute_max_bytes = logs
    with pytest.raises(LogUnavailable) as no_broker:
        made.partition("ch0").append(b"x" * absolute_max_bytes)
    # Queued and sent for: it failed only because no broker answered within delivery.timeout.ms.
    assert (str(no_broker.value), no_broker.value.maybe_appended) == ("_MSG_TIMED_OUT", True)


def test_kafka_producer_refuses_an_envelope_beyond_its_margin_before_sending_it(logs):
    made, absolute_max_bytes = logs
    with pytest.raises(LogUnavailable) as too_large:
        made.partition("ch0").append(b"x" * (absolute_max_bytes + 2 * MARGIN))
    assert (str(too_large.value), too_large.value.maybe_appended) == ("MSG_SIZE_TOO_LARGE", False)


@pytest.mark.parametrize("start, offset", [(None, OFFSET_BEGINNING), (41, 41)], ids=["oldest", "41"])
def test_kafka_reader_is_built_and_assigned_partition_0_of_the_channel_at_its_start(logs, start, offset):
    made, _ = logs
    reader = made.partition("ch0").reader(start)  # librdkafka refuses fetch.max.bytes above what it may receive
    try:
        assert [(tp.topic, tp.partition, tp.offset) for tp in reader._consumer.assignment()] == [("ch0", 0, offset)]
    finally:
        reader.close()
