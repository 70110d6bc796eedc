"""The fault kinds: the faults a variant states what it expects under (its [expect] table), each
shipped as scenarios/<kind>.toml and tested on every variant that can run it
(tests/scenarios/test_fault_kinds.py). The one list of them; everything else is derived.
"""
from __future__ import annotations

import sys

FAULT_KINDS = (
    "kill-broker", "kill-leader", "kill-controller", "pause-broker", "partition-halves",
    "isolate-leader", "isolate-controller", "zk-quorum-loss", "link-faults", "unclean-toggle",
    "targeted-isr-shrink", "kill-osn", "pause-osn", "mixed", "kafka-loss-probed",
    "disk-loss", "disk-loss-sole-in-sync",
    "pause-controller", "controller-quorum-loss", "isolate-broker-from-controllers",
    # transactions (the kafka-txn workload): the coordinator of a producer's transactional.id
    # paused; coordinators of txns and groups killed, paused and cut, brokers killed, halves
    "pause-txn-coordinator", "txn-mixed",
    # consumer groups (kafka-log subscribed): the group's coordinator killed, paused and cut,
    # rebalance storms, broker kills
    "group-mixed",
    # random overlapping faults in Jepsen's manner (scenarios/random.toml): what nobody scripted;
    # the same with one broker's disk loss in the mix (scenarios/random-disk.toml)
    "random", "random-disk",
)
# The fault kinds that are schedules of the other kinds' faults (harness/schedules/random_faults.py),
# not a fault of their own: no fault of the registry bears their name.
SCHEDULE_KINDS = ("random", "random-disk")
# Fault kinds that need nodes of one metadata mode: ZooKeeper's ensemble, or KRaft's
# dedicated controllers. The other fault kinds run in either mode ("controller" is then
# the controller broker, or the active controller: the KRaft quorum's leader).
MODE_FAULT_KINDS: dict[str, str] = {
    "zk-quorum-loss": "zookeeper",
    "controller-quorum-loss": "kraft",
    "isolate-broker-from-controllers": "kraft",
}
# Old names of fault kinds and faults, still understood (a variant table, a scenario's faults or
# name): each use says its new name once on stderr; a later release refuses them.
RENAMED = {"txn-coordinator-pause": "pause-txn-coordinator"}
_SAID: set[str] = set()


def canonical(name: str) -> str:
    """`name`, or the new name of a renamed fault kind (said once per process)."""
    new = RENAMED.get(name)
    if new is None:
        return name
    if name not in _SAID:
        _SAID.add(name)
        print(f"ordeal: {name!r} is now called {new!r}; the old name will be refused in a later release",
              file=sys.stderr)
    return new
