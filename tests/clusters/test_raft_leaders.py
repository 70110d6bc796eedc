"""A channel's Raft leader read from Fabric's etcdraft log lines (fabric/raft_leaders.py),
and the faults that pick it (kill-raft-leader, isolate-raft-leader)."""
from __future__ import annotations

import random
from types import SimpleNamespace

import pytest

from fabric.raft_leaders import first_leaders, raft_ids, raft_leader
from ground.nemesis_protocol import NoTarget
from nemesis.registry import fault_factory
from nemesis.targets import TargetSpec, resolve


def line(at: str, was: int, now: int, channel: str, node: int) -> str:
    return (f"2026-11-30 {at} UTC [orderer.consensus.etcdraft] serveRequest -> INFO 029 "
            f"Raft leader changed: {was} -> {now} channel={channel} node={node}")


LOGS = {
    "osn1": "\n".join([line("02:31:37.981", 0, 3, "ch0", 1), "other text",
                       line("02:33:00.100", 3, 0, "ch0", 1), line("02:33:05.500", 0, 1, "ch0", 1),
                       line("02:31:40.788", 0, 1, "ch1", 1)]),
    "osn2": "\n".join([line("02:31:38.000", 0, 3, "ch0", 2), line("02:33:05.600", 0, 1, "ch0", 2)]),
    "osn3": line("02:31:37.500", 0, 3, "ch0", 3),  # the old leader, killed: its log stops there
}


def test_each_orderers_raft_id_is_the_node_of_its_own_lines() -> None:
    assert raft_ids(LOGS) == {"osn1": 1, "osn2": 2, "osn3": 3}


def test_the_leader_is_the_one_the_newest_change_names_whoever_logged_it() -> None:
    assert raft_leader(LOGS, "ch0") == "osn1"  # 3 was leader, lost it, 1 was elected
    assert raft_leader(LOGS, "ch1") == "osn1"


def test_no_leader_where_the_newest_change_names_none_or_the_channel_never_had_one() -> None:
    logs = {**LOGS, "osn2": LOGS["osn2"] + "\n" + line("02:34:00.000", 1, 0, "ch0", 2)}
    assert raft_leader(logs, "ch0") is None
    assert raft_leader(LOGS, "ch7") is None


def test_first_leaders_are_the_changes_from_none() -> None:
    assert first_leaders(LOGS["osn1"]) == {"ch0": 3, "ch1": 1}


class _Container:
    def __init__(self, text: str):
        self.text = text

    def logs(self, **_: object) -> bytes:
        return self.text.encode()


def _cluster(logs: dict[str, str]) -> SimpleNamespace:
    osns = [SimpleNamespace(name=n, container=_Container(t)) for n, t in logs.items()]
    return SimpleNamespace(osns=osns, variant=SimpleNamespace(orderer=SimpleNamespace(channels=("ch0", "ch1"))))


def test_the_raft_leader_pick_names_the_channels_leader_and_the_channel() -> None:
    victims, detail = resolve(_cluster(LOGS), TargetSpec(pick="raft-leader", role="osn", topic="ch0"),
                              random.Random(1))
    assert victims == ["osn1"] and detail == {"pick": "raft-leader", "channel": "ch0"}


def test_on_a_kafka_based_network_the_raft_leader_pick_finds_no_target() -> None:
    with pytest.raises(NoTarget, match="no Raft leader"):
        resolve(_cluster({"osn1": "Kafka-based logs"}), TargetSpec(pick="raft-leader", role="osn"), random.Random(1))


@pytest.mark.parametrize("name", ["kill-raft-leader", "isolate-raft-leader"])
def test_the_raft_leader_faults_need_orderers(name: str) -> None:
    assert "osn" in fault_factory(name)({}).roles()
