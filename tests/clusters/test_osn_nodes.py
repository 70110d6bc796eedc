"""The ordering service in containers: 3 of Fabric v1.4.12's orderers on fabric-recommended
agree on every block, order every tx they acknowledged, and catch up after a SIGKILL or a
pause under load; their ledgers survive a broker's disk loss, and an OSN whose own ledger
is wiped rebuilds it from Kafka."""
from __future__ import annotations

import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from clusters.cluster import Cluster
from fabric.material import SYSTEM_CHANNEL
from fabric.client import OsnClient
from nemesis.registry import fault_factory
from nemesis.targets import partition_state
from tests.support import until

pytestmark = pytest.mark.cluster
CHANNELS = ("ch0", "ch1")


class Load:
    """Broadcasts unique tx ids to random OSNs from a few threads until stopped."""

    def __init__(self, cluster: Cluster, prefix: str, osns: list[str] | None = None, seed: int = 7):
        self.addresses = cluster.osn_addresses()
        self.targets = osns or sorted(self.addresses)
        self.prefix = prefix
        self.client = OsnClient(cluster.client_identity())
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.counter = 0
        self.success: dict[str, set[str]] = {c: set() for c in CHANNELS}
        self.stopped = threading.Event()

    def _next(self) -> tuple[str, str, str]:
        with self.lock:
            self.counter += 1
            return (f"{self.prefix}-{self.counter}", self.rng.choice(CHANNELS), self.rng.choice(self.targets))

    def one(self) -> None:
        tx, channel, osn = self._next()
        try:
            status = self.client.broadcast(self.addresses[osn], channel, tx, timeout=10.0)
        except Exception:
            return
        if status == "SUCCESS":
            with self.lock:
                self.success[channel].add(tx)

    def run(self, count: int, threads: int = 8) -> None:
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(lambda _: self.one(), range(count)))

    def run_until_stopped(self, threads: int = 4) -> list[threading.Thread]:
        def loop() -> None:
            while not self.stopped.is_set():
                self.one()

        workers = [threading.Thread(target=loop, daemon=True) for _ in range(threads)]
        for w in workers:
            w.start()
        return workers

    def stop(self, workers: list[threading.Thread]) -> None:
        self.stopped.set()
        for w in workers:
            w.join(timeout=30)


def converged_chains(cluster: Cluster, channel: str, expected: set[str], timeout: float = 90.0) -> dict[str, list[dict]]:
    """Every OSN's chain once each holds every expected tx and all have the same height; at
    the timeout, the chains as they are then, for the caller's assertions to tell what differs."""
    client = OsnClient(cluster.client_identity())

    def chains() -> dict[str, list[dict]]:
        return {name: client.deliver(addr, channel, 0) for name, addr in cluster.osn_addresses().items()}

    def converged() -> dict[str, list[dict]] | None:
        now = chains()
        complete = all(expected <= {tx for b in c for tx in b["txs"]} for c in now.values())
        return now if complete and len({len(c) for c in now.values()}) == 1 else None

    try:
        return until(converged, timeout, step=1.0, last=True) or chains()
    finally:
        client.close()


def assert_identical_and_complete(chains: dict[str, list[dict]], expected: set[str]) -> None:
    reference = next(iter(chains.values()))
    for name, chain in chains.items():
        assert [b["hash"] for b in chain] == [b["hash"] for b in reference], f"{name} differs"
        assert [b["number"] for b in chain] == list(range(len(chain)))
        assert expected <= {tx for b in chain for tx in b["txs"]}, f"{name} misses acknowledged txs"


def assert_every_channel_converges(cluster: Cluster, load: Load) -> None:
    for channel in CHANNELS:
        expected = load.success[channel]
        assert_identical_and_complete(converged_chains(cluster, channel, expected), expected)


def test_the_cluster_runs_fabrics_own_orderer(fabric: Cluster) -> None:
    assert fabric.orderer_description() == {"implementation": "fabric-1.4.12", "version": "1.4.12"}
    assert fabric.status()["orderer"]["implementation"] == "fabric-1.4.12"
    image = fabric.osns[0].container.attrs["Config"]["Image"]
    assert image.startswith("ordeal/fabric-orderer:")
    assert fabric.osns[0].container.exec_run("id -u").output.strip() == b"1000"


def test_a_thousand_txs_to_random_real_orderers_are_each_in_exactly_one_place(fabric: Cluster) -> None:
    load = Load(fabric, "once", seed=11)
    load.run(1000)
    assert sum(len(s) for s in load.success.values()) >= 990
    for channel in CHANNELS:
        expected = load.success[channel]
        chains = converged_chains(fabric, channel, expected)
        assert_identical_and_complete(chains, expected)
        places = [tx for b in next(iter(chains.values())) for tx in b["txs"] if tx.startswith(f"{load.prefix}-")]
        assert sorted(places) == sorted(expected), "an acknowledged tx is missing or in two places"


@pytest.mark.nightly  # 50 s of make test; the thousand txs above check the same on every channel
def test_five_thousand_txs_to_random_osns_are_ordered_identically_everywhere(fabric: Cluster) -> None:
    load = Load(fabric, "bulk")
    load.run(5000)
    assert sum(len(s) for s in load.success.values()) >= 4900  # a healthy cluster refuses almost none
    assert_every_channel_converges(fabric, load)


def test_sigkilled_osn_restarts_and_catches_up_to_identical_blocks(fabric: Cluster) -> None:
    victim = fabric.node("osn2")
    load = Load(fabric, "kill", osns=["osn1", "osn3"])
    workers = load.run_until_stopped()
    time.sleep(3)
    victim.kill()
    time.sleep(3)
    victim.start()
    until(lambda: fabric.osn_healthy(victim), 60, step=0.5, what="osn2 to come back healthy")
    time.sleep(2)
    load.stop(workers)
    assert all(load.success.values())
    assert_every_channel_converges(fabric, load)


def test_paused_osn_resumes_and_catches_up_to_identical_blocks(fabric: Cluster) -> None:
    victim = fabric.node("osn3")
    load = Load(fabric, "pause", osns=["osn1", "osn2"])
    workers = load.run_until_stopped()
    time.sleep(2)
    victim.pause()
    assert not fabric.osn_healthy(victim)
    time.sleep(4)
    victim.resume()
    time.sleep(2)
    load.stop(workers)
    assert_every_channel_converges(fabric, load)


def test_osn_restarted_after_the_controller_moved_starts_its_chains(fabric: Cluster) -> None:
    victim = fabric.node("osn1")
    victim.kill()
    controller = fabric.controller()
    assert controller is not None
    controller.kill()
    try:
        until(lambda: (c := fabric.controller()) is not None and c.name != controller.name, 60, step=0.5,
              what=f"a controller other than {controller.name}")
        victim.start()
        until(lambda: fabric.osn_healthy(victim), 60, step=0.5, what="osn1 to start its chains (healthy)")
    finally:
        controller.start()
        victim.start()
    until(lambda: all(fabric.osn_healthy(n) for n in fabric.osns), 60, step=0.5, what="every OSN healthy")


# -- storage faults: the ledgers under a disk loss (issue 16) --------------------------------
# Each test measures what the closing note needs and prints it as one "figures" line (-s).

def heights(cluster: Cluster, client: OsnClient, channel: str, osns: list[str] | None = None) -> dict[str, int]:
    """Each OSN's (or each of `osns`') height of `channel` now (0 where the channel does not
    deliver yet). Ask only live OSNs when timing: a stopped one costs the whole timeout."""
    out = {}
    for name, address in cluster.osn_addresses().items():
        if osns is not None and name not in osns:
            continue
        try:
            newest = client.deliver(address, channel, "newest", timeout=5.0)
        except Exception:  # noqa: BLE001 - restarting, or the chain is not there yet
            newest = []
        out[name] = newest[-1]["number"] + 1 if newest else 0
    return out


@pytest.fixture(scope="module", params=[
    "fabric-recommended",
    # nightly: its boot and disk loss took 100 s of make test; smoke runs the model under disk loss
    pytest.param("fabric-recommended-model", marks=pytest.mark.nightly)])
def either(request: pytest.FixtureRequest, docker_client) -> Cluster:
    """Fabric's own orderer (the folder's cluster), then ordeal's model on its twin variant
    (booted for these tests only)."""
    if request.param == "fabric-recommended":
        yield request.getfixturevalue("fabric")
        return
    from ground.variant import load_variant

    cluster = Cluster.up(load_variant(request.param), client=docker_client)
    try:
        yield cluster
    finally:
        cluster.down()


def isr_size(cluster: Cluster, topic: str) -> int:
    try:
        return len(partition_state(cluster, topic, 0).isr)
    except Exception:  # noqa: BLE001 - the metadata may be unavailable for a moment
        return 0


def acknowledged(load: Load) -> int:
    with load.lock:
        return sum(len(s) for s in load.success.values())


def test_osn_ledgers_survive_the_disk_loss_of_their_channels_leader_broker(either: Cluster) -> None:
    """The broker leading ch0's partition is SIGKILLed, its data volume emptied and started
    at once (the disk-loss fault) while every OSN takes broadcasts: the other in-sync
    replicas hold what was acknowledged, so every OSN's chain stays complete and identical,
    and the OSNs order again through the new leader."""
    cluster = either
    load = Load(cluster, "brokerdisk", seed=16)
    workers = load.run_until_stopped()
    nem = fault_factory("disk-loss")({"pick": "leader", "topic": "ch0", "partition": 0})
    nem.setup(cluster)
    try:
        time.sleep(3)
        at_fault, began = acknowledged(load), time.monotonic()
        lost = nem.invoke({"f": "start"})["value"]
        wiped_s = time.monotonic() - began
        healed = nem.invoke({"f": "stop"})["value"]
        after_heal, back_s = acknowledged(load), time.monotonic() - began
        ordering_again = until(lambda: acknowledged(load) >= after_heal + 100, 60, step=0.5, last=True)
        again_s = time.monotonic() - began
    finally:
        nem.heal_all()
        load.stop(workers)
    victim = lost["nodes"][0]
    assert healed["back"], f"{victim} did not register again"
    partitions = [entry for v in lost["wiped"].values() for entry in v["entries"]]
    assert any(entry.endswith("/ch0-0") for entry in partitions), f"ch0's log was not on {victim}'s disk"
    assert ordering_again, "the OSNs did not order again after the broker came back"
    assert all(n.state == "running" for n in cluster.osns)
    assert_every_channel_converges(cluster, load)
    # Kafka rebuilt the emptied replica from the others (and the module's next test starts
    # on a cluster with every replica in sync).
    until(lambda: isr_size(cluster, "ch0") == 3, 90, step=0.5, what="ch0's ISR to grow back to 3")
    client = OsnClient(cluster.client_identity())
    try:
        final = {ch: heights(cluster, client, ch) for ch in CHANNELS}
    finally:
        client.close()
    print(f"figures broker-disk-loss: wiped {victim} (leader of ch0/0, isr {lost['isr']}), "
          f"{sum(v['kib'] for v in lost['wiped'].values())} KiB; started again {wiped_s:.1f} s after the kill, "
          f"back {back_s:.1f} s after it (stop waited {healed['back_after_s']} s), "
          f"100 more acks {again_s:.1f} s after it; acknowledged {at_fault} before the fault, {after_heal} "
          f"when it was back, {acknowledged(load)} in all of {load.counter} sent; heights {final}")


LEDGER_REBUILT = {
    # Fabric 1.4.12 (orderer/common/server/main.go, multichannel/registrar.go): no chain on
    # disk, so the system channel is made again from the genesis block file; replaying its
    # Kafka partition re-creates each application channel from its creation tx.
    "fabric-1.4.12": ["Bootstrapping because no existing channels",
                      f"[channel: {SYSTEM_CHANNEL}] Setting up the channel consumer for this channel (start offset: -2)",
                      *(line for ch in CHANNELS for line in (
                          f"Created and starting new chain {ch}",
                          f"[channel: {ch}] Setting up the channel consumer for this channel (start offset: -2)"))],
    # The model: every channel is in its settings; an empty ledger consumes from the oldest offset.
    "model": ["[channel ch0] started: height 0, consuming from offset oldest",
              "[channel ch1] started: height 0, consuming from offset oldest"],
}


def test_osn_whose_ledger_is_wiped_re_reads_its_channels_from_kafka_to_identical_blocks(either: Cluster) -> None:
    """An OSN loses its ledger volume (only that: the MSP and genesis block are a read-only
    mount) and starts with an empty ledger while the others keep ordering: it rebuilds every
    channel from Kafka and ends with the others' blocks, hash for hash."""
    cluster = either
    victim = cluster.node("osn3")
    load = Load(cluster, "wiped", osns=["osn1", "osn2"], seed=17)
    load.run(300)
    workers = load.run_until_stopped()
    client = OsnClient(cluster.client_identity())
    try:
        time.sleep(2)
        victim.kill()
        wiped = victim.lose_disk()
        restarted_at = int(time.time())
        before = {ch: max(heights(cluster, client, ch, load.targets).values()) for ch in CHANNELS}
        started = time.monotonic()
        victim.start()
        caught_up = until(lambda: all(heights(cluster, client, ch, [victim.name])[victim.name] >= before[ch]
                                      for ch in CHANNELS), 120, step=0.5, last=True)
        catch_up_s = time.monotonic() - started
        time.sleep(2)
    finally:
        load.stop(workers)
    try:
        assert caught_up, f"{victim.name} did not rebuild its ledger within 120 s of its restart"
        writable = {m["Destination"] for m in victim.container.attrs["Mounts"] if m.get("RW")}
        assert set(wiped) == writable and len(writable) == 1, f"not the ledger alone: {sorted(wiped)}"
        assert all(v["kib"] > 0 for v in wiped.values()), "the wiped volume held nothing"
        since_restart = victim.container.logs(since=restarted_at).decode(errors="replace")
        said = []
        for line in LEDGER_REBUILT[cluster.orderer_description()["implementation"]]:
            assert line in since_restart, f"{victim.name}'s log does not say: {line}"
            said.append(next(t for t in since_restart.splitlines() if line in t)[:200])
        for channel in CHANNELS:
            expected = load.success[channel]
            chains = converged_chains(cluster, channel, expected)
            assert before[channel] > 1, f"{channel} had no blocks to rebuild"
            assert_identical_and_complete(chains, expected)
        final = {ch: heights(cluster, client, ch) for ch in CHANNELS}
    finally:
        client.close()
    print(f"figures osn-ledger-wipe: {victim.name} wiped {sum(v['kib'] for v in wiped.values())} KiB "
          f"{ {k: v['entries'] for k, v in wiped.items()} }; heights at its restart {before}; "
          f"reached them in {catch_up_s:.1f} s; acknowledged { {c: len(s) for c, s in load.success.items()} }; "
          f"final heights {final}")
    print("\n".join(said))
