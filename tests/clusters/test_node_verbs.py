"""Node.pause against the engine's transient freezer failure (seen in CI: "OCI runtime pause
failed: unable to freeze" on a loaded 2-core machine). The container stands in for the
Docker engine only; no system under test is mocked."""
from __future__ import annotations

import docker
import pytest

from clusters.node import Node, NodeVerbFailed


class _Engine:
    """A container whose first `failures` pauses fail the way runc's v1 freezer does."""

    def __init__(self, failures: int, message: str = "OCI runtime pause failed: unable to freeze: unknown"):
        self.failures = failures
        self.message = message
        self.status = "running"
        self.pauses = 0
        self.attrs: dict = {}

    def reload(self) -> None:
        self.attrs = {"State": {"Status": self.status, "Pid": 1}}

    def pause(self) -> None:
        self.pauses += 1
        if self.pauses <= self.failures:
            raise docker.errors.APIError(self.message)
        self.status = "paused"


def _node(engine: _Engine) -> Node:
    return Node(name="kafka1", role="kafka", ip="10.0.0.2", container=engine)  # type: ignore[arg-type]


def test_a_freeze_that_settles_on_a_later_try_pauses_the_node(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("clusters.node.time.sleep", lambda _s: None)
    engine = _Engine(failures=2)
    _node(engine).pause()
    assert engine.status == "paused"
    assert engine.pauses == 3


def test_a_freeze_that_never_settles_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("clusters.node.time.sleep", lambda _s: None)
    engine = _Engine(failures=100)
    with pytest.raises(NodeVerbFailed, match="could not pause kafka1 after 4 tries"):
        _node(engine).pause(attempts=4)
    assert engine.pauses == 4


def test_other_engine_errors_are_not_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("clusters.node.time.sleep", lambda _s: None)
    engine = _Engine(failures=1, message="container is restarting")
    with pytest.raises(docker.errors.APIError):
        _node(engine).pause()
    assert engine.pauses == 1
