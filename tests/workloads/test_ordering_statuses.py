"""What an OSN's Broadcast answer makes of a broadcast op, against an OSN served in-process
over in-memory logs (tests/orderer/osn_fixture.py): no Kafka, no Docker."""
from __future__ import annotations


import pytest

from fabric.identity import NamedIdentity
from ground.variant import load_variant
from ground.op import FAIL, INFO, OK
from tests.orderer.osn_fixture import running_osn
from tests.support import OsnAt
from workloads.registry import workload_factory

VARIANT = load_variant("fabric-recommended")


@pytest.fixture
def osn(tmp_path):
    # The workload's clients broadcast as creator "client"; only "alice" may write to ch1.
    with running_osn(tmp_path, writers={"ch1": ["alice"]}) as running:
        yield running


def client_for(address: str):
    w = workload_factory("ordering")({"broadcast_timeout": 2, "deliver_timeout": 2, "final_deliver_timeout": 3,
                                      "settle": 0.3}, VARIANT)
    return w.client.open(OsnAt(address, NamedIdentity("client")), 0)


def broadcast(client, channel: str, tx: str):
    return client.invoke({"process": 0, "f": "broadcast", "value": {"channel": channel, "osn": "osn1", "tx": tx}})


def test_an_ordered_broadcast_is_ok_with_status_success_and_delivered(osn):
    client = client_for(osn.address)
    try:
        answer = broadcast(client, "ch0", "tx-a")
        assert answer["type"] == OK and answer["value"] == {"channel": "ch0", "osn": "osn1", "tx": "tx-a",
                                                            "status": "SUCCESS"}
        broadcast(client, "ch0", "tx-b")  # max_message_count=2: the block is cut
        final = client.invoke({"process": 0, "f": "deliver",
                               "value": {"channel": "ch0", "osn": "osn1", "from": 0, "final": True}})
        assert final["type"] == OK and set(final["value"]) == {"channel", "osn", "blocks"}
        assert [tx for b in final["value"]["blocks"] for tx in b["txs"]] == ["tx-a", "tx-b"]
    finally:
        client.close()


def test_a_forbidden_broadcast_fails(osn):
    client = client_for(osn.address)
    try:
        answer = broadcast(client, "ch1", "tx-c")
        assert (answer["type"], answer["error"]) == (FAIL, "forbidden")
    finally:
        client.close()


def test_service_unavailable_before_kafka_fails_and_after_a_maybe_append_is_info(osn):
    client = client_for(osn.address)
    try:
        osn.logs["ch0"].refusing = "NOT_ENOUGH_REPLICAS"
        assert (broadcast(client, "ch0", "tx-d")["type"], broadcast(client, "ch0", "tx-e")["error"]) == (
            FAIL, "service-unavailable")
        osn.logs["ch0"].append_then_fail = True  # appended, then the produce reports an error
        answer = broadcast(client, "ch0", "tx-f")
        assert (answer["type"], answer["error"]) == (INFO, "service-unavailable")
    finally:
        client.close()


def test_no_answer_from_the_osn_is_info_and_a_failed_deliver_is_fail():
    client = client_for("127.0.0.1:1")
    try:
        assert broadcast(client, "ch0", "tx-g")["type"] == INFO
        deliver = client.invoke({"process": 0, "f": "deliver", "value": {"channel": "ch0", "osn": "osn1", "from": 0}})
        assert deliver["type"] == FAIL
    finally:
        client.close()


def test_a_final_deliver_waits_for_the_block_of_its_channels_acknowledged_final_broadcast(osn):
    """SUCCESS means the tx reached the log, not that its block is cut: a final Deliver that
    stopped after `settle` quiet seconds could miss that block (CI saw an OSN one block
    short, lagging-osn). The fixture cuts only at 2 txs: the nudge's block comes with a
    second tx, sent 1 s (over 3 settle periods) after the final Deliver began."""
    import threading
    import time

    client, other = client_for(osn.address), client_for(osn.address)
    try:
        nudge = client.invoke({"process": 0, "f": "broadcast",
                               "value": {"channel": "ch0", "osn": "osn1", "tx": "tx-nudge", "final": True}})
        assert nudge["type"] == OK
        later = threading.Timer(1.0, lambda: broadcast(other, "ch0", "tx-later"))
        later.start()
        began = time.monotonic()
        final = client.invoke({"process": 0, "f": "deliver",
                               "value": {"channel": "ch0", "osn": "osn1", "from": 0, "final": True}})
        later.join()
        assert final["type"] == OK and time.monotonic() - began >= 1.0
        assert [tx for b in final["value"]["blocks"] for tx in b["txs"]] == ["tx-nudge", "tx-later"]
    finally:
        client.close()
        other.close()


def test_a_final_deliver_of_a_halted_chain_is_incomplete_and_says_the_chain_is_errored(osn):
    """The channel's log loses what the chain had read (an unclean election): the chain halts
    for good, yet Broadcast answers SUCCESS, as Fabric 1.4.12's does. The final Deliver waits
    for the nudge's block, which never comes, and then asks once with a strict read, which
    the errored chain refuses: the checker can say why the channel was not judged. A final
    Deliver cut short on a healthy chain does not say so."""
    import time

    client = client_for(osn.address)
    chain = osn.osn.registrar.chains["ch0"]
    height = chain.ledger.height
    try:
        assert [broadcast(client, "ch0", f"tx-{i}")["type"] for i in range(2)] == [OK, OK]
        deadline = time.monotonic() + 5
        while chain.ledger.height == height and time.monotonic() < deadline:  # the two txs' block
            time.sleep(0.05)
        final = {"process": 0, "f": "deliver", "value": {"channel": "ch1", "osn": "osn1", "from": 0, "final": True}}
        client.invoke({"process": 0, "f": "broadcast",  # ch1: only alice may write, so no block comes
                       "value": {"channel": "ch1", "osn": "osn1", "tx": "tx-refused", "final": True}})
        healthy = client.invoke(final)
        osn.logs["ch0"].truncate(1)
        deadline = time.monotonic() + 5
        while chain.halted is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert chain.errored
        nudge = client.invoke({"process": 0, "f": "broadcast",
                               "value": {"channel": "ch0", "osn": "osn1", "tx": "tx-nudge", "final": True}})
        halted = client.invoke({**final, "value": {**final["value"], "channel": "ch0"}})
    finally:
        client.close()
    assert (healthy["type"], "errored" in healthy["value"]) == (OK, False)
    assert nudge["type"] == OK and nudge["value"]["status"] == "SUCCESS"
    assert (halted["type"], halted["error"], halted["value"]["errored"]) == (INFO, "incomplete", True)
    assert [tx for b in halted["value"]["blocks"] for tx in b["txs"]] == ["tx-0", "tx-1"]


def broadcast_async(client, channel: str, tx: str, n: int = 1) -> list[dict]:
    """`n` broadcasts started at once (in_flight above 1); their completions, once all came."""
    import threading

    answers, lock, all_in = [], threading.Lock(), threading.Event()

    def done(answer):
        with lock:
            answers.append(answer)
            if len(answers) == n:
                all_in.set()

    for i in range(n):
        client.invoke_async({"process": i, "f": "broadcast",
                             "value": {"channel": channel, "osn": "osn1", "tx": f"{tx}-{i}"}}, done)
    assert all_in.wait(30), f"{len(answers)} of {n} broadcasts answered"
    return answers


def test_broadcasts_started_at_once_are_each_answered_as_a_blocking_one_would_be_and_all_ordered(osn):
    client = client_for(osn.address)
    try:
        answers = broadcast_async(client, "ch0", "tx-many", 40)
        assert {a["type"] for a in answers} == {OK} and {a["value"]["status"] for a in answers} == {"SUCCESS"}
        assert (broadcast_async(client, "ch1", "tx-no")[0]["error"]) == "forbidden"
        final = client.invoke({"process": 0, "f": "deliver",
                               "value": {"channel": "ch0", "osn": "osn1", "from": 0, "final": True}})
        assert sorted(tx for b in final["value"]["blocks"] for tx in b["txs"]) == sorted(
            a["value"]["tx"] for a in answers)
    finally:
        client.close()


def test_a_started_broadcast_without_an_answer_is_info_and_one_started_after_close_fails():
    client = client_for("127.0.0.1:1")
    try:
        answer = broadcast_async(client, "ch0", "tx-lost")[0]
        assert answer["type"] == INFO and answer["error"] == "unavailable"
    finally:
        client.close()
    closed = broadcast_async(client, "ch0", "tx-late")[0]
    assert (closed["type"], closed["error"]) == (FAIL, "client-closed")  # never sent


def test_a_broadcaster_closed_from_its_own_answer_stops_without_waiting_on_itself(osn):
    import threading

    from fabric.async_client import AsyncOsnClient

    broadcasts, answered = AsyncOsnClient(NamedIdentity("client")), threading.Event()

    def answer(status):
        broadcasts.close()
        answered.set()

    broadcasts.broadcast(osn.address, "ch0", "tx-close", answer)
    assert answered.wait(10)
    broadcasts._thread.join(10)
    assert not broadcasts._thread.is_alive()


def test_a_followers_first_deliver_reads_only_the_newest_block_and_the_next_overlaps_it_by_one(osn):
    """On a kept cluster a chain holds earlier runs' blocks: a follower that began at block 0
    read them all, past its timeout, on every try."""
    from workloads.ordering import DeliverCursors

    client = client_for(osn.address)
    try:
        for i in range(6):  # max_message_count=2: blocks 0 to 2 (the in-memory chain has no genesis block)
            broadcast(client, "ch0", f"tx-old-{i}")
        osn.client.wait_for_block(osn.address, "ch0", 2, timeout=10)
        cursors = DeliverCursors()
        client.cursors = cursors
        first = cursors.start("ch0", "osn1")
        assert first == "newest"
        read = client.invoke({"process": 0, "f": "deliver", "value": {"channel": "ch0", "osn": "osn1", "from": first}})
        assert [b["number"] for b in read["value"]["blocks"]] == [2]
        broadcast(client, "ch0", "tx-new-a")
        broadcast(client, "ch0", "tx-new-b")
        osn.client.wait_for_block(osn.address, "ch0", 3, timeout=10)
        again = cursors.start("ch0", "osn1")
        assert again == 2
        read = client.invoke({"process": 0, "f": "deliver", "value": {"channel": "ch0", "osn": "osn1", "from": again}})
        assert [b["number"] for b in read["value"]["blocks"]] == [2, 3]
    finally:
        client.close()


def deliver_async(client, value: dict) -> dict:
    """A deliver started with invoke_async, and its completion once the OSN answered."""
    import threading

    answers, answered = [], threading.Event()
    client.invoke_async({"process": 0, "f": "deliver", "value": value},
                        lambda op: (answers.append(op), answered.set()))
    assert answered.wait(10), "no answer to the deliver"
    return answers[0]


def test_a_started_deliver_reads_what_a_blocking_one_reads_and_moves_the_follower(osn):
    from workloads.ordering import DeliverCursors

    client = client_for(osn.address)
    try:
        assert "deliver" in client.async_fs
        for i in range(4):  # max_message_count=2: blocks 0 and 1
            broadcast(client, "ch0", f"tx-d-{i}")
        osn.client.wait_for_block(osn.address, "ch0", 1, timeout=10)
        client.cursors = DeliverCursors()
        value = {"channel": "ch0", "osn": "osn1", "from": 0}
        started = deliver_async(client, value)
        blocking = client.invoke({"process": 0, "f": "deliver", "value": value})
        assert started["type"] == OK and started["value"] == blocking["value"], (started, blocking)
        assert [b["number"] for b in started["value"]["blocks"]] == [0, 1]
        assert client.cursors.start("ch0", "osn1") == 1
        missing = deliver_async(client, {"channel": "no-such-channel", "osn": "osn1", "from": 0})
        assert missing["type"] == OK and missing["value"]["blocks"] == [], missing  # nothing there yet
    finally:
        client.close()
    late = deliver_async(client, value)
    assert (late["type"], late["error"]) == (FAIL, "client-closed")


def test_a_started_deliver_without_an_answer_fails():
    client = client_for("127.0.0.1:1")
    try:
        answer = deliver_async(client, {"channel": "ch0", "osn": "osn1", "from": 0})
    finally:
        client.close()
    assert answer["type"] == FAIL and answer["error"] == "unavailable", answer
