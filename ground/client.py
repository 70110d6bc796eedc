"""The Client protocol: how a workload turns an op into a call (Jepsen's jepsen.client).

The runner holds one unopened client per workload and opens one per logical process;
a process whose op ended `info` is retired, its client closed, and the next op runs on
a fresh process with a freshly opened client.

A client may also start some ops without waiting for them (an optional `invoke_async`
and the `async_fs` it takes), so that one client thread keeps many open: Jepsen's
Kafka test gets its rates from many such sends. The worker then records the invoke
before the op is handed over and the completion when the client calls back.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from ground.cluster_view import ClusterView
from ground.op import Op


class Client(Protocol):
    def open(self, cluster: ClusterView, process: int) -> "Client":
        """A client bound to `cluster` (None for workloads that need none) for one process."""

    def invoke(self, op: Op) -> Op:
        """Perform `op` (an invoke: process, f, value) and answer its completion: a dict
        with `type` ok | fail | info, `value`, and `error` (fail/info) or `node` when known.
        An exception is recorded as info: the call may or may not have happened."""

    def close(self) -> None:
        """Release connections; called once, possibly from another thread."""


class AsyncClient(Client, Protocol):
    """A Client that also starts the ops whose f is in `async_fs` without blocking."""

    async_fs: frozenset[str]

    def invoke_async(self, op: Op, done: Callable[[Op], None]) -> None:
        """Start `op` and return at once; call `done(answer)` exactly once, from any thread,
        with what invoke would have answered. An answer that never comes is completed info
        by the worker at op_timeout; an exception here is recorded as info."""


def starts_async(client: Any, f: str) -> bool:
    """Whether `client` starts ops of `f` asynchronously (invoke_async)."""
    return f in getattr(client, "async_fs", ()) and callable(getattr(client, "invoke_async", None))
