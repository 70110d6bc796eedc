"""The migration of a running Fabric v1.4 network from Kafka-based to Raft-based ordering,
step by step as Fabric's guide ("Migrating from Kafka to Raft", 1.4.2 and later) describes it:

1. maintenance-on: every channel, the system channel first, to ConsensusType.State
   STATE_MAINTENANCE (normal txs and the client org's Delivers are refused from then on);
2. stop: the orderers, then (after Kafka had time to flush) the brokers and the metadata
   quorum; the guide's backup is taken here (ordeal keeps the volumes, so its "backup" is
   the stop itself: nothing is copied); then Kafka is started again, then the orderers;
3. switch-type: every channel to ConsensusType etcdraft with one consenter set (each orderer
   at its address with its TLS certificate), still in maintenance, the last config update
   of each channel before the restart;
4. restart-as-raft: the orderers and Kafka stopped, the orderers alone started; each must log
   a Raft leader for every channel;
5. maintenance-off: every channel back to STATE_NORMAL, the system channel first.

Each config update is sent to the same orderer (the guide's advice), signed and submitted by
the orderer org's admin, and waited for on every orderer (read as that admin: in maintenance
only the orderer org may read). Why a module of its own: the same steps serve a fault in a
scenario (nemesis/migration.py, where faults happen during them) and a test.

`kafka_stop="with-orderers"` stops the brokers at once with the orderers, which the guide
forbids (the orderers' ledgers may then be ahead of Kafka).
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from ground.cluster_view import ClusterView, NodeView
from fabric.material import SYSTEM_CHANNEL
from clusters.node_config import OSN_PORT
from fabric.client import DeliverFailed, OsnClient, OsnUnreachable, block_summary
from fabric.config_update import config_update_envelope, consensus_of, consensus_update
from fabric.envelopes import label_nonce
from osn.wire.common import configtx_pb2
from osn.wire.orderer import configuration_pb2
from osn.wire.orderer.etcdraft import configuration_pb2 as etcdraft_pb2
from fabric.raft_leaders import first_leaders

MAINTENANCE = configuration_pb2.ConsensusType.STATE_MAINTENANCE
NORMAL = configuration_pb2.ConsensusType.STATE_NORMAL
# Seconds Kafka is given to flush after the orderers stopped (the guide's "about 30 seconds";
# ordeal's brokers hold little, and a stop is a clean shutdown that flushes anyway).
FLUSH_WAIT = 10.0
STEP_TIMEOUT = 180.0
# What `between` is called with inside restart-as-raft, once the orderers were started as Raft
# and before any has reported a leader (the other calls name the step about to begin).
STARTED_AS_RAFT = "started-as-raft"


class MigrationFailed(RuntimeError):
    """A step did not complete; str() names the step and what was seen."""


@dataclass
class Migration:
    cluster: ClusterView
    record: Callable[[dict], Any]
    kafka_stop: Literal["after-orderers", "with-orderers"] = "after-orderers"
    # Called before each step with its name, and with STARTED_AS_RAFT during restart-as-raft,
    # for faults during the migration.
    between: Callable[[str], None] = lambda step: None
    token: str = field(default_factory=lambda: format(int(time.time() * 1000) % 10**8, "08d"))

    def __post_init__(self) -> None:
        self.admin = self.cluster.config_admin()
        if self.admin is None:
            raise MigrationFailed("this ordering service takes no config updates (the model)")
        self.channels = [SYSTEM_CHANNEL, *self.cluster.variant.orderer.channels]
        self.via = self.cluster.osns[0]
        self._n = 0

    # -- the whole procedure --------------------------------------------------------
    def run(self) -> None:
        self._step("maintenance-on", lambda: self._update_all(state=MAINTENANCE))
        self._step("refused-in-maintenance", self._probe_refusal)
        self._step("stop", self._stop_and_restart_kafka_then_orderers)
        self._step("switch-type", lambda: self._update_all(consensus_type="etcdraft", metadata=self._raft_metadata()))
        self._step("restart-as-raft", self._restart_as_raft)
        self._step("maintenance-off", lambda: self._update_all(state=NORMAL))

    def _step(self, name: str, action: Callable[[], Any]) -> None:
        self.between(name)
        began = time.monotonic()
        try:
            try:
                said = action() or {}
            except MigrationFailed:
                raise
            except Exception as exc:  # noqa: BLE001 - a node verb or a client that failed ends the step, said why
                raise MigrationFailed(f"{exc.__class__.__name__}: {exc}".splitlines()[0]) from exc
        except MigrationFailed as exc:
            self.record({"f": "migration", "value": {"fault": "kafka-to-raft", "step": name,
                                                     "seconds": round(time.monotonic() - began, 1)},
                         "error": str(exc)})
            raise MigrationFailed(f"{name}: {exc}") from None
        self.record({"f": "migration", "value": {"fault": "kafka-to-raft", "step": name,
                                                 "seconds": round(time.monotonic() - began, 1), **said}})

    # -- config updates ------------------------------------------------------------
    def _client(self) -> OsnClient:
        return OsnClient(self.admin)

    def _address(self, node: NodeView) -> str:
        return self.cluster.osn_addresses()[node.name]

    def _config(self, client: OsnClient, channel: str) -> configtx_pb2.Config:
        return client.channel_config(self._address(self.via), channel, best_effort=False)

    def _update_all(self, **change: Any) -> dict:
        client = self._client()
        try:
            labels = {}
            for channel in self.channels:
                labels[channel] = self._update(client, channel, **change)
            for channel, label in labels.items():
                self._wait_everywhere(client, channel, label)
            return {"channels": list(labels), "config": {k: (v if isinstance(v, (int, str)) else "set")
                                                         for k, v in change.items()}}
        finally:
            client.close()

    def _update(self, client: OsnClient, channel: str, state: int | None = None, consensus_type: str | None = None,
                metadata: bytes | None = None) -> str:
        """One config update of `channel`'s ConsensusType, sent to `via` until it answers
        SUCCESS (bounded); its label."""
        self._n += 1
        label = f"migrate-{self.token}-{self._n}"
        deadline = time.monotonic() + STEP_TIMEOUT
        last = "no attempt"
        while time.monotonic() < deadline:
            try:
                update, _ = consensus_update(channel, self._config(client, channel), state=state,
                                             consensus_type=consensus_type, metadata=metadata)
                envelope = config_update_envelope(channel, update, [self.admin], self.admin, label_nonce(label))
                status = client.broadcast_envelope(self._address(self.via), envelope, timeout=15)
                if status == "SUCCESS":
                    return label
                last = f"{status} {status.info}".strip()
                if status == "BAD_REQUEST":  # refused for what it is: trying again changes nothing
                    break
            except (OsnUnreachable, DeliverFailed) as exc:
                last = str(exc)
            time.sleep(1.0)
        raise MigrationFailed(f"channel {channel}: config update not taken by {self.via.name}: {last}")

    def _wait_everywhere(self, client: OsnClient, channel: str, label: str) -> None:
        """Until every orderer's last config block of `channel` is the one holding `label`
        (bounded)."""
        deadline = time.monotonic() + STEP_TIMEOUT
        for node in self.cluster.osns:
            while True:
                try:
                    if self._holds(client, node, channel, label):
                        break
                except (OsnUnreachable, DeliverFailed):
                    pass
                if time.monotonic() > deadline:
                    raise MigrationFailed(f"{node.name} never delivered the config block {label} of {channel}")
                time.sleep(0.5)

    def _holds(self, client: OsnClient, node: NodeView, channel: str, label: str) -> bool:
        return label in block_summary(client.config_block(self._address(node), channel))["txs"]

    def _raft_metadata(self) -> bytes:
        """One consenter set for every channel: each orderer at its address, with its TLS
        certificate for both directions (cryptogen makes it good for both)."""
        from clusters.ordering_service import read_material

        names = [n.name for n in self.cluster.osns]
        certs = read_material(self.cluster, ("orderers",),
                              lambda made: {n: (made.orderer_tls(n) / "server.crt").read_bytes() for n in names})
        consenters = [etcdraft_pb2.Consenter(host=n.ip, port=OSN_PORT, client_tls_cert=certs[n.name],
                                             server_tls_cert=certs[n.name]) for n in self.cluster.osns]
        options = etcdraft_pb2.Options(tick_interval="500ms", election_tick=10, heartbeat_tick=1,
                                       max_inflight_blocks=5, snapshot_interval_size=20 * 1024 * 1024)
        return etcdraft_pb2.ConfigMetadata(consenters=consenters, options=options).SerializeToString()

    # -- the probe of maintenance mode ------------------------------------------------
    def _probe_refusal(self) -> dict:
        """A normal tx from the client org's user, and its Deliver, must both be refused now."""
        user = OsnClient(self.cluster.client_identity())
        channel = self.cluster.variant.orderer.channels[0]
        try:
            status = user.broadcast(self._address(self.via), channel, f"maintenance-probe-{self.token}", timeout=10)
            try:
                user.deliver(self._address(self.via), channel, 0, 0, timeout=10)
                read = "SUCCESS"
            except DeliverFailed as exc:
                read = exc.status
        except OsnUnreachable as exc:
            raise MigrationFailed(f"the probe found {self.via.name} unreachable: {exc}") from None
        finally:
            user.close()
        if status == "SUCCESS" or read == "SUCCESS":
            raise MigrationFailed(f"maintenance mode not enforced: a normal tx answered {status}, "
                                  f"a client Deliver {read}")
        return {"broadcast": str(status), "deliver": read}

    # -- stops and starts ------------------------------------------------------------
    def _kafka_nodes(self) -> list[NodeView]:
        return [*self.cluster.brokers, *self.cluster.zookeepers, *self.cluster.controllers]

    def _stop_and_restart_kafka_then_orderers(self) -> dict:
        if self.kafka_stop == "with-orderers":
            for node in [*self.cluster.osns, *self.cluster.brokers]:
                node.kill()  # at once: nothing flushed after the orderers' last write
        else:
            for node in self.cluster.osns:
                node.stop()
            time.sleep(FLUSH_WAIT)  # the guide's pause for Kafka to flush, bounded
            for node in self.cluster.brokers:
                node.stop()
        for node in [*self.cluster.zookeepers, *self.cluster.controllers]:
            node.stop()
        for node in [*self.cluster.zookeepers, *self.cluster.controllers, *self.cluster.brokers]:
            node.start()
        self._wait_kafka()
        for node in self.cluster.osns:
            node.start()
        self._wait_serving_admin()
        return {"kafka_stop": self.kafka_stop, "backup": "volumes kept, nothing copied"}

    def _wait_kafka(self) -> None:
        """The metadata quorum has a leader and every broker is registered. Not
        Cluster.wait_healthy: it takes the orderers this migration stopped for crashed ones."""
        from clusters.health import ensemble_has_leader, kafka_ready

        deadline = time.monotonic() + STEP_TIMEOUT
        while True:
            quorum = (self.cluster.active_controller() is not None if self.cluster.kraft
                      else ensemble_has_leader([z.ip for z in self.cluster.zookeepers]))
            if quorum and kafka_ready(self.cluster.bootstrap_servers(), len(self.cluster.brokers)):
                return
            if time.monotonic() > deadline:
                raise MigrationFailed(f"Kafka did not come back within {STEP_TIMEOUT:.0f} s of its restart")
            time.sleep(1.0)

    def _wait_serving_admin(self) -> None:
        """Every orderer delivers block 0 of every channel to the orderer admin, strictly."""
        client = self._client()
        deadline = time.monotonic() + STEP_TIMEOUT
        try:
            for node in self.cluster.osns:
                for channel in self.channels:
                    while True:
                        try:
                            if client.deliver(self._address(node), channel, 0, 0, timeout=5, best_effort=False):
                                break
                        except (OsnUnreachable, DeliverFailed):
                            pass
                        if node.state in ("exited", "dead"):
                            raise MigrationFailed(f"{node.name} exited after its restart; see its log")
                        if time.monotonic() > deadline:
                            raise MigrationFailed(f"{node.name} does not serve {channel} after its restart")
                        time.sleep(0.5)
        finally:
            client.close()

    def _restart_as_raft(self) -> dict:
        for node in self.cluster.osns:
            node.stop()
        for node in self._kafka_nodes():
            node.stop()
        since = int(time.time()) - 1
        for node in self.cluster.osns:
            node.start()
        self.between(STARTED_AS_RAFT)  # a fault may meet the orderers coming up as Raft
        leaders = self._wait_raft_leaders(since)
        return {"leaders": leaders, "kafka": "stopped"}

    def _wait_raft_leaders(self, since: int) -> dict[str, str]:
        """Each orderer logs "Raft leader changed: 0 -> N channel=C" for every channel (the
        guide's check); channel -> the first leader seen."""
        deadline = time.monotonic() + STEP_TIMEOUT
        leaders: dict[str, str] = {}
        waiting = {(n.name, c) for n in self.cluster.osns for c in self.channels}
        while waiting:
            for node in self.cluster.osns:
                seen = first_leaders(node.container.logs(since=since).decode(errors="replace"))
                for channel in self.channels:
                    if channel in seen:
                        leaders.setdefault(channel, str(seen[channel]))
                        waiting.discard((node.name, channel))
                if node.state in ("exited", "dead"):
                    raise MigrationFailed(f"{node.name} exited after its restart as Raft; see its log")
            if waiting and time.monotonic() > deadline:
                raise MigrationFailed("no Raft leader seen by " + ", ".join(f"{n} on {c}" for n, c in sorted(waiting)))
            if waiting:
                time.sleep(1.0)
        return leaders


def consensus_state(client: OsnClient, address: str, channel: str) -> configuration_pb2.ConsensusType:
    """A channel's ConsensusType as the orderer at `address` has it (its last config block)."""
    return consensus_of(client.channel_config(address, channel))
