"""Fabric-style operations endpoint: GET /healthz answers 200 {"status": "OK"} once every
chain has started and none has halted, else 503 with the failed checks. The cluster probes it.
"""
from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class OperationsServer:
    def __init__(self, listen: str, unhealthy: Callable[[], dict[str, str]]) -> None:
        host, port = listen.rsplit(":", 1)

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                if self.path != "/healthz":
                    self.send_error(404)
                    return
                failed = unhealthy()
                body = {"status": "OK"} if not failed else {
                    "status": "Service Unavailable",
                    "failed_checks": [{"component": f"channel {c}", "reason": r} for c, r in failed.items()]}
                data = json.dumps(body).encode()
                self.send_response(503 if failed else 200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: object) -> None:
                pass  # probes every few seconds would drown the OSN's log

        self._server = ThreadingHTTPServer((host, int(port)), Handler)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), name="operations",
                                        daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
