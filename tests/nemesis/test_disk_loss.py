"""disk-loss against a fake cluster: the order of the steps (pause followers, wait for the
ISR, kill, wipe, resume, start), what the op records, and that a failed wipe still leaves
every node running. The wipe itself runs on real clusters (tests/scenarios/test_disk_loss*)."""
from __future__ import annotations

import pytest

from nemesis import disk_loss
from nemesis.registry import fault_factory
from nemesis.targets import PartitionState
from tests.nemesis.test_faults import FakeCluster
from tests.support import FakeNode

EVENTS: list[str] = []


class WipeableNode(FakeNode):
    fail_wipe = False

    def kill(self) -> None:
        EVENTS.append(f"kill {self.name}")
        super().kill()

    def pause(self) -> None:
        EVENTS.append(f"pause {self.name}")
        super().pause()

    def resume(self) -> None:
        EVENTS.append(f"resume {self.name}")
        super().resume()

    def start(self) -> None:
        EVENTS.append(f"start {self.name}")
        super().start()

    def lose_disk(self) -> dict:
        assert not self.alive(), "a disk is lost only while the node is down"
        EVENTS.append(f"wipe {self.name}")
        if self.fail_wipe:
            raise RuntimeError("engine refused")
        return {"/var/lib/kafka": {"volume": f"v-{self.name}", "kib": 12, "entries": {"data": 12}}}


@pytest.fixture
def cluster(monkeypatch: pytest.MonkeyPatch) -> FakeCluster:
    EVENTS.clear()
    c = FakeCluster(brokers=4)
    c.nodes = [WipeableNode(n.name, n.role) for n in c.nodes]
    isr = {"now": ["kafka1", "kafka2", "kafka3"]}

    def state(_cluster, topic: str, partition: int = 0) -> PartitionState:
        # The controller drops paused followers from the ISR.
        isr["now"] = [r for r in isr["now"] if c.node(r).state != "paused"]
        return PartitionState(topic, partition, "kafka1", ["kafka1", "kafka2", "kafka3"], list(isr["now"]))

    monkeypatch.setattr(disk_loss, "partition_state", state)
    monkeypatch.setattr(disk_loss, "data_partitions", lambda _c, _t=None, exclude=(): [("t0", 0)])
    monkeypatch.setattr(disk_loss, "controller", lambda _c: "kafka4")
    monkeypatch.setattr(disk_loss.time, "sleep", lambda _s: None)
    monkeypatch.setattr(disk_loss.DiskLoss, "_serves", lambda self, node: True)
    return c


def test_sole_in_sync_shrinks_the_isr_then_wipes_the_leader_and_restarts_it(cluster: FakeCluster) -> None:
    nem = fault_factory("disk-loss-sole-in-sync")({})
    nem.setup(cluster)
    started = nem.invoke({"f": "start"})
    assert EVENTS == ["pause kafka2", "pause kafka3", "kill kafka1", "wipe kafka1",
                      "resume kafka2", "resume kafka3", "start kafka1"]
    v = started["value"]
    assert started["f"] == "disk-loss" and v["nodes"] == ["kafka1"] and v["isr_before"] == ["kafka1"]
    assert v["wiped"]["/var/lib/kafka"]["volume"] == "v-kafka1" and v["topic"] == "t0"
    healed = nem.invoke({"f": "stop"})
    assert healed["f"] == "heal" and healed["value"]["back"] is True and healed["value"]["back_after_s"] == 0.0
    assert all(n.state == "running" for n in cluster.nodes)


def test_random_disk_loss_kills_wipes_and_starts_one_broker(cluster: FakeCluster) -> None:
    nem = fault_factory("disk-loss")({"seed": 3})
    nem.setup(cluster)
    answer = nem.invoke({"f": "start"})
    victim = answer["value"]["nodes"][0]
    assert victim.startswith("kafka")
    assert EVENTS == [f"kill {victim}", f"wipe {victim}", f"start {victim}"]


def test_a_failed_wipe_still_resumes_and_starts_every_node(cluster: FakeCluster) -> None:
    cluster.node("kafka1").fail_wipe = True
    nem = fault_factory("disk-loss-sole-in-sync")({})
    nem.setup(cluster)
    with pytest.raises(RuntimeError, match="engine refused"):
        nem.invoke({"f": "start"})
    assert all(n.state == "running" for n in cluster.nodes)
    assert nem.heal_all() == []


def test_down_for_keeps_the_node_down_then_starts_it(cluster: FakeCluster, monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []
    monkeypatch.setattr(disk_loss.time, "sleep", slept.append)
    nem = fault_factory("disk-loss")({"down_for": 12, "pick": "leader"})
    nem.setup(cluster)
    answer = nem.invoke({"f": "start"})
    assert answer["value"]["nodes"] == ["kafka1"] and 12 in slept
    assert EVENTS[-1] == "start kafka1"


def test_options_are_checked() -> None:
    with pytest.raises(ValueError):
        fault_factory("disk-loss")({"pick": "isr"})
    with pytest.raises(ValueError):
        fault_factory("disk-loss")({"down_for": -1})


@pytest.mark.parametrize("pick", ["leader", "sole-in-sync"])
def test_a_pick_that_chooses_a_broker_refuses_another_role(pick: str) -> None:
    with pytest.raises(ValueError, match="takes pick 'random'"):
        fault_factory("disk-loss")({"pick": pick, "role": "osn"})


def test_an_osn_loses_its_disk_and_stop_says_how_long_it_took_to_serve_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    EVENTS.clear()
    c = FakeCluster(brokers=3, osns=3)
    c.nodes = [WipeableNode(n.name, n.role) for n in c.nodes]
    answers = iter([False, False, True])
    monkeypatch.setattr(disk_loss.time, "sleep", lambda _s: None)
    monkeypatch.setattr(disk_loss.DiskLoss, "_serves", lambda self, node: next(answers))
    nem = fault_factory("disk-loss")({"role": "osn", "seed": 1})
    nem.setup(c)
    victim = nem.invoke({"f": "start"})["value"]["nodes"][0]
    assert victim.startswith("osn") and EVENTS == [f"kill {victim}", f"wipe {victim}", f"start {victim}"]
    healed = nem.invoke({"f": "stop"})["value"]
    assert healed["back"] is True and healed["nodes"] == [victim] and isinstance(healed["back_after_s"], float)


def test_a_node_that_never_serves_again_is_not_back(cluster: FakeCluster, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(disk_loss.DiskLoss, "_serves", lambda self, node: False)
    nem = fault_factory("disk-loss")({"back_timeout": 0.01})
    nem.setup(cluster)
    nem.invoke({"f": "start"})
    healed = nem.invoke({"f": "stop"})["value"]
    assert healed["back"] is False and healed["back_after_s"] is None
