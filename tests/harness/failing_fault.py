"""A test fault whose every start raises (or, with option no_target, finds nothing to hit):
what a run, a suite or a report says when a scenario's fault never took effect. Not
registered on import: a test that names it registers it for itself, with the `registered`
fixture (tests/conftest.py), as registered(faults={NAME: AlwaysFails})."""
from __future__ import annotations

from typing import Any

from ground.nemesis_protocol import NoTarget

NAME = "always-fails"


class AlwaysFails:
    needs_cluster = False

    def __init__(self, options: dict[str, Any]):
        self.no_target = bool(options.get("no_target", False))

    def setup(self, cluster: Any) -> None:
        pass

    def invoke(self, op: dict[str, Any]) -> dict[str, Any]:
        if op["f"] == "start":
            raise NoTarget("nothing to hit") if self.no_target else RuntimeError("iptables is gone")
        return {"f": "heal", "value": {"fault": NAME}}

    def heal_all(self) -> list[dict[str, Any]]:
        return []

