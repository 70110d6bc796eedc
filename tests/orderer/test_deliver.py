"""Deliver over gRPC, from the OSN's ledger: seek positions, waiting, NOT_FOUND, stop."""
import threading

import pytest

from osn.blocks import header_hash
from fabric.client import DeliverFailed
from fabric.envelopes import make_envelope
from fabric.identity import NamedIdentity
from osn.wire.common import common_pb2
from osn.wire.orderer import ab_pb2
from tests.orderer.chain_fixtures import eventually
from tests.orderer.osn_fixture import running_osn


@pytest.fixture
def node(tmp_path):
    with running_osn(tmp_path, max_message_count=2) as running:
        yield running


def with_blocks(node, n: int) -> None:
    """Broadcast 2n txs to ch0 (two per block) and wait until n blocks are cut."""
    height = node.osn.registrar.chains["ch0"].ledger.height
    for i in range(2 * n):
        assert node.client.broadcast(node.address, "ch0", f"tx-{height}-{i}") == "SUCCESS"
    eventually(lambda: node.osn.registrar.chains["ch0"].ledger.height == height + n)


def seek(node, start: ab_pb2.SeekPosition, stop: ab_pb2.SeekPosition,
         behavior: int = ab_pb2.SeekInfo.BLOCK_UNTIL_READY, channel: str = "ch0") -> list:
    """Raw Deliver: block numbers, then the closing status name."""
    info = ab_pb2.SeekInfo(start=start, stop=stop, behavior=behavior)
    request = make_envelope(channel, NamedIdentity("alice"), info.SerializeToString(), header_type=common_pb2.DELIVER_SEEK_INFO)
    stub = node.client._stub(node.address)
    out = []
    for response in stub.Deliver(iter([request]), timeout=10):
        if response.WhichOneof("Type") == "block":
            out.append(response.block.header.number)
        else:
            out.append(common_pb2.Status.Name(response.status))
    return out


def specified(n: int) -> ab_pb2.SeekPosition:
    return ab_pb2.SeekPosition(specified=ab_pb2.SeekSpecified(number=n))


OLDEST = ab_pb2.SeekPosition(oldest=ab_pb2.SeekOldest())
NEWEST = ab_pb2.SeekPosition(newest=ab_pb2.SeekNewest())


def test_oldest_to_specified_stop_delivers_exactly_that_range(node):
    with_blocks(node, 4)
    assert seek(node, OLDEST, specified(2)) == [0, 1, 2, "SUCCESS"]


def test_newest_to_newest_delivers_the_last_block_only(node):
    with_blocks(node, 3)
    assert seek(node, NEWEST, NEWEST) == [2, "SUCCESS"]


def test_specified_start_to_newest_delivers_up_to_the_height(node):
    with_blocks(node, 3)
    assert seek(node, specified(1), NEWEST) == [1, 2, "SUCCESS"]


def test_block_until_ready_waits_for_a_block_not_yet_cut(node):
    with_blocks(node, 1)
    result = []
    waiter = threading.Thread(target=lambda: result.extend(seek(node, specified(1), specified(1))))
    waiter.start()
    with_blocks(node, 1)
    waiter.join(10)
    assert result == [1, "SUCCESS"]


def test_fail_if_not_ready_at_the_height_is_not_found(node):
    with_blocks(node, 1)
    assert seek(node, specified(1), specified(1), ab_pb2.SeekInfo.FAIL_IF_NOT_READY) == ["NOT_FOUND"]


def test_fail_if_not_ready_stops_with_not_found_where_the_ledger_ends(node):
    with_blocks(node, 2)
    assert seek(node, OLDEST, specified(5), ab_pb2.SeekInfo.FAIL_IF_NOT_READY) == [0, 1, "NOT_FOUND"]


def test_start_beyond_the_height_is_not_found_even_when_waiting(node):
    with_blocks(node, 1)
    assert seek(node, specified(2), specified(2)) == ["NOT_FOUND"]


def test_stop_before_start_is_bad_request(node):
    with_blocks(node, 3)
    assert seek(node, specified(2), specified(1)) == ["BAD_REQUEST"]


def test_unknown_channel_is_not_found(node):
    assert seek(node, OLDEST, NEWEST, channel="nope") == ["NOT_FOUND"]


def test_errored_chain_is_unavailable_to_strict_readers_but_served_best_effort(node):
    with_blocks(node, 1)
    chain = node.osn.registrar.chains["ch0"]
    chain.halted = "TTC from the future"  # as Fabric: a TTC ends the consumer, errorChan stays open
    assert seek(node, OLDEST, specified(0)) == [0, "SUCCESS"]
    chain.halted, chain.errored = "offset out of range", True
    assert seek(node, OLDEST, specified(0)) == ["SERVICE_UNAVAILABLE"]
    assert [b["number"] for b in node.client.deliver(node.address, "ch0", 0, 0, best_effort=True)] == [0]


def test_client_deliver_summarises_blocks_with_tx_ids_hashes_and_offsets(node):
    with_blocks(node, 2)
    one, two = node.client.deliver(node.address, "ch0", 0)
    block = node.osn.registrar.chains["ch0"].ledger.block(1)
    assert two["hash"] == header_hash(block.header).hex()
    assert two["previous_hash"] == one["hash"]
    assert one["txs"] == ["tx-0-0", "tx-0-1"]
    assert one["last_offset"] < two["last_offset"]


def test_client_deliver_up_to_the_height_of_an_empty_ledger_is_empty(node):
    assert node.client.deliver(node.address, "ch1", 0) == []


def test_client_deliver_raises_on_a_refused_request(node):
    with_blocks(node, 3)
    with pytest.raises(DeliverFailed) as failed:
        node.client.deliver(node.address, "ch0", 2, 1)
    assert failed.value.status == "BAD_REQUEST"
