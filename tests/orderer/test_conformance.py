"""The model against Fabric v1.4.12's real orderer, on one fabric-recommended cluster (batch
settings narrowed so that every kind of cut happens; harness/conformance.py):

1. the reverse direction first, on ch1 while it is fresh: the model's consenter (3 chains in
   this process, on the cluster's Kafka, seeded with the real block 0) writes the partition
   while the real orderers are down; the real orderers, started afterwards, cut the model's blocks;
2. then a faulted ordering run of >= 2,000 txs on both channels (orderers and brokers killed
   and paused), each channel's partition read from Kafka and replayed through the model from
   the real block 0: every block every real orderer delivers equals the model's (ch1's log
   now starts with what the model wrote);
3. the same logs through a deliberately wrong model (a cutter that ignores PreferredMaxBytes)
   are caught at the first differing block.
"""
from __future__ import annotations

import pytest

from harness import conformance
from clusters.cluster import Cluster
from checkers.conformance import COUNT, OVERSIZED, PREFERRED, TTC
from ground.variant import load_variant
from tests.orderer.test_replay import IgnoresPreferredMaxBytes

pytestmark = pytest.mark.cluster


@pytest.fixture(scope="module")
def fabric_conformance():
    import docker

    variant = conformance.conformance_variant(load_variant("fabric-recommended"))
    cluster = Cluster.up(variant, client=docker.from_env(timeout=120))
    try:
        yield cluster
    finally:
        cluster.down()


@pytest.mark.nightly  # 50 s of make test (the replay under faults below is nightly too since 2026-12-07)
def test_real_orderers_started_after_the_model_wrote_the_partition_cut_the_models_blocks(fabric_conformance):
    result = conformance.reverse(fabric_conformance, txs=400, channel="ch1")
    print("\n" + result.summary())
    assert result.models_agree
    assert result.equal, str(result.difference)
    assert result.model_blocks > 20 and all(c.compared == result.model_blocks for c in result.comparisons)


@pytest.mark.nightly  # about 123 s of make test (2026-12-07); the nightly job keeps it
def test_every_block_fabric_cut_under_faults_equals_the_models_replay(fabric_conformance):
    result = conformance.run(fabric_conformance, txs=2400)
    print("\n" + result.summary())
    counts = result.counts()
    print(f"counts: {counts}")
    assert result.equal, str(result.first_difference)
    assert result.load.attempted >= 2000 and result.load.acknowledged >= 2000
    assert counts["not_compared"] == 0, "something outside the model happened on an application channel"
    assert all(c.replay.halted is None for c in result.channels)
    assert all(counts[reason] > 0 for reason in (TTC, COUNT, PREFERRED, OVERSIZED)), counts
    assert counts["block_comparisons"] == 3 * counts["blocks_compared"]

    # the same logs through a deliberately wrong model: caught at its first differing block
    wrong = conformance.check(fabric_conformance, cutter=lambda b: IgnoresPreferredMaxBytes(
        b.max_message_count, b.preferred_max_bytes))
    diff = wrong.first_difference
    assert diff is not None and not wrong.equal
    print(f"wrong model caught:\n{diff}")
    reasons = {b.summary["number"]: b.cut_by for ch in result.channels if ch.channel == diff.channel
               for b in ch.replay.blocks}
    # the first block the right model cut by PreferredMaxBytes is the one that differs
    assert reasons[diff.number] in (PREFERRED, OVERSIZED)
    assert all(reasons[n] in (TTC, COUNT) for n in range(1, diff.number))
