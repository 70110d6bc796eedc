"""Configuration files of the nodes, rendered from a variant and the cluster's addresses.

Listeners (one port each, so that partitions and proxies can tell the paths apart):
  CLIENT  :9092  for clients on the host; advertised at the node's toxiproxy proxy, so
                 client-to-broker traffic always crosses toxiproxy (link faults).
  BROKER  :9093  inter-broker replication; cut by iptables partitions.
  CLUSTER :9094  clients inside the cluster network (the OSNs); also cut by partitions.
  CONTROLLER :9095  KRaft only: the metadata quorum, on dedicated controller nodes.

In KRaft mode the controllers elect partition leaders and create topics, so they get the
variant's topic defaults (replication factor, min ISR, unclean election) as the brokers do.
Controller i has node.id 100 + i, so that broker kafkaN keeps node.id N.
"""
from __future__ import annotations

from pathlib import Path

from ground.variant import Variant

CLIENT_PORT, BROKER_PORT, CLUSTER_PORT, CONTROLLER_PORT = 9092, 9093, 9094, 9095
CONTROLLER_ID_BASE = 100
ZK_CLIENT_PORT, ZK_PEER_PORT, ZK_ELECTION_PORT = 2181, 2888, 3888
OSN_PORT, OSN_OPERATIONS_PORT = 7050, 8443

# Harness defaults the variants may override: failures are detected within seconds
# (Jepsen's Kafka tests shorten these too), and a 4-broker cluster on 2 cores stays small.
ZOOKEEPER_MODE_DEFAULTS: dict[str, str | int | bool] = {
    "zookeeper.session.timeout.ms": 6000,
    "zookeeper.connection.timeout.ms": 6000,
}
# KRaft's counterpart of the ZooKeeper session: a broker whose heartbeats stop reaching the
# active controller for broker.session.timeout.ms is fenced (default 9 s; 6 s as above).
KRAFT_DEFAULTS: dict[str, str | int | bool] = {
    "broker.session.timeout.ms": 6000,
    "broker.heartbeat.interval.ms": 1000,
}
BROKER_DEFAULTS: dict[str, str | int | bool] = {
    "replica.lag.time.max.ms": 10000,
    "group.initial.rebalance.delay.ms": 0,
    "auto.create.topics.enable": False,
    "num.network.threads": 2,
    "num.io.threads": 2,
    "num.recovery.threads.per.data.dir": 1,
    "num.replica.fetchers": 1,
    "log.segment.bytes": 64 * 1024 * 1024,
    "num.partitions": 1,
    "controlled.shutdown.enable": True,
}

KAFKA_JAVA_OPTS = "-Xms256m -Xmx256m -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true"
CONTROLLER_JAVA_OPTS = KAFKA_JAVA_OPTS.replace("-Xms256m -Xmx256m", "-Xms192m -Xmx192m")
ZOOKEEPER_JAVA_OPTS = "-Xms128m -Xmx128m -XX:+UseSerialGC -XX:+ExitOnOutOfMemoryError"


def osn_json(variant: Variant, name: str, broker_ips: list[str]) -> str:
    """The OSN's config file (osn/settings.py), from the variant."""
    from osn.settings import OsnSettings

    o, k, p = variant.orderer, variant.kafka, variant.producer
    return OsnSettings.model_validate({
        "name": name,
        "listen": f"0.0.0.0:{OSN_PORT}",
        "operations_listen": f"0.0.0.0:{OSN_OPERATIONS_PORT}",
        "kafka_bootstrap_servers": [f"{ip}:{CLUSTER_PORT}" for ip in broker_ips],
        "ledger_dir": "/var/lib/ordeal/ledger",
        "channels": o.channels,
        "batch": {"max_message_count": o.max_message_count, "absolute_max_bytes": o.absolute_max_bytes,
                  "preferred_max_bytes": o.preferred_max_bytes, "batch_timeout_ms": o.batch_timeout_ms},
        "producer": {"acks": p.acks, "retries": p.retries, "enable_idempotence": p.enable_idempotence},
        "topic": {"replication_factor": k.replication_factor, "min_insync_replicas": k.min_insync_replicas},
        "writers": o.writers,
        "tls": _model_tls(o.tls, name),
        "kafka_tls": _model_kafka_tls(name) if o.kafka_tls else None,
    }).model_dump_json()


def _model_tls(tls: str, name: str) -> dict | None:
    """The model's settings.tls: the same files Fabric's orderer reads, where the material
    volume is mounted (paths from fabric.material, their one home)."""
    from fabric.material import Material
    from fabric.material_volume import MOUNT

    if tls == "off":
        return None
    made, mutual = Material(Path(MOUNT)), tls == "mutual"
    return {"certificate": str(made.orderer_tls(name) / "server.crt"),
            "private_key": str(made.orderer_tls(name) / "server.key"),
            "client_auth_required": mutual, "client_root_cas": [str(made.tls_ca("client"))] if mutual else []}


def _model_kafka_tls(name: str) -> dict:
    """The model's settings.kafka_tls: its TLS key pair, and the brokers' TLS CA."""
    from fabric.material import Material
    from fabric.material_volume import MOUNT

    made = Material(Path(MOUNT))
    return {"certificate": str(made.orderer_tls(name) / "server.crt"),
            "private_key": str(made.orderer_tls(name) / "server.key"), "root_ca": str(made.tls_ca("kafka"))}


def _cluster_listener_tls(broker: str) -> dict[str, str | int | bool]:
    """The CLUSTER listener's TLS (the orderers' path to Kafka, orderer.kafka_tls): the broker's
    keystore and the orderers' TLS CA from the run's material volume, mounted where the
    orderers mount it; a client without a certificate from that CA is refused."""
    from fabric.material import KEYSTORE_PASSWORD, Material
    from fabric.material_volume import MOUNT

    made, prefix = Material(Path(MOUNT)), "listener.name.cluster."
    return {
        f"{prefix}ssl.keystore.type": "PKCS12",
        f"{prefix}ssl.keystore.location": str(made.broker_keystore(broker)),
        f"{prefix}ssl.keystore.password": KEYSTORE_PASSWORD,
        f"{prefix}ssl.key.password": KEYSTORE_PASSWORD,
        f"{prefix}ssl.truststore.type": "PEM",
        f"{prefix}ssl.truststore.location": str(made.tls_ca("orderer")),
        f"{prefix}ssl.client.auth": "required",
    }


def _render(props: dict[str, str | int | bool]) -> str:
    def fmt(v: str | int | bool) -> str:
        return str(v).lower() if isinstance(v, bool) else str(v)

    return "\n".join(f"{k}={fmt(v)}" for k, v in props.items())


def zoo_cfg(zookeeper_ips: list[str]) -> str:
    props: dict[str, str | int | bool] = {
        "tickTime": 1000,
        "initLimit": 10,
        "syncLimit": 5,
        "dataDir": "/var/lib/zookeeper",
        "clientPort": ZK_CLIENT_PORT,
        "maxClientCnxns": 0,
        "4lw.commands.whitelist": "srvr,ruok,mntr",
        "autopurge.purgeInterval": 0,
    }
    for i, ip in enumerate(zookeeper_ips, start=1):
        props[f"server.{i}"] = f"{ip}:{ZK_PEER_PORT}:{ZK_ELECTION_PORT}"
    return _render(props)


def controller_node_id(index: int) -> int:
    return CONTROLLER_ID_BASE + index


def quorum_voters(controller_ips: list[str]) -> str:
    """controller.quorum.voters: a static quorum (id@host:port), which every 3.3+ and 4.x
    release accepts and which needs no voter set at format time."""
    return ",".join(f"{controller_node_id(i)}@{ip}:{CONTROLLER_PORT}" for i, ip in enumerate(controller_ips, start=1))


def _topic_defaults(variant: Variant) -> dict[str, str | int | bool]:
    """What whoever creates topics and elects leaders must know (brokers; in KRaft the
    controllers too)."""
    k = variant.kafka
    internal_rf = min(3, variant.cluster.brokers)
    return {
        "default.replication.factor": k.replication_factor,
        "min.insync.replicas": k.min_insync_replicas,
        "unclean.leader.election.enable": k.unclean_leader_election_enable,
        "message.max.bytes": k.message_max_bytes,
        "log.retention.ms": k.log_retention_ms,
        "offsets.topic.replication.factor": internal_rf,
        "transaction.state.log.replication.factor": internal_rf,
        "transaction.state.log.min.isr": min(k.min_insync_replicas, internal_rf),
    }


def server_properties(variant: Variant, broker_id: int, ip: str, client_advertised: str,
                      metadata_ips: list[str]) -> str:
    """A broker's server.properties; `metadata_ips` are the ZooKeeper nodes' or (KRaft) the
    controllers' addresses."""
    k = variant.kafka
    kraft = k.mode == "kraft"
    listeners = {"CLIENT": CLIENT_PORT, "BROKER": BROKER_PORT, "CLUSTER": CLUSTER_PORT}
    tls = variant.orderer.kafka_tls and variant.cluster.osns > 0
    protocols = ",".join(f"{name}:{'SSL' if tls and name == 'CLUSTER' else 'PLAINTEXT'}"
                         for name in [*listeners, *(["CONTROLLER"] if kraft else [])])
    metadata: dict[str, str | int | bool] = (
        {"process.roles": "broker", "node.id": broker_id, "controller.quorum.voters": quorum_voters(metadata_ips),
         "controller.listener.names": "CONTROLLER", **KRAFT_DEFAULTS} if kraft else
        {"broker.id": broker_id, "zookeeper.connect": ",".join(f"{z}:{ZK_CLIENT_PORT}" for z in metadata_ips),
         **ZOOKEEPER_MODE_DEFAULTS})
    props: dict[str, str | int | bool] = {
        **metadata,
        "listeners": ",".join(f"{name}://0.0.0.0:{port}" for name, port in listeners.items()),
        "advertised.listeners": f"CLIENT://{client_advertised},BROKER://{ip}:{BROKER_PORT},CLUSTER://{ip}:{CLUSTER_PORT}",
        "listener.security.protocol.map": protocols,
        "inter.broker.listener.name": "BROKER",
        "log.dirs": "/var/lib/kafka/data",
        **_topic_defaults(variant),
        "replica.fetch.max.bytes": k.replica_fetch_max_bytes,
        **(_cluster_listener_tls(f"kafka{broker_id}") if tls else {}),
        **BROKER_DEFAULTS,
        **k.overrides,
    }
    return _render(props)


def controller_properties(variant: Variant, index: int, controller_ips: list[str]) -> str:
    """A KRaft controller's server.properties (process.roles=controller)."""
    props: dict[str, str | int | bool] = {
        "process.roles": "controller",
        "node.id": controller_node_id(index),
        "controller.quorum.voters": quorum_voters(controller_ips),
        "controller.listener.names": "CONTROLLER",
        "listeners": f"CONTROLLER://0.0.0.0:{CONTROLLER_PORT}",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT",
        "log.dirs": "/var/lib/kafka/data",
        **_topic_defaults(variant),
        **KRAFT_DEFAULTS,
        "num.network.threads": 2,
        "num.io.threads": 2,
        **variant.kafka.overrides,
    }
    return _render(props)
