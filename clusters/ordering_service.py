"""The ordering service of a cluster, behind one set of verbs whichever implementation runs:
Hyperledger Fabric v1.4.12's own `orderer`, or ordeal's Python model of its Kafka consenter.

The cluster creates the OSN nodes through `create_nodes`, starts them with `start` (for
Fabric that includes creating the variant's channels the Fabric way), asks `healthy` whether
a node serves every channel, and hands clients `client_identity()`. Workloads, nemeses and
reports never ask which implementation runs; run.json and the report say it.
"""
from __future__ import annotations

import shutil
import socket
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import docker

from clusters import labels as L
from clusters.errors import ClusterError
from fabric import material, material_volume
from fabric.material import CLIENT_MSP
from clusters.health import osn_healthy
from clusters.images.fabric_build import fabric_tools
from clusters.node import Node
from clusters.node_config import CLUSTER_PORT, OSN_PORT, osn_json
from fabric.client import DeliverFailed, OsnClient, OsnUnreachable
from fabric.config_update import sign_channel_creation
from fabric.identity import Identity, MspIdentity, NamedIdentity
from fabric.tls import ClientTls
from osn.wire.common import common_pb2
from clusters.subnet import KAFKA_OFFSET, OSN_OFFSET, host_ip

if TYPE_CHECKING:
    from clusters.images.build import ImageTags
    from ground.variant import Variant


class Cluster(Protocol):
    """What an ordering service uses of the cluster that holds it (clusters.cluster.Cluster,
    which creates the service: named here so that this module need not import it)."""

    variant: "Variant"
    run: str
    subnet: Any
    client: docker.DockerClient
    cache: Path

    @property
    def osns(self) -> list[Node]: ...

    @property
    def brokers(self) -> list[Node]: ...

    def node(self, name: str) -> Node: ...

    def osn_addresses(self) -> dict[str, str]: ...

    def add_node(self, image: str, name: str, role: str, ip: str, run_labels: dict[str, str],
                 env: dict[str, str], data_dir: str | None, extra_mounts: list[Any] = ...) -> Node: ...

FABRIC_VERSION = "1.4.12"


class OrderingService(Protocol):
    implementation: str
    version: str

    def prepare(self, cluster: Cluster, tags: "ImageTags", run_labels: dict[str, str]) -> list[Any]:
        """Make the network's material before any node exists; return the mounts a broker
        needs of it (the material volume, under orderer.kafka_tls)."""
        ...

    def create_nodes(self, cluster: Cluster, tags: "ImageTags", run_labels: dict[str, str]) -> None: ...

    def start(self, cluster: Cluster, deadline: float) -> None: ...

    def healthy(self, cluster: Cluster, node: Node) -> bool: ...

    def client_identity(self, cluster: Cluster) -> Identity: ...

    def config_admin(self, cluster: Cluster) -> Identity | None:
        """Who signs a channel config update of the Orderer group; None where config updates
        are not served (the model orders no config message)."""
        ...


def _osn_ips(cluster: Cluster) -> list[tuple[str, str]]:

    return [(f"osn{i}", host_ip(cluster.subnet, OSN_OFFSET + i)) for i in range(1, cluster.variant.cluster.osns + 1)]


def _broker_ips(cluster: Cluster) -> list[str]:

    return [host_ip(cluster.subnet, KAFKA_OFFSET + i) for i in range(1, cluster.variant.cluster.brokers + 1)]


def _broker_sans(cluster: Cluster) -> dict[str, list[str]] | None:
    """Broker name -> the address its TLS certificate must name, under orderer.kafka_tls."""
    if not cluster.variant.orderer.kafka_tls:
        return None
    return {f"kafka{i}": [ip] for i, ip in enumerate(_broker_ips(cluster), start=1)}


def _material_mounts(volume: str | None) -> list[Any]:
    return [] if volume is None else [docker.types.Mount(target=material_volume.MOUNT, source=volume,
                                                         type="volume", read_only=True)]


def _broker_mounts(cluster: Cluster, volume: str | None) -> list[Any]:
    return _material_mounts(volume) if cluster.variant.orderer.kafka_tls else []


class ModelOrderers:
    """ordeal's model (osn/): each OSN creates its channels' topics itself and
    reports on GET /healthz once every chain has started. Under the variant's `tls` it serves
    TLS from cryptogen's material, as Fabric's orderers do, in a volume mounted the same way."""

    implementation, version = "model", "ordeal"

    def __init__(self) -> None:
        self._identity: Identity | None = None
        self._volume: str | None = None

    def prepare(self, cluster: Cluster, tags: "ImageTags", run_labels: dict[str, str]) -> list[Any]:
        """cryptogen's material, only where TLS (to the clients or to Kafka) needs it."""
        if tags.osn is None:
            raise ClusterError("the variant asks for OSNs but the OSN image was not built")
        v = cluster.variant
        if v.orderer.tls != "off" or v.orderer.kafka_tls:
            osns = _osn_ips(cluster)
            with tempfile.TemporaryDirectory(prefix="ordeal-model-") as tmp:
                made = material.generate_crypto([name for name, _ in osns], fabric_tools(cluster.cache),
                                                Path(tmp) / "material", sans={name: [ip] for name, ip in osns},
                                                broker_sans=_broker_sans(cluster))
                if v.orderer.tls != "off":
                    self._identity = NamedIdentity("client", tls=client_tls(made, "user", v.orderer.tls))
                self._volume = material_volume.store(cluster.client, tags.osn, cluster.run, run_labels, made.root)
        return _broker_mounts(cluster, self._volume)

    def create_nodes(self, cluster: Cluster, tags: "ImageTags", run_labels: dict[str, str]) -> None:
        v = cluster.variant
        brokers = _broker_ips(cluster)
        for name, ip in _osn_ips(cluster):
            cluster.add_node(tags.osn, name, "osn", ip, run_labels,
                             {"ORDEAL_CONFIG": osn_json(v, name, brokers)}, data_dir="/var/lib/ordeal",
                             extra_mounts=_material_mounts(self._volume))

    def start(self, cluster: Cluster, deadline: float) -> None:
        for node in cluster.osns:
            node.start()

    def healthy(self, cluster: Cluster, node: Node) -> bool:
        return osn_healthy(node.ip)

    def client_identity(self, cluster: Cluster) -> Identity:
        """A name (the model checks writers by name), with the client's TLS when the variant has it."""
        if self._identity is None:
            tls = cluster.variant.orderer.tls
            self._identity = NamedIdentity("client", tls=None if tls == "off" else read_material(
                cluster, ("clients", "tlsca"), lambda made: client_tls(made, "user", tls)))
        return self._identity

    def config_admin(self, cluster: Cluster) -> Identity | None:
        return None


def _port_open(ip: str, port: int, timeout: float = 1.0) -> bool:
    try:
        with socket.create_connection((ip, port), timeout=timeout):
            return True
    except OSError:
        return False


class FabricOrderers:
    """Fabric v1.4.12's orderer: crypto material and genesis block made by cryptogen and
    configtxgen at boot (TLS and consensus as the variant says), each channel created by a
    CONFIG_UPDATE signed by the client org's admin, healthy when every channel delivers its
    block 0 (never by probing /healthz before Kafka answers: that crashes 1.4.12, see
    docs/findings.md)."""

    implementation, version = "fabric-1.4.12", FABRIC_VERSION

    def __init__(self) -> None:
        self._identities: dict[str, Identity] = {}
        self._channel_txs: dict[str, bytes] = {}
        self._volume: str | None = None
        self._image: str | None = None

    def image(self, cluster: Cluster, tags: "ImageTags") -> str:
        """The orderer image: the bootstrap's 1.4.12 build (patched ones built on first use)."""
        patches = tuple(cluster.variant.orderer.patches)
        if not patches:
            if tags.fabric_orderer is None:
                raise ClusterError("the variant asks for Fabric's orderer but its image was not built")
            return tags.fabric_orderer
        raise ClusterError("orderer.patches are applied to fabric-2.5.16's source only (1.4.12 comes built "
                           "from the Go module proxy)")

    def bootstrap_env(self) -> dict[str, str]:
        """How the orderer finds its genesis block: 1.4's General.GenesisMethod."""
        return {"ORDERER_GENERAL_GENESISMETHOD": "file",
                "ORDERER_GENERAL_GENESISFILE": f"{material_volume.MOUNT}/genesis.block"}

    # -- boot -----------------------------------------------------------------
    def prepare(self, cluster: Cluster, tags: "ImageTags", run_labels: dict[str, str]) -> list[Any]:
        """cryptogen's and configtxgen's material (the brokers' TLS too, under kafka_tls)."""
        self._image = self.image(cluster, tags)
        v = cluster.variant
        osns = _osn_ips(cluster)
        with tempfile.TemporaryDirectory(prefix="ordeal-fabric-") as tmp:
            made = material.generate(v, [name for name, _ in osns],
                                     [f"{ip}:{CLUSTER_PORT}" for ip in _broker_ips(cluster)],
                                     fabric_tools(cluster.cache), Path(tmp) / "material",
                                     sans={name: [ip] for name, ip in osns}, orderer_type=v.orderer.consensus,
                                     raft_endpoints={name: f"{ip}:{OSN_PORT}" for name, ip in osns},
                                     broker_sans=_broker_sans(cluster))
            self._keep(made.root, v.orderer.tls)
            self._volume = material_volume.store(cluster.client, self._image, cluster.run, run_labels,
                                                 made.root)
        return _broker_mounts(cluster, self._volume)

    def create_nodes(self, cluster: Cluster, tags: "ImageTags", run_labels: dict[str, str]) -> None:
        v = cluster.variant
        for name, ip in _osn_ips(cluster):
            env = {
                "FABRIC_LOGGING_SPEC": "info",
                # Fabric's default format colours each line; logs and crash evidence are read as text.
                "FABRIC_LOGGING_FORMAT": "%{time:2006-01-02 15:04:05.000 MST} [%{module}] %{shortfunc} -> "
                                         "%{level:.4s} %{id:03x} %{message}",
                "ORDERER_GENERAL_LISTENADDRESS": "0.0.0.0",
                "ORDERER_GENERAL_LISTENPORT": str(OSN_PORT),
                **self.bootstrap_env(),
                "ORDERER_GENERAL_LOCALMSPID": material.ORDERER_MSP,
                "ORDERER_GENERAL_LOCALMSPDIR": f"{material_volume.MOUNT}/orderers/{name}/msp",
                **fabric_tls_env(v.orderer.tls, name),
                # Under mutual TLS on Kafka too: an orderer restarted after the migration to Raft
                # (clusters/migration.py) joins its Raft clusters with these; a Kafka-based
                # orderer does not read them.
                **(fabric_raft_env(name) if v.orderer.consensus == "etcdraft" or v.orderer.tls == "mutual" else {}),
                **(fabric_kafka_tls_env(name) if v.orderer.kafka_tls else {}),
                "ORDERER_FILELEDGER_LOCATION": "/var/hyperledger/production/orderer",
                # sarama 1.19 speaks protocol versions Kafka 3.9 still accepts at 1.0.0.
                "ORDERER_KAFKA_VERSION": "1.0.0",
                "ORDERER_KAFKA_TOPIC_REPLICATIONFACTOR": str(v.kafka.replication_factor),
                # Fabric's defaults retry every 5 s for 10 min, then every 5 min: a chain cut off
                # from Kafka by a fault comes back within a run only with a short interval.
                "ORDERER_KAFKA_RETRY_SHORTINTERVAL": "1s",
                "ORDERER_KAFKA_RETRY_SHORTTOTAL": "30m",
                "ORDERER_KAFKA_RETRY_LONGINTERVAL": "5s",
                "ORDERER_KAFKA_RETRY_LONGTOTAL": "12h",
                "ORDERER_OPERATIONS_LISTENADDRESS": "0.0.0.0:8443",
                "ORDERER_METRICS_PROVIDER": "disabled",
            }
            cluster.add_node(self._image or tags.fabric_orderer, name, "osn", ip, run_labels, env,
                         data_dir="/var/hyperledger/production",
                         extra_mounts=_material_mounts(self._volume))

    def start(self, cluster: Cluster, deadline: float) -> None:

        for node in cluster.osns:
            node.start()
        for node in cluster.osns:
            while not _port_open(node.ip, OSN_PORT):
                self._check_alive(cluster, node, deadline, "did not open its Broadcast/Deliver port")
                time.sleep(0.25)
        client = OsnClient(self.client_identity(cluster))
        try:
            for channel in cluster.variant.orderer.channels:
                self._create_channel(cluster, client, channel, deadline)
        finally:
            client.close()

    def _check_alive(self, cluster: Cluster, node: Node, deadline: float, failure: str) -> None:

        if node.state in ("exited", "dead"):
            raise ClusterError(f"orderer {node.name} exited; see its log")
        if time.monotonic() > deadline:
            raise ClusterError(f"orderer {node.name} {failure}")

    def _create_channel(self, cluster: Cluster, client: Any, channel: str, deadline: float) -> None:
        """Broadcast the admin-signed channel creation to the orderers in turn until one
        answers SUCCESS (or the channel already delivers), then wait until every orderer
        delivers the channel's block 0."""

        tx = common_pb2.Envelope.FromString(self._channel_tx(cluster, channel))
        addresses = list(cluster.osn_addresses().items())
        attempt = 0
        created = False
        while not created:
            name, address = addresses[attempt % len(addresses)]
            attempt += 1
            try:
                status = client.broadcast_envelope(address, sign_channel_creation(tx, self._admin(cluster)), timeout=10)
                created = status == "SUCCESS"
            except OsnUnreachable:
                pass
            if not created:
                created = self._delivers_block0(client, address, channel)
            if not created:
                self._check_alive(cluster, cluster.node(name), deadline, f"did not create channel {channel}")
                time.sleep(1.0)
        for node in cluster.osns:
            address = cluster.osn_addresses()[node.name]
            while not self._delivers_block0(client, address, channel):
                self._check_alive(cluster, node, deadline, f"did not deliver block 0 of channel {channel}")
                time.sleep(0.5)

    @staticmethod
    def _delivers_block0(client: Any, address: str, channel: str, timeout: float = 3.0) -> bool:

        try:
            return bool(client.deliver(address, channel, 0, 0, timeout=timeout, best_effort=False))
        except (DeliverFailed, OsnUnreachable):
            return False

    def healthy(self, cluster: Cluster, node: Node) -> bool:
        """Every channel's block 0 is delivered (strictly: an orderer whose chain has not
        reached Kafka answers SERVICE_UNAVAILABLE)."""

        address = f"{node.ip}:{OSN_PORT}"
        if not _port_open(node.ip, OSN_PORT):
            return False
        client = OsnClient(self.client_identity(cluster))
        try:
            return all(self._delivers_block0(client, address, ch, timeout=2.0) for ch in cluster.variant.orderer.channels)
        finally:
            client.close()

    # -- what the client needs of the material ---------------------------------
    def _keep(self, root: Path, tls: str) -> None:
        """Hold the client identities (with their TLS, per the variant's `tls`) and the
        channel-creation txs of the material at `root`."""

        made = material.Material(root)
        for who in ("admin", "user"):
            self._identities[who] = MspIdentity.load(CLIENT_MSP, made.client_msp(who), client_tls(made, who, tls))
        self._identities["orderer-admin"] = MspIdentity.load(material.ORDERER_MSP, made.orderer_admin_msp(),
                                                             _tls_of(made, made.orderer_admin_tls(), tls))
        self._channel_txs = {p.stem: p.read_bytes() for p in (root / "channels").glob("*.tx")}

    def _ensure_material(self, cluster: Cluster) -> None:
        """A cluster booted by another process: read its material back from the run's volume, once."""

        if self._identities:
            return
        read_material(cluster, ("clients", "channels", "tlsca", "admins"),
                   lambda made: self._keep(made.root, cluster.variant.orderer.tls))

    def client_identity(self, cluster: Cluster) -> Identity:
        """The client org's user: a member, so it may write and read every channel."""
        self._ensure_material(cluster)
        return self._identities["user"]

    def config_admin(self, cluster: Cluster) -> Identity | None:
        """The orderer org's admin: the Orderer group's values (BatchSize, BatchTimeout) have
        mod_policy Admins, MAJORITY of the orderer orgs' admins."""
        self._ensure_material(cluster)
        return self._identities["orderer-admin"]

    def _admin(self, cluster: Cluster) -> Identity:
        self._ensure_material(cluster)
        return self._identities["admin"]

    def _channel_tx(self, cluster: Cluster, channel: str) -> bytes:
        self._ensure_material(cluster)
        return self._channel_txs[channel]


T = TypeVar("T")


def read_material(cluster: Cluster, parts: tuple[str, ...], use: Callable[[material.Material], T]) -> T:
    """`use` of the run's material volume's `parts`, copied out: for a process that attaches to
    a cluster another one booted, and for a test that checks what the nodes were given."""
    image = cluster.osns[0].container.attrs["Config"]["Image"]
    tmp = Path(tempfile.mkdtemp(prefix="ordeal-material-"))
    try:
        for part in parts:
            material_volume.fetch(cluster.client, image, cluster.run, _scratch_labels(cluster), part, tmp)
        return use(material.Material(tmp))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def client_tls(made: material.Material, who: str, tls: str) -> ClientTls | None:
    """What client `who` ("admin" or "user" of the client org) connects with under the
    variant's `tls`: it trusts the orderers' TLS CA, and under mutual TLS presents its own key
    pair."""
    return _tls_of(made, made.client_tls(who), tls)


def _tls_of(made: material.Material, tls_dir: Path, tls: str) -> ClientTls | None:
    if tls == "off":
        return None
    own = ClientTls.load(tls_dir, mutual=tls == "mutual")
    return ClientTls(made.tls_ca("orderer").read_bytes(), own.cert_pem, own.key_pem)


def fabric_tls_env(tls: str, name: str, root: str = material_volume.MOUNT) -> dict[str, str]:
    """Fabric's General.TLS for orderer `name`, from the material at `root` (its volume)."""
    if tls == "off":
        return {"ORDERER_GENERAL_TLS_ENABLED": "false"}
    made = material.Material(Path(root))
    own = made.orderer_tls(name)
    return {
        "ORDERER_GENERAL_TLS_ENABLED": "true",
        "ORDERER_GENERAL_TLS_PRIVATEKEY": f"{own}/server.key",
        "ORDERER_GENERAL_TLS_CERTIFICATE": f"{own}/server.crt",
        "ORDERER_GENERAL_TLS_ROOTCAS": f"[{own}/ca.crt]",
        "ORDERER_GENERAL_TLS_CLIENTAUTHREQUIRED": str(tls == "mutual").lower(),
        # The orderers' own TLS CA too: under Raft the orderers are each other's clients.
        "ORDERER_GENERAL_TLS_CLIENTROOTCAS": f"[{made.tls_ca('client')},{made.tls_ca('orderer')}]",
    }


def fabric_raft_env(name: str, root: str = material_volume.MOUNT) -> dict[str, str]:
    """What an etcdraft orderer needs besides its TLS: the key pair it dials the other
    consenters with (its TLS one; they talk over the general listener) and the CA it checks
    theirs against. Its WAL and snapshots go under its data directory by default."""
    own = material.Material(Path(root)).orderer_tls(name)
    return {
        "ORDERER_GENERAL_CLUSTER_CLIENTCERTIFICATE": f"{own}/server.crt",
        "ORDERER_GENERAL_CLUSTER_CLIENTPRIVATEKEY": f"{own}/server.key",
        "ORDERER_GENERAL_CLUSTER_ROOTCAS": f"[{own}/ca.crt]",
    }


def fabric_kafka_tls_env(name: str, root: str = material_volume.MOUNT) -> dict[str, str]:
    """Fabric's Kafka.TLS for orderer `name`: it presents its TLS key pair to the brokers and
    checks theirs against the brokers' TLS CA. Fabric reads each from a file named under
    `File` (its viperutil), hence the _FILE variables."""
    made = material.Material(Path(root))
    own = made.orderer_tls(name)
    return {
        "ORDERER_KAFKA_TLS_ENABLED": "true",
        "ORDERER_KAFKA_TLS_PRIVATEKEY_FILE": f"{own}/server.key",
        "ORDERER_KAFKA_TLS_CERTIFICATE_FILE": f"{own}/server.crt",
        "ORDERER_KAFKA_TLS_ROOTCAS_FILE": str(made.tls_ca("kafka")),
    }


def _scratch_labels(cluster: Cluster) -> dict[str, str]:

    # Owned by this process: a scratch container left by a crash is pruned like the run's others.
    return L.run_labels(cluster.run, cluster.variant.name, keep=False)


class Fabric25Orderers(FabricOrderers):
    """Fabric 2.5.16's orderer, Fabric's long-term-support release, which still has the Kafka
    consenter: the same network material (1.4.12's cryptogen and configtxgen write it; 2.5
    reads those capabilities), channels created the same way through the system channel, the
    genesis block given as 2.x names it (General.BootstrapMethod). Built on first use from its
    source, with the variant's patches applied (clusters/images/fabric_build.py)."""

    implementation, version = "fabric-2.5.16", "2.5.16"

    def image(self, cluster: Cluster, tags: "ImageTags") -> str:
        from clusters.images.build import build_fabric_orderer_2_5
        from clusters.images.fabric_build import FabricSourceMissing

        try:
            return build_fabric_orderer_2_5(cluster.client, cluster.cache, tags.base,
                                            tuple(cluster.variant.orderer.patches))
        except FabricSourceMissing as exc:
            raise ClusterError(str(exc)) from None

    def bootstrap_env(self) -> dict[str, str]:
        return {"ORDERER_GENERAL_BOOTSTRAPMETHOD": "file",
                "ORDERER_GENERAL_BOOTSTRAPFILE": f"{material_volume.MOUNT}/genesis.block"}


ORDERING_SERVICES: dict[str, Callable[[], OrderingService]] = {
    FabricOrderers.implementation: FabricOrderers,
    Fabric25Orderers.implementation: Fabric25Orderers,
    ModelOrderers.implementation: ModelOrderers,
}


def ordering_service(implementation: str) -> OrderingService:
    """The service object for a variant's `[orderer] implementation`."""
    return ORDERING_SERVICES[implementation]()
