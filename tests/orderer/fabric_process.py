"""Fabric v1.4.12's own orderer binary run as a local process on 127.0.0.1 (no Docker, no
Kafka): for tests of what does not need Kafka, such as TLS and Raft. Its material comes from
Fabric's cryptogen and configtxgen (clusters.fabric.material), its TLS settings from the same
function the cluster uses."""
from __future__ import annotations

import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from clusters.fabric import material
from clusters.ordering_service import fabric_tls_env


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
