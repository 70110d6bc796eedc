"""The Nemesis contract (Jepsen's jepsen.nemesis): a nemesis is a client whose ops are faults.

The run's fault schedule sends it {"f": "start" | "stop", "fault": name}; it answers the
nemesis op to record, in docs/history-format.md's shape: {"f": "kill" | "start" | "pause" |
"resume" | "partition" | "heal" | "link-fault" | "config", "value": {...what was done, to
which nodes...}}. The runner records it as process "nemesis", type "info", and flushes the
history at once. nemesis/registry.py names every fault.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from ground.cluster_view import ClusterView
from ground.op import Op


class Nemesis(Protocol):
    needs_cluster: bool  # False only for faults that touch nothing (noop)

    def setup(self, cluster: ClusterView) -> None:
        """Bind to the cluster (None when no cluster runs) before the first op."""

    def invoke(self, op: Op) -> Op:
        """Do op["f"] ("start" or "stop") of op["fault"]; answer the op that says what was
        done. Random choices (which node) should come from random.Random(op["seed"]), an
        int drawn from the run's seed, so a run's faults are reproducible. An exception is
        recorded as an info op with its error (NoTarget: the fault found nothing to hit,
        which is not a failure of the fault); the run goes on."""

    def heal_all(self) -> list[Op]:
        """Undo everything this nemesis may have done, whether or not it thinks a fault is
        active; answer the ops it did (possibly none). Safe to call any number of times,
        and must not depend on the faulted nodes answering. The runner calls it right
        after setup (a reused cluster may carry an earlier run's faults), at the heal
        phase, and on any early stop."""

    # Optional: roles() -> set[str], the node roles the fault acts on by name; a variant
    # without such nodes is refused before anything boots (harness/plan.py).
    # Optional: bind_client_gate(gate), for a fault that holds the clients
    # (ground/client_gate.py); changes_cluster = True, for a fault after which the cluster
    # may not be reused (a suite's next run boots a fresh one).


class NoTarget(RuntimeError):
    """Live state names no node to hit (no topic yet, no leader, no coordinator): the fault
    did nothing, and its op says so (outcome no-target) rather than that it failed."""


# factory(options) -> Nemesis; bad options raise ValueError with a one-line message.
FaultFactory = Callable[[dict[str, Any]], Nemesis]
