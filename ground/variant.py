"""Configuration variants: named, validated settings of the whole cluster (clusters/variants/*.toml).

A variant is checked completely before anything boots; a contradiction is one line naming
the setting (VariantError), which the CLI turns into exit 2.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError, field_validator, model_validator

from ground import kafka_versions
from ground.kafka_versions import VERSION_PATTERN, Mode
from ground.expectations import Expectation
from ground.fault_kinds import FAULT_KINDS, MODE_FAULT_KINDS, canonical
from ground.settings_file import SAFE_NAME, read_settings, settings_path
from ground.validation_message import one_line

VARIANTS_DIR = Path(__file__).resolve().parents[1] / "clusters" / "variants"  # the shipped variants (data)


def shipped_variants() -> list[str]:
    """The names of the shipped variants: the files of clusters/variants/, read each time."""
    return sorted(p.stem for p in VARIANTS_DIR.glob("*.toml"))

# The fault kinds a variant states an expectation for (one pytest scenario each).
class VariantError(ValueError):
    """A variant file that cannot be used; str() is the one-line message for the user."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ClusterShape(_Strict):
    # Filled in from kafka.mode when absent: 3 ZooKeeper nodes and no controllers in
    # ZooKeeper mode, 3 dedicated controllers and no ZooKeeper in KRaft.
    zookeepers: int = Field(3, ge=0, le=9)
    controllers: int = Field(0, ge=0, le=9, description="KRaft's dedicated controllers (the metadata quorum)")
    brokers: int = Field(4, ge=1, le=9)
    osns: int = Field(0, ge=0, le=9)


# A Kafka property name (server.properties keys: lower case words joined by dots, dashes, underscores).
_PROPERTY_KEY = r"[a-zA-Z][a-zA-Z0-9._-]*"
_LINE_BREAKS = re.compile(r"[\r\n\f\v\x00\x85\u2028\u2029]")


class KafkaSettings(_Strict):
    version: str = Field("3.9.2", pattern=VERSION_PATTERN, description="Apache Kafka release, built from Maven Central")
    mode: Mode = Field("zookeeper", description="metadata: a ZooKeeper ensemble, or KRaft controllers")
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


class ClientSettings(_Strict):
    # "librdkafka": the C client through confluent-kafka; "java": Kafka's own kafka-clients
    # jar, which most applications use and with which Jepsen found its Kafka bugs, run in the
    # run's process by JPype (workloads/java/).
    implementation: Literal["librdkafka", "java"] = "librdkafka"
    # java: the kafka-clients release (Maven; default the brokers' kafka.version). librdkafka:
    # the confluent-kafka release (the package index; default the one installed with ordeal),
    # installed once into an environment of its own and run in a process of its own
    # (workloads/librdkafka/).
    version: str | None = Field(None, description="the client's release (java: kafka-clients, default the brokers' "
                                                  "kafka.version; librdkafka: confluent-kafka, default ordeal's own)")

    @model_validator(mode="after")
    def _version_of_the_implementation(self) -> "ClientSettings":
        if self.version is None:
            return self
        if self.implementation == "librdkafka":
            refused = kafka_versions.check_confluent_kafka(self.version)
            if refused:
                raise ValueError(refused)
            return self
        if not re.fullmatch(VERSION_PATTERN, self.version):
            raise ValueError(f"client.version {self.version!r} is not a kafka-clients release number X.Y.Z")
        if kafka_versions.parse(self.version)[0] not in kafka_versions.SUPPORTED_MAJORS:
            majors = ", ".join(f"{m}.x" for m in kafka_versions.SUPPORTED_MAJORS)
            raise ValueError(f"client.version {self.version}: only Java clients {majors} are supported")
        return self

    @property
    def label(self) -> str:
        """How a suite's axis and the compare page name this client: "java", "librdkafka@2.3.0"."""
        return self.implementation + (f"@{self.version}" if self.version else "")

    @classmethod
    def from_label(cls, label: str) -> "ClientSettings":
        """The client a label names (`implementation` or `implementation@version`); ValueError
        (one line) for an unknown implementation or a version it refuses."""
        implementation, _, version = label.partition("@")
        if implementation not in ("librdkafka", "java"):
            raise ValueError(f"client {label!r}: the implementation is librdkafka or java "
                             "(optionally @version: librdkafka@2.3.0, java@3.9.2)")
        if "@" in label and not version:
            raise ValueError(f"client {label!r}: a version after @")
        try:
            return cls(implementation=implementation, version=version or None)
        except ValidationError as exc:
            raise ValueError(one_line(exc)) from None


# Fabric's channel names (configtx's rule): lower case, digits, dots and dashes, a letter first.
CHANNEL_NAME = r"^[a-z][a-z0-9.-]{0,48}$"


class OrdererSettings(_Strict):
    # "fabric-1.4.12": Hyperledger Fabric's own orderer binary (from the Go module proxy);
    # "fabric-2.5.16": that of Fabric's long-term-support release, which still has the Kafka
    # consenter (built on first use from a source tree, clusters/images/fabric_build.py);
    # "model": ordeal's Python model of Fabric's Kafka consenter (osn/). The real orderer is
    # what users deploy.
    implementation: Literal["fabric-1.4.12", "fabric-2.5.16", "model"] = "fabric-1.4.12"
    # Patch files (paths from the repository's root) applied to Fabric's source before the
    # orderer is built: a fix shown under the reproducer that breaks the release.
    patches: list[str] = Field(default_factory=list)
    channels: list[Annotated[str, StringConstraints(pattern=CHANNEL_NAME)]] = Field(
        default_factory=lambda: ["ch0", "ch1"], min_length=1)
    max_message_count: int = Field(10, ge=1)
    absolute_max_bytes: int = Field(10 * 1024 * 1024, ge=1)
    preferred_max_bytes: int = Field(512 * 1024, ge=1)
    batch_timeout_ms: int = Field(500, ge=1)
    writers: dict[str, list[str]] = Field(default_factory=dict)
    # TLS on the OSNs' gRPC (General.TLS): "server" the OSNs present certificates from their
    # org's TLS CA; "mutual" clients present theirs too (ClientAuthRequired), and a Deliver
    # must carry its certificate's hash (osn/tls.py). Material from cryptogen.
    tls: Literal["off", "server", "mutual"] = "off"
    # TLS between the orderers and Kafka (Fabric's Kafka.TLS): the brokers' CLUSTER listener,
    # which only the orderers use, speaks TLS and requires the orderer's TLS certificate; the
    # orderer checks the broker's against the brokers' own TLS CA. Clients on the host and the
    # brokers' replication stay plaintext (README, "What is encrypted").
    kafka_tls: bool = False
    # How Fabric's orderers agree on blocks: "kafka" (the subject of ordeal), or "etcdraft"
    # (Fabric 1.4.1 and later; every orderer a consenter, talking to the others over mutual
    # TLS), so that both can run the same workloads and faults side by side.
    consensus: Literal["kafka", "etcdraft"] = "kafka"


class Variant(_Strict):
    name: str = Field(min_length=1, max_length=100, pattern=SAFE_NAME,
                      description="a safe word: it names containers, labels and store directories")
    description: str = ""
    cluster: ClusterShape = ClusterShape()
    kafka: KafkaSettings = KafkaSettings()
    producer: ProducerSettings = ProducerSettings()
    orderer: OrdererSettings = OrdererSettings()
    client: ClientSettings = ClientSettings()
    expect: dict[str, Expectation] = Field(default_factory=dict)
    # Fault kinds after which the system promises to serve again once the fault is healed: a
    # partition never read again, a halted channel or a hang is then a finding (checkers.liveness).
    available: dict[str, bool] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _shape_of_mode(cls, data: object) -> object:
        """The metadata nodes a variant does not name are its mode's defaults; a renamed fault
        kind in its tables is read under its new name."""
        if not isinstance(data, dict):
            return data
        for table in ("expect", "available"):
            if isinstance(data.get(table), dict):
                data = {**data, table: {canonical(k): v for k, v in data[table].items()}}
        kafka, shape = data.get("kafka"), data.get("cluster", {})
        mode = kafka.get("mode", "zookeeper") if isinstance(kafka, dict) else "zookeeper"
        if isinstance(shape, dict) and mode in ("zookeeper", "kraft"):
            defaults = {"zookeepers": 3, "controllers": 0} if mode == "zookeeper" else {"zookeepers": 0, "controllers": 3}
            data = {**data, "cluster": {**defaults, **shape}}
        return data

    @model_validator(mode="after")
    def _consistent(self) -> "Variant":
        k, c = self.kafka, self.cluster
        refused = kafka_versions.check(k.version, k.mode)
        if refused:
            raise ValueError(refused)
        if k.mode == "kraft":
            if c.zookeepers:
                raise ValueError(f"cluster.zookeepers ({c.zookeepers}): a KRaft variant runs no ZooKeeper; "
                                 "its metadata quorum is cluster.controllers")
            if c.controllers % 2 == 0:
                raise ValueError(f"cluster.controllers ({c.controllers}) is {'zero' if not c.controllers else 'even'}; "
                                 "a KRaft quorum needs an odd number of controllers")
        else:
            if c.controllers:
                raise ValueError(f"cluster.controllers ({c.controllers}): dedicated controllers are KRaft's; "
                                 "in ZooKeeper mode a broker is the controller (kafka.mode = \"kraft\" for them)")
            if c.zookeepers == 0:
                raise ValueError("cluster.zookeepers (0): a ZooKeeper-mode variant needs an ensemble")
        fabric = self.orderer.implementation.startswith("fabric-")
        if c.osns and fabric and not kafka_versions.speaks_old_protocols(k.version):
            # Seen here: the orderer sets up each channel's topic with CreateTopics v0, which a
            # 4.4.0 broker refuses (UnsupportedVersionException), so no chain ever starts. 2.5's
            # sarama 1.20.1 speaks the same old versions.
            raise ValueError(f"orderer.implementation {self.orderer.implementation} cannot use Kafka {k.version}: "
                             "its client (sarama 1.19 / 1.20) sends request versions Kafka 4.0 removed (KIP-896; "
                             "CreateTopics v0 is refused, so no channel starts); use implementation = \"model\" or "
                             "a 3.x Kafka")
        if self.orderer.patches and not fabric:
            raise ValueError("orderer.patches are applied to Fabric's source: they need a fabric-* implementation")
        if k.min_insync_replicas > k.replication_factor:
            raise ValueError(f"kafka.min_insync_replicas ({k.min_insync_replicas}) exceeds "
                             f"kafka.replication_factor ({k.replication_factor})")
        if k.replication_factor > c.brokers:
            raise ValueError(f"kafka.replication_factor ({k.replication_factor}) exceeds "
                             f"cluster.brokers ({c.brokers})")
        if k.mode == "zookeeper" and c.zookeepers % 2 == 0:
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
        if self.orderer.consensus == "etcdraft" and (self.orderer.implementation != "fabric-1.4.12"
                                                     or self.orderer.tls != "mutual"):
            raise ValueError("orderer.consensus etcdraft needs implementation \"fabric-1.4.12\" (the model orders by "
                             "Kafka only) and tls = \"mutual\" (Raft's consenters know each other by TLS certificate)")
        if self.orderer.kafka_tls and (not c.osns or self.orderer.consensus != "kafka"):
            raise ValueError("orderer.kafka_tls secures the orderers' connections to Kafka: it needs cluster.osns "
                             "and consensus \"kafka\"")
        if c.osns and self.orderer.implementation != "model" and self.orderer.writers:
            raise ValueError("orderer.writers is a setting of the model; Fabric's orderer takes its "
                             "writers from the channel's policies")
        for table, kinds in (("expect", self.expect), ("available", self.available)):
            unknown = sorted(set(kinds) - set(FAULT_KINDS))
            if unknown:
                raise ValueError(f"{table}.{unknown[0]}: unknown fault kind (known: {', '.join(FAULT_KINDS)})")
        for fault in self.expect:
            why = self.refuses_fault_kind(fault)
            if why:
                raise ValueError(f"expect.{fault}: {why}")
        return self

    @property
    def client_version(self) -> str | None:
        """The client's release: the Java client's (the brokers' unless client.version says
        otherwise), or librdkafka's pinned confluent-kafka release (None: ordeal's own)."""
        if self.client.implementation != "java":
            return self.client.version
        return self.client.version or self.kafka.version

    def with_kafka_version(self, version: str) -> "Variant":
        """This variant on Kafka `version` (a suite's kafka_versions axis), checked as a file
        of it would be and named for it (`<name>-kafka-<version>`: its own cluster, its own
        column of the compare page). VariantError (one line) where the variant refuses it."""
        data = self.model_dump()
        data["name"] = f"{self.name}-kafka-{version}"
        data["kafka"] = {**data["kafka"], "version": version}
        return parse_variant(data, f"{self.name} on Kafka {version}")

    def refuses_fault_kind(self, fault: str) -> str | None:
        """Why a fault kind cannot run on this variant (one line), or None."""
        needs = MODE_FAULT_KINDS.get(fault)
        if needs is None or needs == self.kafka.mode:
            return None
        if needs == "zookeeper":
            return f"{fault} needs ZooKeeper; this variant runs KRaft (kafka.mode)"
        return f"{fault} needs KRaft controllers; this variant runs ZooKeeper mode (kafka.mode)"

    def has_role(self, role: str) -> bool:
        """Whether this variant's cluster has nodes of `role` (clusters/node.py's roles)."""
        counts = {"zookeeper": self.cluster.zookeepers, "controller": self.cluster.controllers,
                  "kafka": self.cluster.brokers, "osn": self.cluster.osns, "toxiproxy": 1}
        return counts.get(role, 0) > 0

    def expected(self, fault: str) -> Expectation:
        return self.expect.get(fault, "valid")

    def promises_availability(self, fault: str) -> bool:
        """Whether this configuration must serve again once `fault` is healed ([available])."""
        return self.available.get(fault, False)

    def judgement(self, kinds: tuple[str, ...] | list[str]) -> "Judgement":
        """How a run under the fault kinds `kinds` is judged here: the strictest expectation of
        theirs that this variant states (valid before invalid before invalid-possible: the
        verdict that allows least), availability promised if any of them promises it, and the
        kinds neither table covers (said in the run's banner: judged as valid and unpromised)."""
        covered = [k for k in kinds if k in self.expect or k in self.available]
        stated = [self.expect[k] for k in kinds if k in self.expect]
        expectation = min(stated, key=_STRICTNESS.index) if stated else "valid"
        return Judgement(kinds=list(kinds), expectation=expectation,
                         available=any(self.available.get(k, False) for k in kinds),
                         uncovered=[k for k in kinds if k not in covered])


_STRICTNESS: list[str] = ["valid", "invalid", "invalid-possible"]


class Judgement(BaseModel):
    """What a variant expects of a run under some fault kinds, and what it promises (run.json
    "judgement", which the checker, the suite and the report read)."""

    model_config = ConfigDict(frozen=True)
    kinds: list[str]
    expectation: Expectation
    available: bool
    uncovered: list[str]


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
