"""Configuration fault: unclean.leader.election.enable switched at run time, on the topics
and on the cluster-wide dynamic broker default, then read back.

Kafka facts (DESIGN.md "Nemeses"): in ZooKeeper mode, setting it true on a topic or as the
dynamic default makes the controller elect an out-of-sync replica for a leaderless
partition at once, without a restart; setting it back to false only affects later
elections. The dynamic default is the BROKER resource with an empty name (what
`kafka-configs --entity-default` alters); a topic's own override wins over it, so both are set.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, ConfigSource, ResourceType
from pydantic import BaseModel, ConfigDict, Field

from clusters.health import admin_client
from harness.nemesis_api import register_fault
from harness.op import Op
from nemesis.fault import Fault, op
from nemesis.targets import user_partitions

KEY = "unclean.leader.election.enable"
CLUSTER_DEFAULT = "broker-default"  # how ops name the dynamic broker default
TIMEOUT = 15.0


@dataclass(frozen=True)
class Setting:
    """The key on one resource: its value, and whether the resource overrides it itself
    (a topic config / a dynamic default) or inherits it."""

    value: bool | None
    overridden: bool


def _resource(name: str) -> ConfigResource:
    if name == CLUSTER_DEFAULT:
        return ConfigResource(ResourceType.BROKER, "")
    return ConfigResource(ResourceType.TOPIC, name)


def _bool(text: str | None) -> bool | None:
    return None if text is None else text.lower() == "true"


def read(cluster: Any, names: list[str]) -> dict[str, Setting]:
    """The key as each resource (topic name or CLUSTER_DEFAULT) reports it now."""
    admin = admin_client(cluster.bootstrap_servers())
    futures = admin.describe_configs([_resource(n) for n in names], request_timeout=TIMEOUT)
    found: dict[str, Setting] = {}
    for res, fut in futures.items():
        name = CLUSTER_DEFAULT if res.restype == ResourceType.BROKER else res.name
        entry = fut.result(timeout=TIMEOUT + 1).get(KEY)
        if entry is None:  # the default resource lists only what is set dynamically
            found[name] = Setting(None, False)
        else:
            own = (ConfigSource.DYNAMIC_TOPIC_CONFIG.value, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG.value)
            found[name] = Setting(_bool(entry.value), entry.source in own)
    return found


def write(cluster: Any, changes: dict[str, bool | None]) -> None:
    """Set the key on each resource, or (None) delete its override so it inherits again."""
    admin = admin_client(cluster.bootstrap_servers())
    resources = []
    for name, value in changes.items():
        res = _resource(name)
        if value is None:
            res.add_incremental_config(ConfigEntry(KEY, None, incremental_operation=AlterConfigOpType.DELETE))
        else:
            res.add_incremental_config(ConfigEntry(KEY, str(value).lower(),
                                                   incremental_operation=AlterConfigOpType.SET))
        resources.append(res)
    for fut in admin.incremental_alter_configs(resources, request_timeout=TIMEOUT).values():
        fut.result(timeout=TIMEOUT + 1)


class UncleanOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    topics: list[str] | None = Field(None, description="topics to switch; default every user topic at start")
    value: bool | None = Field(None, description="what to switch to; default the opposite of the variant's")
    seed: int = 0


class UncleanToggle(Fault):
    """start: switch the key on the topics and the broker default, record what reads back;
    stop / heal_all: put back what each resource had before the first start."""

    name = "unclean-toggle"

    def __init__(self, options: UncleanOptions):
        super().__init__(options.seed)
        self.options = options
        self.before: dict[str, Setting] = {}  # what to restore; kept from the first start on

    def target_value(self) -> bool:
        if self.options.value is not None:
            return self.options.value
        return not self.cluster.variant.kafka.unclean_leader_election_enable

    def set(self, value: bool, topics: list[str]) -> Op:
        names = [CLUSTER_DEFAULT, *topics]
        for name, setting in read(self.cluster, names).items():
            self.before.setdefault(name, setting)
        write(self.cluster, {n: value for n in names})
        after = read(self.cluster, names)
        return op("config", self.name, key=KEY, set=value,
                  read_back={n: after[n].value for n in names},
                  nodes=[n.name for n in self.cluster.brokers])

    def start(self, rng: random.Random) -> Op:
        topics = self.options.topics
        if topics is None:
            topics = sorted({t for t, _ in user_partitions(self.cluster)})
        return self.set(self.target_value(), topics)

    def restore(self) -> Op:
        names = sorted(self.before)
        write(self.cluster, {n: (s.value if s.overridden else None) for n, s in self.before.items()})
        after = read(self.cluster, names)
        self.before = {}
        return op("heal", self.name, key=KEY, restored={n: after[n].value for n in names})

    def stop(self) -> Op:
        return self.restore()

    def heal_all(self) -> list[Op]:
        return [self.restore()] if self.before else []


register_fault("unclean-toggle", lambda options: UncleanToggle(UncleanOptions.model_validate(options)))
