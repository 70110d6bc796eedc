"""The OSN process: `python3 -m osn.server --config /etc/ordeal/osn.json`.

Serves AtomicBroadcast on settings.listen and GET /healthz on settings.operations_listen,
logs to stdout, and shuts down cleanly on SIGTERM or SIGINT (exit 0). A config it cannot
use is one line on stderr and exit 2; a damaged ledger or a port it cannot bind, exit 3.
"""
from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc

from osn.broadcast import Broadcaster
from osn.deliver import Deliverer
from osn.kafka_log import KafkaLogs
from osn.ledger import LedgerCorrupt
from osn.operations import OperationsServer
from osn.partition_log import PartitionLog
from osn.registrar import Registrar
from osn.service import AtomicBroadcastService
from osn.settings import OsnSettings, SettingsError, TlsSettings, load_settings
from osn.tls import ServerTls
from osn.wire.orderer import ab_pb2_grpc

log = logging.getLogger("osn")

# Each open Broadcast or Deliver stream holds one worker for its whole life.
GRPC_WORKERS = 128
SHUTDOWN_GRACE_S = 2.0


class Osn:
    """One ordering service node: its chains, its gRPC endpoint and its operations endpoint."""

    def __init__(self, settings: OsnSettings, partition_of: Callable[[str], PartitionLog],
                 clock: Callable[[], float] = time.monotonic, retry_interval_s: float = 1.0) -> None:
        self.settings = settings
        self.registrar = Registrar(settings, partition_of, clock=clock, retry_interval_s=retry_interval_s)
        chains = self.registrar.chains
        # A block holds at most PreferredMaxBytes of envelopes or one envelope up to AbsoluteMaxBytes.
        max_message = settings.batch.absolute_max_bytes + 1024 * 1024
        self._grpc = grpc.server(ThreadPoolExecutor(max_workers=GRPC_WORKERS, thread_name_prefix="grpc"),
                                 options=[("grpc.max_receive_message_length", max_message),
                                          ("grpc.max_send_message_length", max_message)])
        tls = settings.tls
        service = AtomicBroadcastService(Broadcaster(chains, settings), Deliverer(chains),
                                         mutual_tls=bool(tls and tls.client_auth_required))
        ab_pb2_grpc.add_AtomicBroadcastServicer_to_server(service, self._grpc)
        try:
            self.port = (self._grpc.add_secure_port(settings.listen, server_tls(tls).credentials()) if tls
                         else self._grpc.add_insecure_port(settings.listen))
        except RuntimeError:  # grpcio's way of saying the bind failed
            self.port = 0
        if self.port == 0:
            raise OSError(f"cannot listen on {settings.listen}")
        self.operations = OperationsServer(settings.operations_listen, self.registrar.unhealthy)

    def start(self) -> None:
        self.registrar.start()
        self._grpc.start()
        self.operations.start()
        log.info("%s serving AtomicBroadcast on %s (port %d), /healthz on port %d, channels %s",
                 self.settings.name, self.settings.listen, self.port, self.operations.port,
                 ", ".join(self.settings.channels))

    def stop(self) -> None:
        self._grpc.stop(SHUTDOWN_GRACE_S).wait()
        self.registrar.stop()
        self.operations.stop()


def server_tls(settings: TlsSettings) -> ServerTls:
    """The TLS settings' files, read (OSError names the one that cannot be)."""
    roots = b"".join(path.read_bytes() for path in settings.client_root_cas)
    return ServerTls(settings.certificate.read_bytes(), settings.private_key.read_bytes(), roots or None,
                     settings.client_auth_required)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m osn.server", description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=Path("/etc/ordeal/osn.json"))
    args = parser.parse_args(argv)
    logging.basicConfig(stream=sys.stdout, level=logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        settings = load_settings(args.config)
    except SettingsError as exc:
        print(f"osn: {exc}", file=sys.stderr)
        return 2
    kafka = KafkaLogs(settings)
    try:
        osn = Osn(settings, kafka.partition)
    except (LedgerCorrupt, OSError) as exc:
        print(f"osn: {exc}", file=sys.stderr)
        kafka.close()
        return 3
    stopping = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stopping.set())
    osn.start()
    stopping.wait()
    log.info("%s shutting down", settings.name)
    osn.stop()
    kafka.close()
    log.info("%s stopped", settings.name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
