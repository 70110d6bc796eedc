"""Broadcast over gRPC: each refusal has its status; SUCCESS means the log acknowledged."""
import json
import urllib.error
import urllib.request

import pytest

from osn.chain import regular_message
from fabric.client import DeliverFailed
from fabric.envelopes import make_envelope
from osn.envelopes import tx_label_of
from fabric.identity import MspIdentity, NamedIdentity
from osn.wire.common import common_pb2
from osn.wire.orderer import kafka_pb2
from tests.orderer.chain_fixtures import eventually
from tests.orderer.msp_fixture import make_msp_dir
from tests.orderer.osn_fixture import running_osn


@pytest.fixture
def node(tmp_path):
    with running_osn(tmp_path, writers={"ch0": ["alice"], "ch1": ["*"]}) as running:
        yield running


ALICE, MALLORY = NamedIdentity("alice"), NamedIdentity("mallory")


def test_success_only_after_the_envelope_is_in_the_log(node):
    sent = make_envelope("ch0", ALICE, label="tx-1")
    assert node.client.broadcast_envelope(node.address, sent) == "SUCCESS"
    assert regular_message(sent.SerializeToString()) in node.logs["ch0"].values()


def test_broadcast_labels_the_envelope_it_sends(node):
    assert node.client.broadcast(node.address, "ch0", "tx-label") == "SUCCESS"
    message = kafka_pb2.KafkaMessage.FromString(node.logs["ch0"].values()[-1])
    assert tx_label_of(message.regular.payload) == "tx-label"


def test_malformed_envelope_is_bad_request(node):
    garbage = common_pb2.Envelope(payload=b"\xff\xff\xff")
    assert node.client.broadcast_envelope(node.address, garbage) == "BAD_REQUEST"


def test_envelope_over_absolute_max_bytes_is_bad_request(node):
    assert node.client.broadcast(node.address, "ch0", "tx-big", data=b"x" * 5000) == "BAD_REQUEST"


def test_creator_not_among_the_channel_writers_is_forbidden(node):
    assert node.client.broadcast(node.address, "ch0", "tx-2", identity=MALLORY) == "FORBIDDEN"


def test_wildcard_writers_let_anyone_write(node):
    assert node.client.broadcast(node.address, "ch1", "tx-3", identity=MALLORY) == "SUCCESS"


def test_the_model_takes_an_msp_signed_envelope_with_the_msp_id_as_its_creator(node, tmp_path):
    identity = MspIdentity.load("Org1MSP", make_msp_dir(tmp_path)[0])
    assert node.client.broadcast(node.address, "ch1", "tx-msp", identity=identity) == "SUCCESS"
    status = node.client.broadcast(node.address, "ch0", "tx-msp", identity=identity)
    assert status == "FORBIDDEN" and "Org1MSP" in status.info


def test_unknown_channel_is_not_found(node):
    assert node.client.broadcast(node.address, "nope", "tx-4") == "NOT_FOUND"


def test_refused_produce_is_service_unavailable_and_definite(node):
    node.logs["ch0"].refusing = "NOT_ENOUGH_REPLICAS"
    status = node.client.broadcast(node.address, "ch0", "tx-5")
    assert status == "SERVICE_UNAVAILABLE" and not status.indeterminate
    assert "NOT_ENOUGH_REPLICAS" in status.info


def test_failure_reported_after_the_append_is_service_unavailable_but_indeterminate(node):
    node.logs["ch0"].refusing = "NOT_ENOUGH_REPLICAS_AFTER_APPEND"
    node.logs["ch0"].append_then_fail = True
    status = node.client.broadcast(node.address, "ch0", "tx-7")
    assert status == "SERVICE_UNAVAILABLE" and status.indeterminate


def test_chain_not_started_is_service_unavailable(tmp_path):
    with running_osn(tmp_path, refusing="BROKER_NOT_AVAILABLE") as node:
        assert node.client.broadcast(node.address, "ch0", "tx-6") == "SERVICE_UNAVAILABLE"


def test_a_chain_that_lost_its_position_halts_yet_broadcast_answers_success_as_fabrics_does(node):
    """The partition loses what the chain had read (an unclean election): the chain halts
    and refuses strict readers, but Fabric 1.4.12's enqueue does not look at the consenter's
    errors, so the envelope reaches Kafka, Broadcast answers SUCCESS, and no block holds it."""
    chain = node.osn.registrar.chains["ch0"]
    height = chain.ledger.height
    for i in range(2):
        assert node.client.broadcast(node.address, "ch0", f"tx-9-{i}") == "SUCCESS"
    eventually(lambda: chain.ledger.height == height + 1)
    node.logs["ch0"].truncate(1)
    eventually(lambda: chain.halted is not None)
    assert chain.errored and "past the log's end" in chain.halted
    assert node.client.broadcast(node.address, "ch0", "tx-9-2") == "SUCCESS"
    with pytest.raises(DeliverFailed, match="SERVICE_UNAVAILABLE"):
        node.client.deliver(node.address, "ch0", 0, 0, best_effort=False)
    assert chain.ledger.height == height + 1


def test_healthz_is_ok_once_every_chain_started(node):
    url = f"http://127.0.0.1:{node.osn.operations.port}/healthz"
    with urllib.request.urlopen(url, timeout=5) as answer:
        assert json.load(answer) == {"status": "OK"}


def test_healthz_is_unavailable_while_a_chain_has_not_started(tmp_path):
    with running_osn(tmp_path, refusing="BROKER_NOT_AVAILABLE") as node:
        url = f"http://127.0.0.1:{node.osn.operations.port}/healthz"
        with pytest.raises(urllib.error.HTTPError) as answer:
            urllib.request.urlopen(url, timeout=5)
        assert answer.value.code == 503


def test_one_stream_gets_one_answer_per_envelope_in_order(node):
    envelopes = [make_envelope("ch0", ALICE, label="tx-a"), common_pb2.Envelope(payload=b"\xff"),
                 make_envelope("ch0", MALLORY, label="tx-b")]
    stub = node.client._stub(node.address)
    answers = [common_pb2.Status.Name(r.status) for r in stub.Broadcast(iter(envelopes), timeout=10)]
    assert answers == ["SUCCESS", "BAD_REQUEST", "FORBIDDEN"]


def _envelope_with_payload_bytes(size: int) -> common_pb2.Envelope:
    data = b""
    while len(make_envelope("ch1", ALICE, data, label="tx-edge").payload) < size:
        data += b"x"
    envelope = make_envelope("ch1", ALICE, data, label="tx-edge")
    assert len(envelope.payload) == size
    return envelope


def test_message_of_exactly_absolute_max_bytes_is_accepted_and_one_more_is_not(node):
    assert node.client.broadcast_envelope(node.address, _envelope_with_payload_bytes(4096)) == "SUCCESS"
    assert node.client.broadcast_envelope(node.address, _envelope_with_payload_bytes(4097)) == "BAD_REQUEST"


@pytest.mark.parametrize("kind", [common_pb2.CONFIG_UPDATE, common_pb2.CONFIG])
def test_a_config_message_is_bad_request_and_never_reaches_the_log(node, kind):
    """The model keeps no channel config: ordering a config update as a tx would put in a
    block what Fabric's orderer would validate, apply and order alone."""
    sent = make_envelope("ch1", ALICE, b"update", label="cfg-1", header_type=kind)
    before = len(node.logs["ch1"].values())
    assert node.client.broadcast_envelope(node.address, sent) == "BAD_REQUEST"
    assert len(node.logs["ch1"].values()) == before
