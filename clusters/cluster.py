"""The cluster under test: a metadata quorum (a ZooKeeper ensemble, or KRaft's dedicated
controllers), Kafka brokers, OSNs and a toxiproxy, each a labelled container on the run's
own internal Docker network.

Traffic paths: host clients -> toxiproxy (one proxy per broker) -> broker CLIENT listener;
brokers, ZooKeeper, controllers and OSNs talk directly on the internal network, where nemeses cut links
with iptables entered from the host into a node's network namespace.
"""
from __future__ import annotations

import ipaddress
import json
import logging
import time
import uuid
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path

import docker
from confluent_kafka import KafkaException

from clusters import kraft
from clusters import labels as L
from clusters.errors import ClusterError, engine_unreachable
from clusters.health import admin_client, ensemble_has_leader, kafka_gaps, kafka_ready
from clusters.images.build import ImageTags, build_all
from clusters.lease import release as lease_release
from clusters.lease import take as lease_take
from clusters.node import ROLES, Node
from clusters.node_config import (CLIENT_PORT, CLUSTER_PORT, CONTROLLER_ID_BASE, CONTROLLER_JAVA_OPTS, CONTROLLER_PORT,
                                  KAFKA_JAVA_OPTS, OSN_PORT, ZOOKEEPER_JAVA_OPTS, controller_properties,
                                  server_properties, zoo_cfg)
from clusters.ordering_service import OrderingService, ordering_service
from clusters.prune import prune_leftovers, remove_run
from clusters.subnet import CONTROLLER_OFFSET, KAFKA_OFFSET, TOXIPROXY_OFFSET, ZK_OFFSET, candidate_subnets, host_ip
from ground.variant import Variant, parse_variant
from ground.cache import cache_dir
from ground.cluster_view import NodesByRole
from ground.recovery import OSN_NOT_SERVING

log = logging.getLogger("ordeal.cluster")

TOXIPROXY_API_PORT = 8474
PROXY_BASE_PORT = 19090


class Cluster(NodesByRole):
    def __init__(self, client: docker.DockerClient, run: str, variant: Variant,
                 network: docker.models.networks.Network, nodes: list[Node], cache: Path | None = None):
        self.client = client
        self.cache = cache or cache_dir()  # ordeal's cache, as clusters/bootstrap.sh sets it
        self.ordering: OrderingService = ordering_service(variant.orderer.implementation)
        self.leased = False  # attach(lease=True) took this cluster's lease
        self.run = run
        self.variant = variant
        self.network = network
        self.nodes = nodes
        self.subnet = ipaddress.ip_network(network.attrs["IPAM"]["Config"][0]["Subnet"])

    # -- lookup (by role: ground.cluster_view.NodesByRole) ------------------------
    @property
    def kraft(self) -> bool:
        return self.variant.kafka.mode == "kraft"

    @property
    def toxiproxy(self) -> Node:
        return self.by_role("toxiproxy")[0]

    def proxy_address(self, broker: Node) -> str:
        """Where host clients reach `broker`: its toxiproxy proxy."""
        return f"{self.toxiproxy.ip}:{PROXY_BASE_PORT + broker.node_id}"

    def bootstrap_servers(self) -> str:
        """For clients on the host; every connection crosses toxiproxy."""
        return ",".join(self.proxy_address(b) for b in self.brokers)

    def cluster_bootstrap_servers(self) -> str:
        """For clients inside the cluster network (OSNs): the CLUSTER listeners."""
        return ",".join(f"{b.ip}:{CLUSTER_PORT}" for b in self.brokers)

    def toxiproxy_api(self) -> str:
        return f"http://{self.toxiproxy.ip}:{TOXIPROXY_API_PORT}"

    def osn_addresses(self) -> dict[str, str]:
        return {n.name: f"{n.ip}:{OSN_PORT}" for n in self.osns}

    def client_identity(self):  # -> fabric.identity.Identity
        """Whom ordering clients sign as: the client org's user on Fabric's orderer, a plain
        creator name on the model."""
        return self.ordering.client_identity(self)

    def config_admin(self):  # -> fabric.identity.Identity | None
        """Who signs channel config updates (None where the ordering service takes none)."""
        return self.ordering.config_admin(self)

    def osn_healthy(self, node: Node) -> bool:
        """Whether `node` serves every channel, asked the way its implementation allows (Fabric's
        /healthz is never probed: it crashes an orderer whose chain has not reached Kafka)."""
        return self.ordering.healthy(self, node)

    def recovery_gaps(self) -> list[str]:
        """What is not whole again yet ([] when whole): Kafka's brokers and partitions
        (health.kafka_gaps), and OSNs not serving every channel."""
        gaps = kafka_gaps(self.bootstrap_servers(), len(self.brokers))
        return gaps + [f"{n.name} {OSN_NOT_SERVING}" for n in self.osns if not self.osn_healthy(n)]

    def orderer_description(self) -> dict[str, str] | None:
        """Which ordering service implementation and version run (None without OSNs)."""
        if not self.osns:
            return None
        return {"implementation": self.ordering.implementation, "version": self.ordering.version}

    def leader_of(self, topic: str, partition: int = 0) -> Node | None:
        """The broker currently leading `topic`/`partition` as the metadata says; None while
        it has no leader or no broker answers."""
        admin = admin_client(self.bootstrap_servers())
        try:
            meta = admin.list_topics(topic, timeout=10)
        except KafkaException:
            return None
        part = meta.topics[topic].partitions.get(partition)
        if part is None or part.leader < 0:
            return None
        return self.node(f"kafka{part.leader}")

    def controller(self) -> Node | None:
        """The controller: in ZooKeeper mode the controller broker, in KRaft the active
        controller (the metadata quorum's leader); None while there is none (or none can be
        asked)."""
        if self.kraft:
            return self.active_controller()
        admin = admin_client(self.bootstrap_servers())
        try:
            desc = admin.describe_cluster(request_timeout=10).result(timeout=11)
        except (KafkaException, FutureTimeout):
            return None
        return self.node(f"kafka{desc.controller.id}") if desc.controller and desc.controller.id >= 0 else None

    def active_controller(self) -> Node | None:
        """KRaft: the quorum's leader as the controllers answer DescribeQuorum themselves
        (clusters/kraft.py), asked all at once and bounded by kraft.DESCRIBE_TIMEOUT; None
        while they answer and none as leader (an election, a lost quorum).

        Only when no controller answers at all (all paused, killed or cut off) is the leader
        read from their quorum-state files, the one a majority of the voters last wrote down:
        those go stale during a quorum loss, so they are only the fallback."""
        addresses = {n.name: (n.ip, CONTROLLER_PORT) for n in self.controllers}
        try:
            leader = kraft.described_leader(kraft.asked_controllers(addresses))
        except kraft.QuorumUnanswered:
            leader = self._leader_from_quorum_state_files()
        return self._controller_node(leader)

    def _controller_node(self, leader: int | None) -> Node | None:
        """The controller node of KRaft node id `leader` (controller i is CONTROLLER_ID_BASE + i)."""
        if leader is None:
            return None
        try:
            return self.node(f"controller{leader - CONTROLLER_ID_BASE}")
        except KeyError:  # not one of this cluster's controllers
            return None

    def _leader_from_quorum_state_files(self) -> int | None:
        """The fallback when no controller answers DescribeQuorum: the leader a majority of
        the voters' quorum-state files hold (kraft.active_leader)."""
        views = {}
        for node in self.controllers:
            raw = node.read_file(kraft.QUORUM_STATE)
            view = kraft.parse_quorum_state(raw) if raw else None
            if view is not None:
                views[node.name] = view
        return kraft.active_leader(views, len(self.controllers))

    def status(self) -> dict:
        return {
            "run": self.run,
            "variant": self.variant.name,
            "subnet": str(self.subnet),
            "bootstrap_servers": self.bootstrap_servers(),
            "cluster_bootstrap_servers": self.cluster_bootstrap_servers(),
            "toxiproxy_api": self.toxiproxy_api(),
            "osns": self.osn_addresses(),
            "orderer": self.orderer_description(),
            "kafka": {"version": self.variant.kafka.version, "mode": self.variant.kafka.mode},
            "nodes": [n.to_dict() for n in self.nodes],
        }

    # -- lifecycle --------------------------------------------------------------
    @classmethod
    def up(cls, variant: Variant, *, run_label: str | None = None, keep: bool = False,
           cache: Path | None = None, client: docker.DockerClient | None = None,
           timeout: float = 180.0) -> "Cluster":
        """Boot every node of `variant` and wait until healthy. On any failure, whatever was
        made is removed before the error propagates."""
        client = client or docker.from_env(timeout=120)
        prune_leftovers(client)
        cache = cache or cache_dir()
        tags = build_all(cache, client, kafka_versions=[variant.kafka.version])
        run = run_label or f"{variant.name}-{uuid.uuid4().hex[:6]}"
        run_labels = L.run_labels(run, variant.name, keep)
        try:
            network = _create_network(client, run, run_labels, variant)
            cluster = cls(client, run, variant, network, [], cache)
            cluster._create_nodes(tags, run_labels)
            cluster._start(timeout)
        except BaseException:
            remove_run(client, run)
            raise
        return cluster

    @classmethod
    def attach(cls, variant: Variant | str | None = None, *, run: str | None = None,
               client: docker.DockerClient | None = None, lease: bool = False) -> "Cluster | None":
        """A running cluster (kept, or owned by a live process) of that variant or run.

        lease=True (a run that will use it): only a cluster kept idle (`ordeal cluster up`)
        whose lease this process takes (clusters/lease.py); another run's own cluster, or
        a kept one in use, is never returned. Give it back with `release()`."""
        client = client or docker.from_env(timeout=120)
        filters = [f"{L.PROJECT}=ordeal"]
        if run:
            filters.append(f"{L.RUN}={run}")
        if variant is not None:
            filters.append(f"{L.VARIANT}={variant if isinstance(variant, str) else variant.name}")
        for net in client.networks.list(filters={"label": filters}):
            net.reload()
            lbl = net.attrs.get("Labels") or {}
            if not L.owner_alive(lbl):
                continue
            if lease and lbl.get(L.KEEP) != "true":
                continue  # a run's own cluster: it is that run's alone
            parsed = parse_variant(json.loads(lbl[L.VARIANT_JSON]), "recorded with the cluster")
            nodes = [
                Node(name=c.labels[L.NODE], role=c.labels[L.ROLE], ip=c.labels[L.IP], container=c)
                for c in client.containers.list(all=True, filters={"label": [f"{L.RUN}={lbl[L.RUN]}"]})
                if L.NODE in c.labels
            ]
            if not nodes:
                continue
            nodes.sort(key=lambda n: ROLES.index(n.role) * 100 + n.node_id)
            if lease and not lease_take(client, lbl[L.RUN], parsed.name, nodes[0].container.attrs["Config"]["Image"]):
                continue  # another run holds it
            cluster = cls(client, lbl[L.RUN], parsed, net, nodes)
            cluster.leased = lease
            return cluster
        return None

    @classmethod
    def lease_kept(cls, variant: Variant) -> "Cluster | None":
        """A kept idle cluster of exactly `variant` (same name and definition) whose lease
        this process took, or None; ClusterError with the one line of `engine_unreachable`
        when the Docker engine does not answer. What a run and a pool of runs reuse."""
        try:
            running = cls.attach(variant, lease=True)
        except docker.errors.DockerException as exc:  # the engine is missing or not started
            raise ClusterError(engine_unreachable(exc)) from None
        if running is not None and running.variant != variant:
            running.release()
            return None
        return running

    def release(self) -> None:
        """Give back the lease taken by attach(lease=True); the cluster stays up."""
        if self.leased:
            lease_release(self.client, self.run)
            self.leased = False

    def lost(self) -> str | None:
        """What of this cluster is gone (removed by something other than this run), or None."""
        try:
            self.client.networks.get(self.network.id)
        except docker.errors.NotFound:
            return f"its network {self.network.name} was removed"
        for n in self.nodes:
            if n.state == "missing":
                return f"node {n.name} was removed"
        return None

    def down(self, logs_dir: Path | None = None) -> None:
        """Collect every node's log (when asked) and remove every object of this run."""
        if logs_dir is not None:
            for n in self.nodes:
                try:
                    n.save_logs(logs_dir)
                except docker.errors.APIError as exc:
                    log.warning("could not save logs of %s: %s", n.name, exc)
        remove_run(self.client, self.run)

    def __enter__(self) -> "Cluster":
        return self

    def __exit__(self, *exc: object) -> None:
        self.down()

    # -- boot -------------------------------------------------------------------
    def _create_nodes(self, tags: ImageTags, run_labels: dict[str, str]) -> None:
        v = self.variant
        tox_ip = host_ip(self.subnet, TOXIPROXY_OFFSET)
        kafka_image = tags.kafka_image(v.kafka.version)
        self.add_node(tags.toxiproxy, "toxiproxy", "toxiproxy", tox_ip, run_labels, {}, data_dir=None)
        metadata_env: dict[str, str] = {}
        if self.kraft:
            metadata_ips = [host_ip(self.subnet, CONTROLLER_OFFSET + i) for i in range(1, v.cluster.controllers + 1)]
            metadata_env = {"ORDEAL_CLUSTER_ID": kraft.new_cluster_id()}
            for i, ip in enumerate(metadata_ips, start=1):
                self.add_node(kafka_image, f"controller{i}", "controller", ip, run_labels,
                          {"ORDEAL_CONFIG": controller_properties(v, i, metadata_ips),
                           "ORDEAL_JAVA_OPTS": CONTROLLER_JAVA_OPTS, **metadata_env}, data_dir="/var/lib/kafka")
        else:
            metadata_ips = [host_ip(self.subnet, ZK_OFFSET + i) for i in range(1, v.cluster.zookeepers + 1)]
            for i, ip in enumerate(metadata_ips, start=1):
                self.add_node(tags.zookeeper, f"zk{i}", "zookeeper", ip, run_labels,
                          {"ORDEAL_CONFIG": zoo_cfg(metadata_ips), "ORDEAL_MYID": str(i),
                           "ORDEAL_JAVA_OPTS": ZOOKEEPER_JAVA_OPTS}, data_dir="/var/lib/zookeeper")
        # The orderers' material comes first: under orderer.kafka_tls the brokers mount it too.
        broker_mounts = self.ordering.prepare(self, tags, run_labels) if v.cluster.osns else []
        for i in range(1, v.cluster.brokers + 1):
            ip = host_ip(self.subnet, KAFKA_OFFSET + i)
            props = server_properties(v, i, ip, f"{tox_ip}:{PROXY_BASE_PORT + i}", metadata_ips)
            self.add_node(kafka_image, f"kafka{i}", "kafka", ip, run_labels,
                      {"ORDEAL_CONFIG": props, "ORDEAL_JAVA_OPTS": KAFKA_JAVA_OPTS, **metadata_env},
                      data_dir="/var/lib/kafka", extra_mounts=broker_mounts)
        if v.cluster.osns:
            self.ordering.create_nodes(self, tags, run_labels)

    def add_node(self, image: str, name: str, role: str, ip: str, run_labels: dict[str, str],
             env: dict[str, str], data_dir: str | None, extra_mounts: list[docker.types.Mount] = ()) -> Node:
        api = self.client.api
        node_labels = {**run_labels, L.ROLE: role, L.NODE: name, L.IP: ip}
        mounts = list(extra_mounts)
        if data_dir:
            vol = self.client.volumes.create(name=f"ordeal-{self.run}-{name}", labels=node_labels)
            mounts.append(docker.types.Mount(target=data_dir, source=vol.name, type="volume"))
        created = api.create_container(
            image, name=f"ordeal-{self.run}-{name}", hostname=name, environment=env, labels=node_labels,
            host_config=api.create_host_config(mounts=mounts, init=False, oom_score_adj=500),
            networking_config=api.create_networking_config(
                {self.network.name: api.create_endpoint_config(ipv4_address=ip, aliases=[name])}),
        )
        node = Node(name=name, role=role, ip=ip, container=self.client.containers.get(created["Id"]))
        self.nodes.append(node)
        return node

    def _start(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        for n in [self.toxiproxy, *self.zookeepers, *self.controllers]:
            n.start()
        self._create_proxies(deadline)
        for n in self.brokers:
            n.start()
        self.wait_healthy(max(1.0, deadline - time.monotonic()), osns=False)
        # OSNs create their channels' topics, so they start once the brokers are all up.
        if self.osns:
            self.ordering.start(self, deadline)
        self.wait_healthy(max(1.0, deadline - time.monotonic()))

    def _create_proxies(self, deadline: float) -> None:
        # toxiproxy-python keeps its server address in class attributes; fine for one
        # toxiproxy per process, which is what a run has.
        from toxiproxy.server import Toxiproxy

        server = Toxiproxy()
        server.update_api_consumer(self.toxiproxy.ip, TOXIPROXY_API_PORT)
        while not server.running():
            if time.monotonic() > deadline:
                raise ClusterError(f"toxiproxy at {self.toxiproxy_api()} did not answer")
            time.sleep(0.1)
        for b in self.brokers:
            if server.get_proxy(b.name) is None:
                server.create(upstream=f"{b.ip}:{CLIENT_PORT}", name=b.name,
                              listen=f"0.0.0.0:{PROXY_BASE_PORT + b.node_id}")
        self._guard_toxiproxy_api()

    def _guard_toxiproxy_api(self) -> None:
        """toxiproxy's API has no authentication: only the host (the network's gateway) may
        reach it; the nodes reach only the proxies. A DROP rule in toxiproxy's namespace,
        entered from the host like the partitions' rules."""
        from clusters.namespace import run as in_namespace

        gateway = host_ip(self.subnet, 1)
        rule = ["INPUT", "-p", "tcp", "--dport", str(TOXIPROXY_API_PORT), "!", "-s", gateway, "-j", "DROP"]
        pid = self.toxiproxy.pid
        try:
            in_namespace(pid, ["iptables", "-w", "5", "-C", *rule])
        except RuntimeError:  # not there yet
            in_namespace(pid, ["iptables", "-w", "5", "-I", *rule])

    def wait_healthy(self, timeout: float = 120.0, osns: bool = True) -> None:
        """The metadata quorum has a leader (ZooKeeper's ensemble, or KRaft's controllers),
        all K brokers are registered (in KRaft: and unfenced, as only those are in the
        metadata) with a controller, and (with `osns`) every OSN's chains have started."""
        deadline = time.monotonic() + timeout
        quorum = (("KRaft controller quorum has no leader", lambda: self.active_controller() is not None)
                  if self.kraft else
                  ("ZooKeeper ensemble has no leader", lambda: ensemble_has_leader([z.ip for z in self.zookeepers])))
        checks = [
            quorum,
            (f"not all {len(self.brokers)} brokers registered with a controller",
             lambda: kafka_ready(self.bootstrap_servers(), len(self.brokers))),
        ]
        if osns and self.osns:
            checks.append((f"not all {len(self.osns)} OSNs report healthy",
                           lambda: all(self.osn_healthy(n) for n in self.osns)))
        for failure, check in checks:
            while not check():
                dead = [n for n in self.nodes if n.state in ("exited", "dead")]
                if dead:
                    raise ClusterError(f"{failure}: node(s) {', '.join(n.name for n in dead)} exited; "
                                       f"{dead[0].name}'s last line: {_last_line(dead[0])}")
                if time.monotonic() > deadline:
                    raise ClusterError(f"{failure} after {timeout:.0f} s")
                time.sleep(0.25)


def _last_line(node: Node) -> str:
    """The last non-blank line a node wrote before it exited, which most often says why (the
    whole log is saved with the run's logs)."""
    try:
        lines = [line for line in node.logs().decode(errors="replace").splitlines() if line.strip()]
    except docker.errors.APIError as exc:
        return f"(its log could not be read: {exc.__class__.__name__})"
    return lines[-1].strip()[:300] if lines else "(its log is empty)"


def _create_network(client: docker.DockerClient, run: str, run_labels: dict[str, str],
                    variant: Variant) -> docker.models.networks.Network:
    net_labels = {**run_labels, L.VARIANT_JSON: variant.model_dump_json()}
    for subnet in candidate_subnets(client, run)[:16]:
        ipam = docker.types.IPAMConfig(pool_configs=[
            docker.types.IPAMPool(subnet=str(subnet), gateway=host_ip(subnet, 1))])
        try:
            net = client.networks.create(f"ordeal-{run}", driver="bridge", internal=True, ipam=ipam,
                                         labels={**net_labels, L.SUBNET: str(subnet)})
            net.reload()
            return net
        except docker.errors.APIError as exc:
            if "overlap" in str(exc).lower():
                continue  # a parallel run took it between our look and our create
            raise
    raise ClusterError("no free /24 left for the run's network")
