"""The real Kafka log's client configuration is accepted by librdkafka (no broker needed:
the bootstrap address is a closed loopback port, and nothing is produced)."""
import pytest

from clusters.orderer.kafka_log import KafkaLogs
from clusters.orderer.settings import OsnSettings


@pytest.mark.parametrize("absolute_max_bytes", [10 * 1024 * 1024, 99 * 1024 * 1024])
def test_kafka_clients_accept_the_osn_configuration(tmp_path, absolute_max_bytes):
    settings = OsnSettings.model_validate({
        "name": "osn1", "kafka_bootstrap_servers": ["127.0.0.1:1"], "ledger_dir": str(tmp_path),
        "channels": ["ch0"], "batch": {"absolute_max_bytes": absolute_max_bytes},
        "producer": {"acks": "all", "retries": 3}})
    logs = KafkaLogs(settings)
    try:
        logs.partition("ch0").reader(None).close()
        logs.partition("ch0").reader(41).close()
    finally:
        logs.close()
