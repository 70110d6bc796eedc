"""The noop fault: records a fault op and a heal op and touches nothing, so that the
harness runs, and a schedule is recorded, without any cluster (tests, bench/recorder.py).
It is also the smallest correct Nemesis."""
from __future__ import annotations

from typing import Any

from ground.cluster_view import ClusterView
from ground.op import Op


class NoopNemesis:
    needs_cluster = False

    def __init__(self, options: dict[str, Any] | None = None):
        if options:
            raise ValueError(f"noop takes no options (got {', '.join(sorted(options))})")
        self.active = False

    def setup(self, cluster: ClusterView) -> None:
        pass

    def invoke(self, op: Op) -> Op:
        if op["f"] == "start":
            self.active = True
            return {"f": "noop", "value": {"fault": "noop"}}
        self.active = False
        return {"f": "heal", "value": {"fault": "noop"}}

    def heal_all(self) -> list[Op]:
        if not self.active:
            return []
        self.active = False
        return [{"f": "heal", "value": {"fault": "noop"}}]
