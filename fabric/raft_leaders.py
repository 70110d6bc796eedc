"""Who leads each channel's Raft cluster, as Fabric's etcdraft orderers log it:
"<date> <time> UTC [orderer.consensus.etcdraft] ... Raft leader changed: A -> B channel=C node=N",
where B is the new leader's Raft id (0: none) and N the id of the orderer that logs it.

Why from the logs: Fabric v1.4 has no API that names a channel's Raft leader (its operations
endpoint gives a metric per orderer, not the leader's address), and the guide's own check
of a migration is this line. One home for reading it: the migration's wait for leaders
(clusters/migration.py) and the faults that pick the leader (nemesis/targets.py).
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

LEADER_CHANGED = re.compile(r"^(?P<at>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+) UTC .*Raft leader changed: "
                            r"(?P<was>\d+) -> (?P<now>\d+) channel=(?P<channel>\S+) node=(?P<node>\d+)")


@dataclass(frozen=True)
class LeaderChange:
    at: str  # the orderer's own timestamp (the containers share the host's clock)
    was: int
    now: int
    channel: str
    node: int  # Raft id of the orderer that logged it


def leader_changes(log: str) -> list[LeaderChange]:
    return [LeaderChange(m["at"], int(m["was"]), int(m["now"]), m["channel"], int(m["node"]))
            for m in map(LEADER_CHANGED.match, log.splitlines()) if m]


def raft_ids(logs: Mapping[str, str]) -> dict[str, int]:
    """Orderer name -> its Raft id, from the node= of its own lines."""
    return _ids({name: leader_changes(log) for name, log in logs.items()})


def _ids(changes: Mapping[str, list[LeaderChange]]) -> dict[str, int]:
    return {name: seen[-1].node for name, seen in changes.items() if seen}


def raft_leader(logs: Mapping[str, str], channel: str) -> str | None:
    """The orderer that the newest leader change of `channel`, logged by any orderer, names;
    None where it names none (0) or an id no orderer has logged as its own."""
    changes = {name: leader_changes(log) for name, log in logs.items()}  # each log parsed once
    newest = max((c for seen in changes.values() for c in seen if c.channel == channel),
                 key=lambda c: c.at, default=None)
    if newest is None or newest.now == 0:
        return None
    return next((name for name, rid in _ids(changes).items() if rid == newest.now), None)


def first_leaders(log: str) -> dict[str, int]:
    """Channel -> the first leader this orderer's log names after having none ("0 -> B")."""
    found: dict[str, int] = {}
    for change in leader_changes(log):
        if change.was == 0 and change.now != 0:
            found.setdefault(change.channel, change.now)
    return found
