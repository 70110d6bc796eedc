"""Configuration variants: named, validated settings of the whole cluster (clusters/variants/*.toml).

A variant is checked completely before anything boots; a contradiction is one line naming
the setting (VariantError), which the CLI turns into exit 2.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError, field_validator, model_validator

from harness.settings_file import SAFE_NAME, read_settings, settings_path
from harness.validation_message import one_line

VARIANTS_DIR = Path(__file__).resolve().parent / "variants"

# The fault kinds a variant states an expectation for (one pytest scenario each).
FAULT_KINDS = (
    "kill-broker", "kill-leader", "kill-controller", "pause-broker", "partition-halves",
    "isolate-leader", "isolate-controller", "zk-quorum-loss", "link-faults", "unclean-toggle",
    "targeted-isr-shrink", "kill-osn", "pause-osn", "mixed", "kafka-loss-probed",
    "disk-loss", "disk-loss-sole-in-sync",
)
# What a variant states for a fault kind: "valid" (nothing may be found), "invalid" (the
# fault is built to break this configuration: the checkers must find it), or
# "invalid-possible" (either verdict is allowed).
Expectation = Literal["valid", "invalid", "invalid-possible"]


def meets(expectation: str, verdict: str) -> bool | None:
    """Whether a verdict ("valid" / "invalid" / "unknown") is one the expectation allows;
    None when the run is undecided ("unknown") and so proves nothing either way."""
    if verdict == "unknown":
        return None
    return expectation == "invalid-possible" or verdict == expectation


class VariantError(ValueError):
    """A variant file that cannot be used; str() is the one-line message for the user."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ClusterShape(_Strict):
    zookeepers: int = Field(3, ge=1, le=9)
    brokers: int = Field(4, ge=1, le=9)
    osns: int = Field(0, ge=0, le=9)


# A Kafka property name (server.properties keys: lower case words joined by dots, dashes, underscores).
_PROPERTY_KEY = r"[a-zA-Z][a-zA-Z0-9._-]*"
_LINE_BREAKS = re.compile(r"[\r\n\f\v\x00\x85\u2028\u2029]")


class KafkaSettings(_Strict):
    replication_factor: int = Field(3, ge=1)
    min_insync_replicas: int = Field(2, ge=1)
    unclean_leader_election_enable: bool = False
    # Fabric's guide: message.max.bytes (and replica.fetch.max.bytes) above AbsoluteMaxBytes.
    message_max_bytes: int = Field(103_809_024, ge=1024)
    replica_fetch_max_bytes: int = Field(103_809_024, ge=1024)
    log_retention_ms: int = -1
    overrides: dict[str, str | int | bool] = Field(default_factory=dict)

    @field_validator("overrides")
    @classmethod
    def _one_line_each(cls, overrides: dict[str, str | int | bool]) -> dict[str, str | int | bool]:
        """Each override is one server.properties line: a property name, and a value
        without line breaks (nor anything a properties file reads as one)."""
        for key, value in overrides.items():
            if not re.fullmatch(_PROPERTY_KEY, key):
                raise ValueError(f"override key {key!r} is not a Kafka property name ({_PROPERTY_KEY})")
            if isinstance(value, str) and (_LINE_BREAKS.search(value) or value.endswith("\\")):
                raise ValueError(f"override {key}: the value holds a line break or ends in a backslash")
        return overrides


class ProducerSettings(_Strict):
    acks: Literal["all", "1", "0"] = "all"
    enable_idempotence: bool = False
    retries: int = Field(3, ge=0)


# Fabric's channel names (configtx's rule): lower case, digits, dots and dashes, a letter first.
CHANNEL_NAME = r"^[a-z][a-z0-9.-]{0,48}$"


class OrdererSettings(_Strict):
    # "fabric-1.4.12": Hyperledger Fabric's own orderer binary; "model": ordeal's Python model
    # of Fabric's Kafka consenter (clusters/orderer/). The real orderer is what users deploy.
    implementation: Literal["fabric-1.4.12", "model"] = "fabric-1.4.12"
    channels: list[Annotated[str, StringConstraints(pattern=CHANNEL_NAME)]] = Field(
        default_factory=lambda: ["ch0", "ch1"], min_length=1)
    max_message_count: int = Field(10, ge=1)
    absolute_max_bytes: int = Field(10 * 1024 * 1024, ge=1)
    preferred_max_bytes: int = Field(512 * 1024, ge=1)
    batch_timeout_ms: int = Field(500, ge=1)
    writers: dict[str, list[str]] = Field(default_factory=dict)


class Variant(_Strict):
    name: str = Field(min_length=1, max_length=100, pattern=SAFE_NAME,
                      description="a safe word: it names containers, labels and store directories")
    description: str = ""
    cluster: ClusterShape = ClusterShape()
    kafka: KafkaSettings = KafkaSettings()
    producer: ProducerSettings = ProducerSettings()
    orderer: OrdererSettings = OrdererSettings()
    expect: dict[str, Expectation] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _consistent(self) -> "Variant":
        k, c = self.kafka, self.cluster
        if k.min_insync_replicas > k.replication_factor:
            raise ValueError(f"kafka.min_insync_replicas ({k.min_insync_replicas}) exceeds "
                             f"kafka.replication_factor ({k.replication_factor})")
        if k.replication_factor > c.brokers:
            raise ValueError(f"kafka.replication_factor ({k.replication_factor}) exceeds "
                             f"cluster.brokers ({c.brokers})")
        if c.zookeepers % 2 == 0:
            raise ValueError(f"cluster.zookeepers ({c.zookeepers}) is even; a ZooKeeper ensemble needs an odd size")
        if k.replica_fetch_max_bytes > k.message_max_bytes:
            raise ValueError(f"kafka.replica_fetch_max_bytes ({k.replica_fetch_max_bytes}) exceeds "
                             f"kafka.message_max_bytes ({k.message_max_bytes})")
        if c.osns and self.orderer.absolute_max_bytes >= k.message_max_bytes:
            raise ValueError(f"orderer.absolute_max_bytes ({self.orderer.absolute_max_bytes}) must be below "
                             f"kafka.message_max_bytes ({k.message_max_bytes})")
        if self.orderer.preferred_max_bytes > self.orderer.absolute_max_bytes:
            raise ValueError("orderer.preferred_max_bytes exceeds orderer.absolute_max_bytes")
        if len(set(self.orderer.channels)) != len(self.orderer.channels):
            raise ValueError("orderer.channels names a channel twice")
        if c.osns and self.orderer.implementation != "model" and self.orderer.writers:
            raise ValueError("orderer.writers is a setting of the model; Fabric's orderer takes its "
                             "writers from the channel's policies")
        unknown = sorted(set(self.expect) - set(FAULT_KINDS))
        if unknown:
            raise ValueError(f"expect.{unknown[0]}: unknown fault kind (known: {', '.join(FAULT_KINDS)})")
        return self

    def expected(self, fault: str) -> Expectation:
        return self.expect.get(fault, "valid")


def parse_variant(data: dict, source: str) -> Variant:
    try:
        return Variant.model_validate(data)
    except ValidationError as exc:
        raise VariantError(f"variant {source}: {one_line(exc)}") from None


def variant_path(name_or_path: str) -> Path:
    return settings_path(name_or_path, VARIANTS_DIR)


def load_variant(name_or_path: str) -> Variant:
    """A shipped variant by name, or any variant file by path."""
    path, data = read_settings(name_or_path, VARIANTS_DIR, "variant", VariantError)
    return parse_variant(data, str(path))
