"""Checks from outside the cluster that a fault took effect: a Kafka request's round trip
through a broker's proxy, a bounded connect from inside a node's namespace."""
from __future__ import annotations

import socket
import struct
import time

API_VERSIONS = 18


def api_versions_round_trip(address: str, timeout: float = 2.0) -> float | None:
    """Seconds for TCP connect + one ApiVersions v0 request/response, or None when the
    broker does not answer within `timeout` (a connect through toxiproxy succeeds even
    when the broker behind it is frozen, so only a Kafka answer proves it is alive)."""
    host, port = address.rsplit(":", 1)
    client_id = b"ordeal-probe"
    body = struct.pack(">hhih", API_VERSIONS, 0, 7, len(client_id)) + client_id
    started = time.monotonic()
    try:
        with socket.create_connection((host, int(port)), timeout=timeout) as s:
            s.settimeout(max(0.01, timeout - (time.monotonic() - started)))
            s.sendall(struct.pack(">i", len(body)) + body)
            head = read_exactly(s, 8)
            size, correlation = struct.unpack(">ii", head)
            read_exactly(s, size - 4)
            if correlation != 7:
                return None
    except (OSError, ConnectionError):
        return None
    return time.monotonic() - started


def read_exactly(s: socket.socket, n: int) -> bytes:
    """`n` bytes from `s` (ConnectionError if it closes first): one Kafka response frame's worth."""
    data = b""
    while len(data) < n:
        chunk = s.recv(n - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data
