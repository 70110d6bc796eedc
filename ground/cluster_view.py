"""What the parts above the cluster may ask of it and of its nodes, named once.

Workloads, nemeses, the runner and the checks' evidence see the cluster under test through
these protocols, not through Docker: clusters.cluster.Cluster and clusters.node.Node
implement them, and so does the fake cluster of tests/support.py, so a test's cluster is
checked against the same contract as the real one. Ducktape's service objects hold the same
split: a node has verbs (start, kill, pause, read a file), and whoever injects a fault uses
the verbs, never the container behind them.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from ground.variant import Variant

ExitState = dict[str, Any]  # Docker's State of a stopped node: Status, ExitCode, OOMKilled, FinishedAt


@runtime_checkable
class NodeView(Protocol):
    """One node of the cluster (a ZooKeeper, KRaft controller, broker, OSN or toxiproxy)."""

    name: str
    role: str
    ip: str
    # A stop the harness meant (kill, stop) until the next start: any other exit is a crash.
    expected_down: bool

    @property
    def node_id(self) -> int: ...

    @property
    def state(self) -> str:
        """running, paused, exited, created, ... or missing."""
        ...

    @property
    def pid(self) -> int: ...

    def alive(self) -> bool: ...

    def start(self) -> None: ...

    def kill(self) -> None: ...

    def stop(self, clean_shutdown: bool = True) -> None: ...

    def pause(self) -> None: ...

    def resume(self) -> None: ...

    def lose_disk(self) -> dict[str, Any]: ...

    def read_file(self, path: str) -> bytes | None: ...

    def exit_state(self) -> ExitState | None:
        """How the node stands or ended (see ExitState); None once its container is gone."""
        ...

    def log_tail(self, lines: int) -> list[str]:
        """The last `lines` lines of its log."""
        ...

    def save_logs(self, directory: Path) -> Path: ...


@runtime_checkable
class ClusterView(Protocol):
    """The cluster under test: its nodes by role, where clients reach it, who leads what, and
    whether it is whole again."""

    run: str
    variant: "Variant"
    nodes: list[NodeView]

    @property
    def kraft(self) -> bool: ...

    @property
    def zookeepers(self) -> list[NodeView]: ...

    @property
    def controllers(self) -> list[NodeView]: ...

    @property
    def brokers(self) -> list[NodeView]: ...

    @property
    def osns(self) -> list[NodeView]: ...

    def by_role(self, role: str) -> list[NodeView]: ...

    def node(self, name: str) -> NodeView: ...

    def bootstrap_servers(self) -> str:
        """Where clients on the host reach the brokers (through toxiproxy)."""
        ...

    def proxy_address(self, broker: NodeView) -> str: ...

    def toxiproxy_api(self) -> str: ...

    def osn_addresses(self) -> dict[str, str]: ...

    def client_identity(self) -> Any:
        """Whom ordering clients sign as (fabric.identity.Identity)."""
        ...

    def config_admin(self) -> Any:
        """Who signs channel config updates (fabric.identity.Identity), or None."""
        ...

    def osn_healthy(self, node: NodeView) -> bool: ...

    def leader_of(self, topic: str, partition: int = 0) -> NodeView | None: ...

    def controller(self) -> NodeView | None: ...

    def recovery_gaps(self) -> list[str]:
        """What is not whole again yet; [] when whole."""
        ...

    def orderer_description(self) -> dict[str, str] | None: ...

    def lost(self) -> str | None:
        """Why the cluster is gone (something else removed it), or None."""
        ...

    def release(self) -> None: ...

    def down(self, logs_dir: Path | None = None) -> None: ...


class NodesByRole:
    """The lookups every cluster answers the same way from its `nodes` (clusters.cluster.Cluster
    and the tests' fake inherit them)."""

    nodes: list

    def by_role(self, role: str) -> list:
        return [n for n in self.nodes if n.role == role]

    @property
    def zookeepers(self) -> list:
        return self.by_role("zookeeper")

    @property
    def controllers(self) -> list:
        """KRaft's dedicated controllers (none in ZooKeeper mode)."""
        return self.by_role("controller")

    @property
    def brokers(self) -> list:
        return self.by_role("kafka")

    @property
    def osns(self) -> list:
        return self.by_role("osn")

    def node(self, name: str):
        for n in self.nodes:
            if n.name == name:
                return n
        raise KeyError(name)
