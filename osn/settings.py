"""The OSN config file (/etc/ordeal/osn.json), written by the cluster from the variant.

Settings enter here once and travel as these frozen models; nothing else in the OSN reads
files or the environment.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

ANYONE = "*"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class BatchSettings(_Strict):
    """Fabric's Orderer.BatchSize and BatchTimeout."""

    max_message_count: int = Field(10, ge=1)
    absolute_max_bytes: int = Field(10 * 1024 * 1024, ge=1)
    preferred_max_bytes: int = Field(512 * 1024, ge=1)
    batch_timeout_ms: int = Field(500, ge=1)

    @model_validator(mode="after")
    def _preferred_within_absolute(self) -> "BatchSettings":
        if self.preferred_max_bytes > self.absolute_max_bytes:
            raise ValueError("preferred_max_bytes exceeds absolute_max_bytes")
        return self


class ProducerSettings(_Strict):
    # Fabric's producer: acks=all (WaitForAll), 3 retries, no idempotence.
    acks: Literal["all", "1", "0"] = "all"
    retries: int = Field(3, ge=0)
    enable_idempotence: bool = False
    # How long Broadcast waits for Kafka's acknowledgement before answering SERVICE_UNAVAILABLE.
    delivery_timeout_ms: int = Field(30_000, ge=1)


class TopicSettings(_Strict):
    replication_factor: int = Field(3, ge=1)
    min_insync_replicas: int = Field(2, ge=1)


class TlsSettings(_Strict):
    """Fabric's General.TLS: the server's key pair (PEM files) and, for mutual TLS, the CAs a
    client's certificate must chain to."""

    certificate: Path
    private_key: Path
    client_auth_required: bool = False
    client_root_cas: list[Path] = Field(default_factory=list)

    @model_validator(mode="after")
    def _mutual_needs_roots(self) -> "TlsSettings":
        if self.client_auth_required and not self.client_root_cas:
            raise ValueError("client_auth_required needs client_root_cas")
        return self


class KafkaTlsSettings(_Strict):
    """Fabric's Kafka.TLS: the key pair the OSN presents to the brokers and the CA their
    certificates must chain to (PEM files)."""

    certificate: Path
    private_key: Path
    root_ca: Path

    def client_config(self) -> dict[str, str]:
        """librdkafka's names for them; the broker's certificate is checked against the
        address dialled (librdkafka's default endpoint identification)."""
        return {"security.protocol": "ssl", "ssl.certificate.location": str(self.certificate),
                "ssl.key.location": str(self.private_key), "ssl.ca.location": str(self.root_ca)}


class OsnSettings(_Strict):
    name: str
    listen: str = "0.0.0.0:7050"
    # Fabric's operations service: GET /healthz answers 200 once every chain has started.
    operations_listen: str = "0.0.0.0:8443"
    kafka_bootstrap_servers: list[str] = Field(min_length=1)
    ledger_dir: Path = Path("/var/lib/ordeal/ledger")
    channels: list[str] = Field(min_length=1)
    batch: BatchSettings = BatchSettings()
    producer: ProducerSettings = ProducerSettings()
    topic: TopicSettings = TopicSettings()
    # Channel id -> creator ids allowed to Broadcast; "*" allows anyone; a channel not
    # listed accepts anyone (the variant's default).
    writers: dict[str, list[str]] = Field(default_factory=dict)
    tls: TlsSettings | None = None  # None: plain gRPC
    kafka_tls: KafkaTlsSettings | None = None  # None: plaintext to Kafka

    def kafka_client_config(self) -> dict[str, str]:
        """What every Kafka client of the OSN starts from: where Kafka is, and how to reach it."""
        return {"bootstrap.servers": ",".join(self.kafka_bootstrap_servers),
                **(self.kafka_tls.client_config() if self.kafka_tls else {})}

    @model_validator(mode="after")
    def _known_channels(self) -> "OsnSettings":
        unknown = sorted(set(self.writers) - set(self.channels))
        if unknown:
            raise ValueError(f"writers.{unknown[0]}: not one of channels {self.channels}")
        if self.topic.min_insync_replicas > self.topic.replication_factor:
            raise ValueError("topic.min_insync_replicas exceeds topic.replication_factor")
        return self

    def may_write(self, channel: str, creator: str) -> bool:
        allowed = self.writers.get(channel, [ANYONE])
        return ANYONE in allowed or creator in allowed


class SettingsError(ValueError):
    """A config file the OSN cannot use; str() is the one-line message."""


def load_settings(path: Path) -> OsnSettings:
    try:
        return OsnSettings.model_validate(json.loads(path.read_text()))
    except OSError as exc:
        raise SettingsError(f"{path}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise SettingsError(f"{path}: not valid JSON: {exc}") from None
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise SettingsError(f"{path}: {where}: {err['msg'].removeprefix('Value error, ')}") from None
