"""The ordering service in containers: 3 of Fabric v1.4.12's orderers on fabric-recommended
agree on every block, order every tx they acknowledged, and catch up after a SIGKILL or a
pause under load."""
from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest

from clusters.cluster import Cluster
from clusters.orderer.client import OsnClient

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
    """Every OSN's chain once each holds every expected tx and all have the same height."""
    client = OsnClient(cluster.client_identity())
    deadline = time.monotonic() + timeout
    try:
        while True:
            chains = {name: client.deliver(addr, channel, 0) for name, addr in cluster.osn_addresses().items()}
            heights = {len(c) for c in chains.values()}
            holds = all(expected <= {tx for b in c for tx in b["txs"]} for c in chains.values())
            if (holds and len(heights) == 1) or time.monotonic() > deadline:
                return chains
            time.sleep(1.0)
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


def wait_for(check: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.5)
    return True


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
    assert wait_for(lambda: fabric.osn_healthy(victim), 60), "osn2 did not come back healthy"
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
        assert wait_for(lambda: (c := fabric.controller()) is not None and c.name != controller.name, 60)
        victim.start()
        assert wait_for(lambda: fabric.osn_healthy(victim), 60), "osn1 did not start its chains"
    finally:
        controller.start()
        victim.start()
    assert wait_for(lambda: all(fabric.osn_healthy(n) for n in fabric.osns), 60)
