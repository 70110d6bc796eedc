"""The Client protocol: how a workload turns an op into a call (Jepsen's jepsen.client).

The runner holds one unopened client per workload and opens one per logical process;
a process whose op ended `info` is retired, its client closed, and the next op runs on
a fresh process with a freshly opened client.
"""
from __future__ import annotations

from typing import Any, Protocol

from ground.op import Op


class Client(Protocol):
    def open(self, cluster: Any, process: int) -> "Client":
        """A client bound to `cluster` (None for workloads that need none) for one process."""

    def invoke(self, op: Op) -> Op:
        """Perform `op` (an invoke: process, f, value) and answer its completion: a dict
        with `type` ok | fail | info, `value`, and `error` (fail/info) or `node` when known.
        An exception is recorded as info: the call may or may not have happened."""

    def close(self) -> None:
        """Release connections; called once, possibly from another thread."""
