"""What tests share: waiting on a condition instead of sleeping (`until`; `holds` for one that
must stay true a while), and one fake cluster and node that implement the contract of
ground/cluster_view.py, for tests of the parts above the cluster that must not need Docker."""
from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ground.cluster_view import NodesByRole


def until(predicate: Callable[[], Any], timeout: float, step: float = 0.05, what: str = "",
          last: bool = False) -> Any:
    """The first truthy value of predicate(), looked at every `step` seconds for `timeout`
    seconds; the test fails, naming `what` it waited for and the last value seen, if none
    comes. A predicate that raises counts as not yet (a node coming back may refuse a
    request); its last error is the failure's cause.

    last=True: no failure at the deadline; the last value (looked at once the deadline has
    passed; None if that look raised) is returned, falsy. For a test that asserts on what it
    saw with a message of its own (a log's tail, the ISRs still short), or that goes on
    whatever came (a wait that only gives something time)."""
    deadline = time.monotonic() + timeout
    while True:
        error: Exception | None = None
        try:
            value = predicate()
        except Exception as exc:  # noqa: BLE001
            value, error = None, exc
        if value:
            return value
        if time.monotonic() > deadline:
            if last:
                return value
            seen = f"raised {error!r}" if error is not None else f"last seen: {value!r}"
            raise AssertionError(f"gave up after {timeout:g} s waiting for {what or predicate} ({seen})") from error
        time.sleep(step)


def holds(predicate: Callable[[], Any], seconds: float, step: float = 0.25, what: str = "") -> None:
    """predicate() is truthy at every look, every `step` seconds for `seconds` seconds: what
    must stay so, where `until` waits for what must become so. The test fails at the first
    look it is not, naming `what` should have held and the value seen; a predicate that
    raises fails the test with its error."""
    started = time.monotonic()
    while (elapsed := time.monotonic() - started) < seconds:
        if not (value := predicate()):
            raise AssertionError(f"{what or predicate} held only {elapsed:.1f} s of {seconds:g} s (seen: {value!r})")
        time.sleep(step)


class Found:
    """What the registered checkers found in a module's cases, checked as one batch
    (tests/conftest.py find_together): `found(name, *anomalies)` is the rows of those anomalies
    (else of the module's `default` ones) in case `name`, and what its builder returned (the
    indices its assertions name); `found.all(name)` is every row of it."""

    def __init__(self, rows: dict[str, list[dict[str, Any]]], built: dict[str, Any], default: tuple[str, ...]):
        self._rows, self._built, self._default = rows, built, default

    def __call__(self, name: str, *anomalies: str) -> tuple[list[dict[str, Any]], Any]:
        wanted = anomalies or self._default
        assert wanted, "name the anomalies whose rows the test reads"
        return [r for r in self._rows[name] if r["anomaly"] in wanted], self._built[name]

    def all(self, name: str) -> list[dict[str, Any]]:
        return self._rows[name]


class FakeNode:
    """A node that implements ground.cluster_view.NodeView in memory: its verbs change its
    state and are listed in `calls`; `crash()` is an exit no verb caused. Tests needing more
    override what they use."""

    def __init__(self, name: str, role: str = "kafka", ip: str = "10.0.0.2", state: str = "running",
                 expected_down: bool = False):
        self.name, self.role, self.ip, self.state, self.expected_down = name, role, ip, state, expected_down
        self.calls: list[str] = []

    def __repr__(self) -> str:
        return f"FakeNode({self.name!r}, {self.role!r}, state={self.state!r})"

    @property
    def node_id(self) -> int:
        return int("".join(ch for ch in self.name if ch.isdigit()) or 0)

    @property
    def pid(self) -> int:
        return 4242 if self.alive() else 0

    def alive(self) -> bool:
        return self.state in ("running", "paused")

    def _verb(self, verb: str) -> None:
        self.calls.append(verb)

    def start(self) -> None:
        self._verb("start")
        self.state, self.expected_down = "running", False

    def kill(self) -> None:
        self._verb("kill")
        if self.alive():
            self.expected_down = True
        self.state = "exited"

    def stop(self, clean_shutdown: bool = True) -> None:
        self._verb("stop")
        if self.alive():
            self.expected_down = True
        self.state = "exited"

    def pause(self) -> None:
        self._verb("pause")
        if self.state == "running":
            self.state = "paused"

    def resume(self) -> None:
        self._verb("resume")
        if self.state == "paused":
            self.state = "running"

    def crash(self) -> None:
        """The process exits by itself: no verb, expected_down stays as it was."""
        self.state = "exited"

    def lose_disk(self) -> dict[str, Any]:
        self._verb("lose_disk")
        return {}

    def read_file(self, path: str) -> bytes | None:
        return None

    def exit_state(self) -> dict[str, Any] | None:
        return {"Status": self.state, "ExitCode": 0, "OOMKilled": False, "FinishedAt": "0001-01-01T00:00:00Z"}

    def log_tail(self, lines: int) -> list[str]:
        return []

    def save_logs(self, directory: Path) -> Path:
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{self.name}.log"
        path.write_text("log\n")
        return path


class FakeCluster(NodesByRole):
    """A cluster that implements ground.cluster_view.ClusterView in memory, whole and healthy
    unless a test says otherwise. `nodes` default to one ZooKeeper, `brokers` brokers and
    `osns` OSNs; what the runner asked of it is kept (`downs`, `releases`)."""

    kraft = False

    def __init__(self, nodes: list[FakeNode] | None = None, *, variant: Any = None, run: str = "fake-1",
                 brokers: int = 3, osns: int = 0):
        if nodes is None:
            specs = [("zk1", "zookeeper")] + [(f"kafka{i}", "kafka") for i in range(1, brokers + 1)] \
                + [(f"osn{i}", "osn") for i in range(1, osns + 1)]
            nodes = [FakeNode(name, role, f"10.0.0.{i}") for i, (name, role) in enumerate(specs, start=2)]
        self.nodes = nodes
        self.variant = variant
        self.run = run
        self.downs: list[Path | None] = []
        self.releases = 0

    def bootstrap_servers(self) -> str:
        return ",".join(f"{b.ip}:9092" for b in self.brokers)

    def proxy_address(self, broker: FakeNode) -> str:
        return f"{broker.ip}:9092"

    def toxiproxy_api(self) -> str:
        return "http://127.0.0.1:8474"

    def osn_addresses(self) -> dict[str, str]:
        return {n.name: f"{n.ip}:7050" for n in self.osns}

    def client_identity(self) -> Any:
        return None

    def config_admin(self) -> Any:
        return None

    def osn_healthy(self, node: FakeNode) -> bool:
        return node.state == "running"

    def leader_of(self, topic: str, partition: int = 0) -> FakeNode | None:
        return self.brokers[0] if self.brokers else None

    def controller(self) -> FakeNode | None:
        return self.brokers[0] if self.brokers else None

    def recovery_gaps(self) -> list[str]:
        return []

    def orderer_description(self) -> dict[str, str] | None:
        return None

    def lost(self) -> str | None:
        return None

    def wait_healthy(self, timeout: float = 120.0, osns: bool = True) -> None:
        pass

    def release(self) -> None:
        self.releases += 1

    def down(self, logs_dir: Path | None = None) -> None:
        self.downs.append(logs_dir)


class OsnAt(FakeCluster):
    """A cluster of one OSN, osn1, at `address` (an orderer a test started by itself): whom
    clients sign as and who signs config updates are given."""

    def __init__(self, address: str, identity: Any = None, admin: Any = None):
        super().__init__([])
        self.address, self.identity, self.admin = address, identity, admin

    def osn_addresses(self) -> dict[str, str]:
        return {"osn1": self.address}

    def client_identity(self) -> Any:
        return self.identity

    def config_admin(self) -> Any:
        return self.admin
