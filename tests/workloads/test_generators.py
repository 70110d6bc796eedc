"""The workloads' ops, options and final reads as plain data: no cluster needed."""
from __future__ import annotations

import random
from collections import Counter

import pytest
from pydantic import ValidationError

from ground.variant import load_variant
from ground.generator import Context, Pending
from workloads.final_reads import RETRY_AFTER
from workloads.registry import workload_factory

VARIANT = load_variant("fabric-recommended")


def ops(gen, n, threads=(0,)):
    return [gen.op(Context(0, threads[i % len(threads)])) for i in range(n)]


def drain(gen):
    """Every op the generator has before it waits (Pending) or is exhausted."""
    out = []
    while isinstance(op := gen.op(Context(0, 0)), dict):
        out.append(op)
    return out


def test_each_workload_first_asks_for_what_its_client_knows():
    """The registry's names lead to workloads whose first ops are their own: kafka-log's
    consumers assign before they poll, ordering broadcasts and delivers."""
    firsts = {name: {op["f"] for op in ops(workload_factory(name)({}, VARIANT).generator(random.Random(1)), 40,
                                           threads=range(8))
                     if isinstance(op, dict)}
              for name in ("kafka-log", "ordering")}
    assert firsts["kafka-log"] <= {"send", "assign", "poll"} and "send" in firsts["kafka-log"]
    assert firsts["ordering"] <= {"broadcast", "deliver", "config-update"} and "broadcast" in firsts["ordering"]


def test_kafka_log_sends_unique_values_per_topic_with_a_key_naming_a_partition():
    w = workload_factory("kafka-log")({"send_fraction": 1.0}, VARIANT)
    sends = ops(w.generator(random.Random(1)), 600, threads=(0, 1, 2))
    assert {op["f"] for op in sends} == {"send"}
    values = Counter((op["value"]["topic"], op["value"]["value"]) for op in sends)
    assert max(values.values()) == 1
    assert len({op["value"]["topic"] for op in sends}) == 2
    assert {op["value"]["key"] for op in sends} == {"k0", "k1", "k2"}
    assert set(sends[0]["value"]) == {"topic", "key", "value"}


def test_each_consumer_starts_with_an_assign_from_the_beginning_then_polls():
    w = workload_factory("kafka-log")({"send_fraction": 0.0, "reassign_probability": 0.0}, VARIANT)
    gen = w.generator(random.Random(2))
    first = {t: gen.op(Context(0, t)) for t in (0, 1)}
    for t, op in first.items():
        assert op["f"] == "assign" and op["value"]["consumer"] == f"c{t}" and op["value"]["seek"] == "beginning"
        assert op["value"]["partitions"] and all(len(tp) == 2 for tp in op["value"]["partitions"])
    assert ops(gen, 5, threads=(1,)) == [{"f": "poll", "value": {"consumer": "c1"}}] * 5


def test_the_same_seed_gives_the_same_ops():
    w = workload_factory("kafka-log")({}, VARIANT)
    assert ops(w.generator(random.Random(3)), 200) == ops(w.generator(random.Random(3)), 200)


def test_kafka_log_final_reads_cover_every_topic_partition_once():
    w = workload_factory("kafka-log")({"topics": 3, "partitions": 4}, VARIANT)
    finals = drain(w.final_generator())
    assert {op["f"] for op in finals} == {"final-read"}
    assert len({(op["value"]["topic"], op["value"]["partition"]) for op in finals}) == len(finals) == 12


def test_two_workload_instances_never_share_topics():
    # A run on a kept cluster must not read an earlier run's records.
    a, b = (drain(workload_factory("kafka-log")({}, VARIANT).final_generator()) for _ in range(2))
    assert not {op["value"]["topic"] for op in a} & {op["value"]["topic"] for op in b}


@pytest.mark.parametrize("options", [{"topics": 0}, {"partitions": -1}, {"send_fraction": 2},
                                     {"bogus": 1}, {"group": ""}, {"group_protocol": "consumer"},
                                     {"group": "g", "group_protocol": "eager"}])
def test_bad_kafka_log_options_are_refused(options):
    with pytest.raises(ValidationError):
        workload_factory("kafka-log")(options, VARIANT)


@pytest.mark.parametrize("workload", ["kafka-log", "kafka-txn"])
def test_the_consumer_group_protocol_on_kafka_3_brokers_is_refused_in_one_line(workload):
    with pytest.raises(ValueError, match=r"^group_protocol = 'consumer' \(KIP-848\) needs Kafka 4.x brokers; "
                                         r"variant fabric-recommended runs 3\."):
        workload_factory(workload)({"group": "g", "group_protocol": "consumer"}, VARIANT)


def test_in_a_group_a_fresh_consumer_subscribes_then_polls_and_commits():
    gen = workload_factory("kafka-log")({"group": "g", "send_fraction": 0.0}, VARIANT).generator(random.Random(2))
    ops = [gen.op(Context(0, i % 2)) for i in range(400)]
    assert [op["f"] for op in ops[:2]] == ["subscribe", "subscribe"] and len(ops[0]["value"]["topics"]) == 2
    fs = Counter(op["f"] for op in ops[2:])
    assert set(fs) == {"poll", "commit"} and 0.1 < fs["commit"] / 398 < 0.3, fs


def test_ordering_broadcasts_unique_tx_ids_to_every_channel_and_osn():
    w = workload_factory("ordering")({"broadcast_fraction": 1.0}, VARIANT)
    casts = ops(w.generator(random.Random(4)), 300)
    assert {op["f"] for op in casts} == {"broadcast"}
    assert len({op["value"]["tx"] for op in casts}) == 300
    assert {op["value"]["channel"] for op in casts} == {"ch0", "ch1"}
    assert {op["value"]["osn"] for op in casts} == {"osn1", "osn2", "osn3"}


def test_ordering_delivers_start_at_the_newest_block_before_anything_was_read():
    w = workload_factory("ordering")({"broadcast_fraction": 0.0}, VARIANT)
    assert all(op["f"] == "deliver" and op["value"]["from"] == "newest" for op in ops(w.generator(random.Random(5)), 20))


def test_ordering_final_reads_nudge_each_channel_once_then_deliver_every_channel_from_every_osn_from_block_zero():
    gen = workload_factory("ordering")({}, VARIANT).final_generator()
    nudges = drain(gen)
    assert [(op["f"], op["value"]["channel"], op["value"]["final"]) for op in nudges] == [
        ("broadcast", "ch0", True), ("broadcast", "ch1", True)]
    assert drain(gen) == []  # the delivers wait for the nudges' completions
    gen.completed(nudges[0]["value"], ok=False)  # whatever the outcome: asked once
    assert drain(gen) == []
    gen.completed(nudges[1]["value"], ok=True)
    finals = drain(gen)
    assert {(op["value"]["channel"], op["value"]["osn"]) for op in finals} == {
        (c, o) for c in ("ch0", "ch1") for o in ("osn1", "osn2", "osn3")}
    assert all(op["f"] == "deliver" and op["value"]["from"] == 0 for op in finals)


def test_ordering_refuses_channels_the_variant_does_not_have():
    with pytest.raises(ValueError, match="ch9"):
        workload_factory("ordering")({"channels": ["ch0", "ch9"]}, VARIANT)
    with pytest.raises(ValueError):
        workload_factory("ordering")({}, None)


def test_a_consumer_whose_process_was_replaced_is_assigned_again_after_its_first_failed_poll():
    w = workload_factory("kafka-log")({"send_fraction": 0.0, "reassign_probability": 0.0}, VARIANT)
    gen = w.generator(random.Random(6))
    assert [op["f"] for op in ops(gen, 3)] == ["assign", "poll", "poll"]
    # The successor's client has no consumer yet (the unopened client stands in for it).
    assert w.client.invoke({"process": 6, "f": "poll", "value": {"consumer": "c0"}})["error"] == "unassigned"
    again = ops(gen, 2)
    assert [op["f"] for op in again] == ["assign", "poll"] and again[0]["value"]["seek"] == "beginning"


@pytest.mark.parametrize("workload", ["kafka-log", "kafka-txn"])
def test_a_new_process_of_a_thread_starts_with_an_assign_from_the_beginning(workload):
    """Its consumer is a new one, with no positions: even when a re-assign without a seek is
    drawn for it, the op says "beginning", as the new consumer does (the checkers judge
    positions across a seek-null assign as kept)."""
    options = {"reassign_probability": 1.0} | ({"send_fraction": 0.0} if workload == "kafka-log" else {})
    w = workload_factory(workload)(options, VARIANT)
    gen = w.generator(random.Random(7))
    first = gen.op(Context(0, 4, process=4))
    assert first["f"] == "assign" and first["value"]["seek"] == "beginning"
    later = [gen.op(Context(0, 4, process=4)) for _ in range(30)]
    assert None in {op["value"]["seek"] for op in later if op["f"] == "assign"}  # the old process keeps positions
    successor = gen.op(Context(0, 4, process=10))
    assert successor["f"] == "assign" and successor["value"]["consumer"] == "c4"
    assert successor["value"]["seek"] == "beginning"


def test_a_final_read_that_was_not_ok_is_asked_again_and_the_phase_ends_when_all_were_ok():
    w = workload_factory("kafka-log")({"topics": 1, "partitions": 2}, VARIANT)
    final = w.final_generator()
    first = drain(final)
    assert len(first) == 2 and isinstance(final.op(Context(0, 0)), Pending)  # both out: wait for them
    w.client.state.finals.completed(first[0]["value"], ok=True)
    w.client.state.finals.completed(first[1]["value"], ok=False)
    assert isinstance(final.op(Context(0, 0)), Pending)  # not at once: a read failing at once must not spin
    assert final.op(Context(RETRY_AFTER, 0)) == first[1]
    w.client.state.finals.completed(first[1]["value"], ok=True)
    assert final.op(Context(0, 0)) is None


def test_a_final_read_whose_call_hangs_is_asked_again_once_it_is_stale():
    from ground.generator import NS

    w = workload_factory("kafka-log")({"topics": 1, "partitions": 1, "final_read_timeout": 5}, VARIANT)
    final = w.final_generator()
    (read,) = drain(final)
    assert isinstance(final.op(Context(9 * NS, 0)), Pending)  # 5 s + 5 s not yet over
    assert final.op(Context(11 * NS, 0)) == read
