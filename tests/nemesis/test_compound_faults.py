"""Compound process faults for random schedules: a minority, a majority, every broker. No Docker."""
from __future__ import annotations

import random

import pytest

from nemesis.registry import fault_factory
from nemesis.targets import TargetSpec, resolve
from tests.nemesis.test_faults import FakeCluster


@pytest.mark.parametrize("brokers,minority,majority", [(3, 1, 2), (4, 1, 3), (5, 2, 3)])
def test_minority_and_majority_are_counted_over_every_broker(brokers, minority, majority):
    cluster = FakeCluster(brokers=brokers)
    assert len(resolve(cluster, TargetSpec(pick="minority"), random.Random(1))[0]) == minority
    assert len(resolve(cluster, TargetSpec(pick="majority"), random.Random(1))[0]) == majority


def test_a_majority_is_taken_among_the_live_when_some_are_down():
    cluster = FakeCluster(brokers=4)
    cluster.node("kafka1").state = "exited"
    picked = resolve(cluster, TargetSpec(pick="majority"), random.Random(2))[0]
    assert sorted(picked) == ["kafka2", "kafka3", "kafka4"]


def test_kill_all_brokers_kills_every_broker_and_its_stop_starts_them_all():
    cluster = FakeCluster(brokers=4)
    fault = fault_factory("kill-all-brokers")({})
    fault.setup(cluster)
    done = fault.invoke({"f": "start", "seed": 1})
    assert done["f"] == "kill" and done["value"]["nodes"] == ["kafka1", "kafka2", "kafka3", "kafka4"]
    assert all(n.state == "exited" for n in cluster.brokers) and cluster.node("zk1").state == "running"
    assert fault.invoke({"f": "stop"})["value"]["nodes"] == ["kafka1", "kafka2", "kafka3", "kafka4"]
    assert all(n.state == "running" for n in cluster.brokers)


def test_pause_majority_pauses_two_of_three_and_heal_all_resumes_them():
    cluster = FakeCluster(brokers=3)
    fault = fault_factory("pause-majority")({})
    fault.setup(cluster)
    paused = fault.invoke({"f": "start", "seed": 5})["value"]["nodes"]
    assert len(paused) == 2 and all(cluster.node(n).state == "paused" for n in paused)
    fault.heal_all()
    assert all(n.state == "running" for n in cluster.brokers)
