"""A KRaft cluster of Kafka 4.4.0 (3 dedicated controllers, 3 brokers) boots formatted and
healthy, and its own faults do what they say: the active controller is read live and moves
when it dies, a quorum cut leaves no leader until healed, a broker cut from the controllers
is fenced and comes back, and a leaderless partition is elected explicitly when unclean
election is switched on."""
from __future__ import annotations

import random
import time
from pathlib import Path

import pytest
from confluent_kafka.admin import NewTopic

from clusters.cluster import Cluster
from clusters.health import admin_client
from clusters.kafka_topics import create_topics
from clusters.smoke import produce, read_partition
from ground.variant import parse_variant
from tests.clusters.conftest import labelled_objects
from tests.support import holds, until

pytestmark = pytest.mark.cluster

KRAFT_44 = {"name": "kraft-test", "description": "3 controllers + 3 brokers, Kafka 4.4.0",
            "cluster": {"controllers": 3, "brokers": 3, "osns": 0},
            "kafka": {"version": "4.4.0", "mode": "kraft", "replication_factor": 3, "min_insync_replicas": 2}}


@pytest.fixture(scope="module")
def kraft(docker_client):
    cluster = Cluster.up(parse_variant(KRAFT_44, "test_kraft.py"), client=docker_client)
    yield cluster
    cluster.down()
    assert labelled_objects(docker_client, cluster.run) == [], "teardown left objects behind"


def listed(cluster: Cluster) -> set[int] | None:
    """The broker ids in the metadata (KRaft lists only unfenced brokers); None while no
    broker answers."""
    try:
        return set(admin_client(cluster.bootstrap_servers()).list_topics(timeout=10).brokers)
    except Exception:  # noqa: BLE001 - asked again
        return None


def test_kraft_boots_formatted_controllers_and_brokers_with_a_quorum_leader(kraft: Cluster) -> None:
    assert [n.name for n in kraft.controllers] == ["controller1", "controller2", "controller3"]
    assert [n.name for n in kraft.brokers] == ["kafka1", "kafka2", "kafka3"] and not kraft.zookeepers
    assert kraft.controller() in kraft.controllers
    assert listed(kraft) == {1, 2, 3}
    cluster_id = kraft.controllers[0].container.attrs["Config"]["Env"]
    cluster_id = next(e.split("=", 1)[1] for e in cluster_id if e.startswith("ORDEAL_CLUSTER_ID="))
    for node in [*kraft.controllers, *kraft.brokers]:
        meta = (node.read_file("/var/lib/kafka/data/meta.properties") or b"").decode()
        assert f"cluster.id={cluster_id}" in meta, (node.name, meta)
        status = Path(f"/proc/{node.pid}/status").read_text()
        assert next(line for line in status.splitlines() if line.startswith("Uid:")).split()[1:] == ["1000"] * 4
    assert kraft.status()["kafka"] == {"version": "4.4.0", "mode": "kraft"}


def test_acknowledged_writes_survive_a_sigkill_of_the_active_controller(kraft: Cluster) -> None:
    create_topics(kraft.bootstrap_servers(), [NewTopic("t-kraft", 1, 3)])
    first = produce(kraft, "t-kraft", list(range(300)))
    active = kraft.controller()
    assert active is not None
    active.kill()
    try:
        until(lambda: (c := kraft.controller()) is not None and c != active and c, 20, step=0.25,
              what=f"another controller to take over from {active.name}")
        second = produce(kraft, "t-kraft", list(range(300, 600)))
    finally:
        active.start()
    assert len(first) + len(second) == 600
    assert read_partition(kraft, "t-kraft", 0, 600) == list(range(600))
    # The restarted controller follows the new leader again.
    until(lambda: all(c.read_file("/var/lib/kafka/data/__cluster_metadata-0/quorum-state")
                      for c in kraft.controllers) and kraft.controller() is not None, 30, step=0.25,
          what="every controller's quorum state (the restarted one's too) and an active controller")


def test_controller_quorum_loss_leaves_no_active_controller_until_healed(kraft: Cluster) -> None:
    from nemesis.registry import fault_factory

    fault = fault_factory("controller-quorum-loss")({})
    fault.setup(kraft)
    started = fault.start(random.Random(1))
    try:
        assert len(started["value"]["nodes"]) == 2
        until(lambda: kraft.controller() is None, 20, step=0.25, what="no active controller with 2 of 3 cut off")
    finally:
        healed = fault.stop()
    assert healed["value"]["connected"]
    until(lambda: kraft.controller() is not None, 30, step=0.25, what="an active controller after the heal")


def test_a_broker_cut_from_the_controllers_is_fenced_and_rejoins_after_the_heal(kraft: Cluster) -> None:
    from nemesis.registry import fault_factory

    fault = fault_factory("isolate-broker-from-controllers")({})
    fault.setup(kraft)
    started = fault.start(random.Random(2))
    victim = started["value"]["nodes"][0]
    assert {tuple(sorted(link)) for link in started["value"]["cut"]} == \
        {tuple(sorted((victim, c.name))) for c in kraft.controllers}
    healed = fault.stop()["value"]
    assert healed["fenced"] is True and healed["fenced_after"] <= 20, healed
    assert healed["unfenced_after_heal"] is not None, healed
    assert int(victim[len("kafka"):]) in listed(kraft)


def test_a_leaderless_partition_is_elected_explicitly_when_unclean_election_is_switched_on(kraft: Cluster) -> None:
    """RF 2 on kafka1 (leader) and kafka2, min ISR 1: kafka2 dies and leaves the ISR, kafka1
    acknowledges alone, then dies too; kafka2 returns out of sync and the partition stays
    leaderless (unclean election off) until the toggle switches it on and asks for an
    UNCLEAN election, which elects kafka2 and loses what kafka1 acknowledged alone."""
    from nemesis.registry import fault_factory

    topic = "t-unclean"
    admin = admin_client(kraft.bootstrap_servers())
    admin.create_topics([NewTopic(topic, num_partitions=1, replica_assignment=[[1, 2]], config={"min.insync.replicas": "1"})],
                        request_timeout=30)[topic].result(timeout=31)
    until(lambda: kraft.leader_of(topic) is not None, 30, step=0.25, what=f"a leader of {topic}")
    assert len(produce(kraft, topic, list(range(10)))) == 10
    one, two = kraft.node("kafka1"), kraft.node("kafka2")
    two.kill()
    try:
        until(lambda: 2 not in (listed(kraft) or {2}), 20, step=0.25, what="kafka2 to be fenced")
        alone = produce(kraft, topic, list(range(10, 20)))
        assert len(alone) == 10
        one.kill()
        until(lambda: 1 not in (listed(kraft) or {1}), 20, step=0.25, what="kafka1 to be fenced")
        two.start()
        until(lambda: 2 in (listed(kraft) or ()), 40, step=0.25, what="kafka2 to come back")
        # The controller elects when a replica's broker is unfenced, which has happened: an
        # election of kafka2 would show now; the watch gives a late one 5 s to show.
        holds(lambda: kraft.leader_of(topic) is None, 5, step=0.25,
              what=f"no leader of {topic} (an out-of-sync replica elected with unclean election off)")
        toggle = fault_factory("unclean-toggle")({"topics": [topic]})
        toggle.setup(kraft)
        switched = toggle.start(random.Random(3))["value"]
        try:
            assert switched["nodes"] == [] and switched["read_back"] == {topic: True}
            assert switched["elections"] == {f"{topic}/0": "elected"}, switched
            elected = until(lambda: kraft.leader_of(topic), 15, step=0.25,
                            what=f"a leader of {topic} after the unclean election")
            assert elected.name == "kafka2"
            # What kafka1 acknowledged alone (10..19) is gone.
            assert read_partition(kraft, topic, 0, 20, timeout=8) == list(range(10))
        finally:
            toggle.stop()
    finally:
        for node in (one, two):
            node.start()
        until(lambda: listed(kraft) == {1, 2, 3}, 40, step=0.25, what="every broker back and unfenced")


def test_an_aborted_and_a_committed_txn_are_read_back_from_every_brokers_segment_files(kraft: Cluster,
                                                                                       tmp_path: Path) -> None:
    """The evidence an invalid run keeps (harness/evidence.py): each replica's files of a
    partition, its batches listed with their producer and the txn markers the broker wrote.
    The 4.4.0 image has no log-dump tool; this reads the files without one."""
    from confluent_kafka import Producer

    from clusters.partition_files import LISTING, capture

    create_topics(kraft.bootstrap_servers(), [NewTopic("t-evidence", 1, 3)])
    producer = Producer({"bootstrap.servers": kraft.bootstrap_servers(), "transactional.id": "evidence"})
    producer.init_transactions(30)
    for value, end in ((b"aborted-1", producer.abort_transaction), (b"committed-2", producer.commit_transaction)):
        producer.begin_transaction()
        producer.produce("t-evidence", value, partition=0)
        assert producer.flush(30) == 0  # on the broker before the txn ends, aborted or not
        end(30)

    def copies() -> list[str] | None:
        dest = tmp_path / f"look-{time.monotonic_ns()}"
        capture(kraft.brokers, [("t-evidence", 0)], dest)
        texts = [(p / LISTING).read_text() for p in sorted(dest.glob("*/t-evidence-0"))]
        return texts if len(texts) == 3 and all("marker COMMIT" in t for t in texts) else None

    found = until(copies, 30, step=0.25, what="every broker's copy to hold both txns and their markers")
    for text in found:
        lines = [line for line in text.splitlines() if not line.startswith("#")]
        kinds = [("aborted-1" in line, "ABORT" in line, "committed-2" in line, "COMMIT" in line) for line in lines]
        assert kinds == [(True, False, False, False), (False, True, False, False),
                         (False, False, True, False), (False, False, False, True)], text
        assert all(" txn " in line for line in lines), text
