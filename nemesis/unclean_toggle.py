"""Configuration fault: unclean.leader.election.enable switched at run time, on the topics
and on the brokers, then read back.

Kafka facts (docs/orderers.md, "Facts about Kafka"): in ZooKeeper mode, setting it true on a topic makes the
controller elect an out-of-sync replica for a leaderless partition at once, without a
restart; setting it back to false only affects later elections. A topic's own value wins
over the brokers'; the brokers' value decides for topics without one (new topics too).

The brokers' value is set per broker (ConfigResource BROKER "<id>", a dynamic per-broker
config), not as the cluster-wide dynamic default (BROKER with an empty name, what
`kafka-configs --entity-default` alters): librdkafka refuses a ConfigResource with an empty
name ("Invalid ConfigResource"). Kafka's docs allow a cluster-wide setting to be updated per
broker as well; setting it on every live broker has the same effect on the controller,
whichever broker it is. A broker that is down cannot be altered: the op says which were.

KRaft: the controllers elect, and they read a topic's value, the cluster-wide default and
their own configuration, never a broker's per-node value; so only the topics are switched
(the op's `nodes` is empty), and a partition that is already leaderless when the key turns
true is elected explicitly (Admin electLeaders, UNCLEAN; docs/orderers.md): the op's `elections`
records which election was asked for each such partition and what Kafka answered.
"""
from __future__ import annotations

import random
import time
from dataclasses import dataclass

from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, ConfigSource, ResourceType
from pydantic import BaseModel, ConfigDict, Field

from ground.cluster_view import ClusterView
from clusters.health import admin_client
from ground.op import Op
from nemesis.fault import Fault, op
from nemesis.targets import elect_unclean, leaderless, user_partitions

KEY = "unclean.leader.election.enable"
TIMEOUT = 15.0
# Sources meaning "set on this very resource", as opposed to inherited.
OWN_SOURCES = (ConfigSource.DYNAMIC_TOPIC_CONFIG.value, ConfigSource.DYNAMIC_BROKER_CONFIG.value)


@dataclass(frozen=True)
class Setting:
    """The key on one resource: its effective value, and whether the resource sets it
    itself (a topic config, a per-broker dynamic config) or inherits it."""

    value: bool | None
    overridden: bool


def resource(name: str) -> ConfigResource:
    """A broker by node name ("kafka2" -> BROKER "2"), anything else a topic."""
    if name.startswith("kafka") and name[5:].isdigit():
        return ConfigResource(ResourceType.BROKER, name[5:])
    return ConfigResource(ResourceType.TOPIC, name)


def node_name(res: ConfigResource) -> str:
    return f"kafka{res.name}" if res.restype == ResourceType.BROKER else res.name


def _calls(names: list[str]) -> list[list[str]]:
    # librdkafka sends a BROKER resource to that broker, and takes one of them per call.
    brokers = [n for n in names if resource(n).restype == ResourceType.BROKER]
    topics = [n for n in names if n not in brokers]
    return [[b] for b in brokers] + ([topics] if topics else [])


def read(cluster: ClusterView, names: list[str]) -> dict[str, Setting]:
    """The key as each resource (broker node name or topic) reports it now."""
    admin = admin_client(cluster.bootstrap_servers())
    found: dict[str, Setting] = {}
    for call in _calls(names):
        futures = admin.describe_configs([resource(n) for n in call], request_timeout=TIMEOUT)
        for res, fut in futures.items():
            name = node_name(res)
            entry = fut.result(timeout=TIMEOUT + 1).get(KEY)
            found[name] = Setting(None, False) if entry is None else \
                Setting(entry.value.lower() == "true", int(entry.source) in OWN_SOURCES)
    return found


def write(cluster: ClusterView, changes: dict[str, bool | None]) -> dict[str, str]:
    """Set the key on each resource, or (None) delete its own value so it inherits again;
    answers the resources that refused, with the error."""
    admin = admin_client(cluster.bootstrap_servers())
    failed: dict[str, str] = {}
    for call in _calls(list(changes)):
        resources = []
        for name in call:
            res, value = resource(name), changes[name]
            if value is None:
                res.add_incremental_config(ConfigEntry(KEY, None, incremental_operation=AlterConfigOpType.DELETE))
            else:
                res.add_incremental_config(ConfigEntry(KEY, str(value).lower(),
                                                       incremental_operation=AlterConfigOpType.SET))
            resources.append(res)
        futures = admin.incremental_alter_configs(resources, request_timeout=TIMEOUT)
        for res, fut in futures.items():
            name = node_name(res)
            try:
                fut.result(timeout=TIMEOUT + 1)
            except Exception as exc:  # noqa: BLE001 - recorded per resource
                failed[name] = f"{exc.__class__.__name__}: {exc}"
    return failed


def read_settled(cluster: ClusterView, wanted: dict[str, Setting], timeout: float = 15.0) -> dict[str, Setting]:
    """Read back until each resource shows the wanted setting (value and whether it is its
    own), or the timeout ends. A broker applies a dynamic change when ZooKeeper's change
    notification reaches it, and until then a describe can already show the new source with
    the old value (or the reverse): only both together say the change has landed."""
    deadline = time.monotonic() + timeout
    while True:
        found = read(cluster, list(wanted))
        if all(found[n] == w for n, w in wanted.items()) or time.monotonic() > deadline:
            return found
        time.sleep(0.5)


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
        kraft = self.cluster.kraft
        brokers = [] if kraft else [n.name for n in self.cluster.brokers if n.state == "running"]
        names = [*brokers, *topics]
        for name, setting in read(self.cluster, names).items():
            self.before.setdefault(name, setting)
        failed = write(self.cluster, {n: value for n in names})
        done = [n for n in names if n not in failed]
        after = read_settled(self.cluster, {n: Setting(value, True) for n in done})
        elections = elect_unclean(self.cluster, leaderless(self.cluster, [t for t in topics if t in done])) \
            if kraft and value else {}
        return op("config", self.name, key=KEY, set=value, nodes=[b for b in brokers if b in done],
                  read_back={n: after[n].value for n in done}, **({"failed": failed} if failed else {}),
                  **({"elections": elections} if elections else {}))

    def start(self, rng: random.Random) -> Op:
        topics = self.options.topics
        if topics is None:
            topics = sorted({t for t, _ in user_partitions(self.cluster)})
        return self.set(self.target_value(), topics)

    def restore(self) -> Op:
        """Put back what each resource had before the first start; one that refuses (a
        broker down) stays to restore at the next heal."""
        wanted = {n: (s.value if s.overridden else None) for n, s in self.before.items()}
        failed = write(self.cluster, wanted)
        done = sorted(n for n in self.before if n not in failed)
        after = read_settled(self.cluster, {n: self.before[n] for n in done})
        self.before = {n: s for n, s in self.before.items() if n in failed}
        return op("heal", self.name, key=KEY, restored={n: after[n].value for n in done},
                  **({"failed": failed} if failed else {}))

    def stop(self) -> Op:
        return self.restore()

    def heal_all(self) -> list[Op]:
        """Also removes per-broker values left by a run that crashed before restoring them:
        nothing but this fault sets the key per broker (the variant sets it statically)."""
        for node in [] if self.cluster.kraft else self.cluster.brokers:
            if node.name in self.before or node.state != "running":
                continue
            try:
                stray = read(self.cluster, [node.name])[node.name].overridden
            except Exception:  # noqa: BLE001 - a broker that cannot answer now keeps its value
                continue
            if stray:  # back to inheriting the variant's static value
                self.before[node.name] = Setting(self.cluster.variant.kafka.unclean_leader_election_enable, False)
        return [self.restore()] if self.before else []
