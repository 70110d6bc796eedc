"""The kafka-txn workload's ops and names as plain data, and the coordinators faults aim at: no cluster."""
from __future__ import annotations

import random
from collections import Counter
from types import SimpleNamespace

import pytest
from pydantic import ValidationError

from ground.variant import load_variant
from ground.generator import Context
from nemesis import partition, targets, topologies
from nemesis.registry import fault_factory
from nemesis.targets import coordinator_partition, java_string_hash
from tests.nemesis.test_faults import FakeCluster
from workloads.kafka_txn import TransactionalIds
from workloads.registry import workload_factory

VARIANT = load_variant("fabric-recommended")


def _ops(options: dict, n: int, threads=(0, 1, 2), seed: int = 1) -> list[dict]:
    gen = workload_factory("kafka-txn")(options, VARIANT).generator(random.Random(seed))
    return [gen.op(Context(0, threads[i % len(threads)])) for i in range(n)]


def test_each_thread_assigns_every_partition_from_the_beginning_first():
    ops = _ops({}, 6)
    assert [op["f"] for op in ops[:3]] == ["assign"] * 3 and ops[3]["f"] == "txn"
    assert ops[0]["value"]["seek"] == "beginning" and len(ops[0]["value"]["partitions"]) == 6


def test_txns_hold_one_to_four_micro_ops_with_unique_values_and_their_partition():
    txns = [op for op in _ops({}, 3000) if op["f"] == "txn"]
    sizes = Counter(len(op["value"]) for op in txns)
    assert set(sizes) == {1, 2, 3, 4}
    sends = [m for op in txns for f, m in op["value"] if f == "send"]
    polls = [m for op in txns for f, m in op["value"] if f == "poll"]
    assert max(Counter((m["topic"], m["value"]) for m in sends).values()) == 1
    assert all(m["key"] == f"k{m['partition']}" for m in sends) and polls
    assert all("isolation" not in m for m in polls)  # read_committed unless told


def test_aborts_on_purpose_come_at_the_configured_rate_and_the_op_says_so():
    txns = [op for op in _ops({"abort_rate": 0.3}, 4000) if op["f"] == "txn"]
    share = sum(bool(op.get("abort")) for op in txns) / len(txns)
    assert 0.25 < share < 0.35
    assert not any(op.get("abort") for op in _ops({"abort_rate": 0.0}, 500))


def test_read_uncommitted_polls_say_so_and_the_ops_depend_only_on_the_seed():
    polls = [m for op in _ops({"isolation": "read_uncommitted"}, 300) if op["f"] == "txn"
             for f, m in op["value"] if f == "poll"]
    assert polls and all(m["isolation"] == "read_uncommitted" for m in polls)
    w = workload_factory("kafka-txn")({}, VARIANT)  # one instance: its topics' names carry a token

    def run(seed: int) -> list[dict]:
        gen = w.generator(random.Random(seed))
        return [gen.op(Context(0, i % 3)) for i in range(200)]

    assert run(5) == run(5) != run(6)


def test_in_a_group_a_fresh_consumer_subscribes_and_a_txn_polls_once_first_and_commits_last():
    ops = _ops({"group": "g", "send_offsets": True}, 600)
    assert [op["f"] for op in ops[:3]] == ["subscribe"] * 3 and ops[0]["value"]["consumer"] == "c0"
    txns = [[f for f, _ in op["value"]] for op in ops if op["f"] == "txn"]
    polling = [names for names in txns if "poll" in names]
    assert polling and all(names[0] == "poll" and names.count("poll") == 1 and names[-1] == "commit"
                           for names in polling)
    assert all("commit" not in names for names in txns if "poll" not in names)


@pytest.mark.parametrize("bad", [{"max_micro_ops": 0}, {"isolation": "serializable"}, {"abort_rate": 2},
                                 {"group_protocol": "consumer"}])
def test_bad_options_are_refused(bad):
    with pytest.raises(ValidationError):
        workload_factory("kafka-txn")(bad, VARIANT)


def test_a_retired_process_id_goes_to_the_next_process_first_in_first_out():
    ids = TransactionalIds("ordeal-txn")
    a, b = ids.take(), ids.take()
    ids.give_back(a)
    assert (a, b, ids.take(), ids.take()) == ("ordeal-txn-0", "ordeal-txn-1", "ordeal-txn-0", "ordeal-txn-2")


def test_coordinator_partition_is_kafkas_abs_of_javas_string_hash():
    assert java_string_hash("hello") == 99162322  # "hello".hashCode() in Java
    assert java_string_hash("polygenelubricants") == -2**31  # Integer.MIN_VALUE: Utils.abs gives 0
    assert coordinator_partition("polygenelubricants", 50) == 0
    assert coordinator_partition("hello", 50) == 99162322 % 50
    assert coordinator_partition("ordeal-txn-1", 50) == abs(java_string_hash("ordeal-txn-1")) % 50


class _Partition:
    def __init__(self, leader: int):
        self.leader, self.replicas, self.isrs = leader, [1, 2, 3], [1, 2, 3]


class _Metadata:
    """__transaction_state and __consumer_offsets of 50 partitions each: kafka3 leads partition
    22 (that of "hello", whose Java hashCode is 99162322), kafka1 every other one."""

    def __init__(self):
        parts = {p: _Partition(3 if p == 22 else 1) for p in range(50)}
        topic = SimpleNamespace(error=None, partitions=parts)
        self.topics = {"__transaction_state": topic, "__consumer_offsets": topic}


class _CoordinatedCluster(FakeCluster):
    def bootstrap_servers(self) -> str:
        return "fake:9092"

    @property
    def zookeepers(self) -> list:
        return self.by_role("zookeeper")


@pytest.mark.parametrize("name, state", [("kill-txn-coordinator", "exited"), ("pause-txn-coordinator", "paused"),
                                         ("pause-txn-coordinator", "paused"), ("kill-group-coordinator", "exited"),
                                         ("pause-group-coordinator", "paused")])
def test_a_coordinator_fault_hits_the_leader_of_its_keys_partition_and_nothing_else(monkeypatch, name, state):
    """No cluster: the metadata is made so that only the right partition's leader is kafka3
    (tests/nemesis/test_fault_targets.py proves the same against Kafka's FindCoordinator)."""
    monkeypatch.setattr(targets, "admin_client", lambda _servers: SimpleNamespace(
        list_topics=lambda topic=None, timeout=None: _Metadata()))
    cluster = _CoordinatedCluster(brokers=3)
    nemesis = fault_factory(name)({"target": {"key": "hello"}})
    nemesis.setup(cluster)
    for seed in range(6):  # a random pick would hit another broker with some of these seeds
        done = nemesis.invoke({"f": "start", "fault": name, "seed": seed})
        assert done["value"]["nodes"] == ["kafka3"] and done["value"]["partition"] == 22
        assert {n.name: n.state for n in cluster.nodes if n.state != "running"} == {"kafka3": state}
        nemesis.invoke({"f": "stop", "fault": name})
        assert all(n.state == "running" for n in cluster.nodes)


@pytest.mark.parametrize("name", ["isolate-txn-coordinator", "isolate-group-coordinator"])
def test_an_isolating_coordinator_fault_cuts_the_leader_of_its_keys_partition_from_everyone(monkeypatch, name):
    monkeypatch.setattr(targets, "admin_client", lambda _servers: SimpleNamespace(
        list_topics=lambda topic=None, timeout=None: _Metadata()))
    applied = []
    monkeypatch.setattr(partition.Firewall, "apply", lambda self, graph: applied.append(graph))
    cluster = _CoordinatedCluster(brokers=3)
    nemesis = fault_factory(name)({"target": {"key": "hello"}})  # the option refines the pick, not replaces it
    nemesis.setup(cluster)
    for seed in range(6):
        done = nemesis.invoke({"f": "start", "fault": name, "seed": seed})
        assert done["value"]["nodes"] == ["kafka3"]
        assert topologies.components(applied[-1]) == [["kafka3"], ["kafka1", "kafka2", "zk1"]]


def _groups(*listed: tuple[str, str]):
    """A ListConsumerGroups answer: (group id, state name) each."""
    valid = [SimpleNamespace(group_id=g, state=SimpleNamespace(name=s)) for g, s in listed]
    return lambda request_timeout=None: SimpleNamespace(result=lambda timeout=None: SimpleNamespace(valid=valid))


@pytest.mark.parametrize("name", ["kill-group-coordinator", "pause-group-coordinator"])
def test_a_group_fault_without_a_key_hits_the_coordinator_of_a_group_with_members(monkeypatch, name):
    """Of the groups the brokers list, only "hello" has members (subscribed consumers): its
    coordinator (kafka3) is hit, whatever the seed; the empty group's is never."""
    monkeypatch.setattr(targets, "admin_client", lambda _servers: SimpleNamespace(
        list_topics=lambda topic=None, timeout=None: _Metadata(),
        list_consumer_groups=_groups(("hello", "STABLE"), ("ordeal-group-c1", "EMPTY"))))
    cluster = _CoordinatedCluster(brokers=3)
    nemesis = fault_factory(name)({})
    nemesis.setup(cluster)
    for seed in range(6):
        done = nemesis.invoke({"f": "start", "fault": name, "seed": seed})
        assert done["value"]["key"] == "hello" and done["value"]["nodes"] == ["kafka3"], done
        nemesis.invoke({"f": "stop", "fault": name})
