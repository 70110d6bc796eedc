"""Fabric v1.4.12's own orderer binary run as a local process on 127.0.0.1 (no Docker, no
Kafka): for tests of what does not need Kafka, such as TLS and Raft. Its material comes from
Fabric's cryptogen and configtxgen (fabric.material), its TLS settings from the same
function the cluster uses."""
from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from fabric import material
from clusters.images.fabric_build import fabric_tools
from fabric.client import OsnClient
from fabric.config_update import sign_channel_creation
from fabric.identity import MspIdentity
from osn.wire.common import common_pb2, configtx_pb2
from clusters.ordering_service import fabric_tls_env
from ground.variant import Variant, load_variant
from ground.cache import cache_dir


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


@dataclass
class OrdererProcess:
    name: str
    port: int
    proc: subprocess.Popen
    log: Path

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self, kill: bool = False) -> None:
        if self.proc.poll() is None:
            (self.proc.kill if kill else self.proc.terminate)()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def start_orderer(tools: Path, made: material.Material, name: str, port: int, work: Path, tls: str = "mutual",
                  extra_env: dict[str, str] | None = None, timeout: float = 60.0) -> OrdererProcess:
    """Start orderer `name` of `made` listening on 127.0.0.1:`port`; returns once it listens."""
    home = work / name
    home.mkdir(parents=True, exist_ok=True)
    env = {"PATH": "/usr/bin:/bin", "FABRIC_CFG_PATH": str(tools / "sampleconfig"), "FABRIC_LOGGING_SPEC": "info",
           "ORDERER_GENERAL_LISTENADDRESS": "127.0.0.1", "ORDERER_GENERAL_LISTENPORT": str(port),
           "ORDERER_GENERAL_GENESISMETHOD": "file", "ORDERER_GENERAL_GENESISFILE": str(made.genesis_block),
           "ORDERER_GENERAL_LOCALMSPID": material.ORDERER_MSP,
           "ORDERER_GENERAL_LOCALMSPDIR": str(made.orderer_msp(name)),
           "ORDERER_FILELEDGER_LOCATION": str(home / "ledger"),
           "ORDERER_CONSENSUS_WALDIR": str(home / "wal"), "ORDERER_CONSENSUS_SNAPDIR": str(home / "snap"),
           "ORDERER_OPERATIONS_LISTENADDRESS": f"127.0.0.1:{free_port()}",
           "ORDERER_METRICS_PROVIDER": "disabled",
           **fabric_tls_env(tls, name, str(made.root)), **(extra_env or {})}
    log = home / "orderer.log"
    with open(log, "ab") as out:
        proc = subprocess.Popen([str(tools / "bin" / "orderer")], env=env, stdout=out, stderr=subprocess.STDOUT)
    running = OrdererProcess(name, port, proc, log)
    deadline = time.monotonic() + timeout
    while not listening(port):
        if proc.poll() is not None or time.monotonic() > deadline:
            running.stop(kill=True)
            raise AssertionError(f"Fabric's orderer {name} did not listen: {running.log_text()[-2000:]}")
        time.sleep(0.1)
    return running


@dataclass
class SoloNetwork:
    """One Fabric orderer on solo consensus with its channels created: what tests of config
    updates need (the orderer org's admin signs them; the client org's user submits)."""

    variant: Variant
    address: str
    client: OsnClient
    user: MspIdentity
    orderer_admin: MspIdentity
    client_admin: MspIdentity

    def block_with(self, label: str, channel: str = "ch0", timeout: float = 30.0,
                   client: OsnClient | None = None) -> dict:
        """The first block of `channel` holding `label`, once the orderer has cut it, read by
        `client` (the user's by default; in maintenance mode only the orderer org may read)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for block in (client or self.client).deliver(self.address, channel, 0, None, timeout=10):
                if label in block["txs"]:
                    return block
            time.sleep(0.2)
        raise AssertionError(f"no block of {channel} holds {label} after {timeout:g} s")

    def current_config(self, channel: str = "ch0", client: OsnClient | None = None) -> configtx_pb2.Config:
        return (client or self.client).channel_config(self.address, channel)


@contextmanager
def solo_network(tmp: Path, channels: tuple[str, ...] = ("ch0",), max_message_count: int = 10,
                 batch_timeout_ms: int = 2000) -> Iterator[SoloNetwork]:
    """Fabric's orderer on solo, plaintext, fabric-recommended's settings but these."""
    tools = fabric_tools(cache_dir())
    variant = load_variant("fabric-recommended")
    variant = variant.model_copy(update={"orderer": variant.orderer.model_copy(
        update={"channels": list(channels), "max_message_count": max_message_count,
                "batch_timeout_ms": batch_timeout_ms, "tls": "off", "kafka_tls": False})})
    made = material.generate(variant, ["osn1"], ["127.0.0.1:1"], tools, tmp / "material", orderer_type="solo")
    process = start_orderer(tools, made, "osn1", free_port(), tmp, tls="off")
    user = MspIdentity.load(material.CLIENT_MSP, made.client_msp("user"))
    client_admin = MspIdentity.load(material.CLIENT_MSP, made.client_msp("admin"))
    client = OsnClient(user)
    try:
        for channel in channels:
            tx = common_pb2.Envelope.FromString(made.channel_tx(channel).read_bytes())
            status = client.broadcast_envelope(process.address, sign_channel_creation(tx, client_admin))
            assert status == "SUCCESS", f"channel {channel} not created: {status}"
            client.wait_for_block(process.address, channel, 0, timeout=30)
        yield SoloNetwork(variant, process.address, client, user,
                          MspIdentity.load(material.ORDERER_MSP, made.orderer_admin_msp()), client_admin)
    finally:
        client.close()
        process.stop()
