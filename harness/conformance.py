"""Conformance of the OSN model against Fabric's real orderer, on a running cluster.

A faulted ordering run against the real orderers (`faulted_load`), then, per channel: the
channel's partition read from Kafka from the oldest offset to the high watermark, replayed
through the model's consenter from the real block 0 (checkers/conformance.py), and every
block each real orderer delivers compared with the replay (`check`). Used by
tests/orderer/test_conformance.py and `ordeal conformance` (cli/conformance.py).
"""
from __future__ import annotations

import random
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

from clusters.cluster import Cluster
from clusters.node import NodeVerbFailed
from fabric.client import DeliverFailed, OsnClient, OsnUnreachable, block_summary
from fabric.config_update import batch_update, config_update_envelope
from fabric.envelopes import label_nonce
from checkers.conformance import CUT_REASONS, Comparison, CutterFactory, Replay, compare, model_chain, replay
from osn.settings import BatchSettings
from ground.variant import Variant

Log = Callable[[str], None]

# Batch settings that make every kind of cut happen in a short run: ~1.1 KB signed txs fill
# 10-message batches below PreferredMaxBytes (count cuts), 4 KB txs overflow it, 24 KB txs are
# isolated, a short timer cuts the trickles.
CONFORMANCE_ORDERER = {"max_message_count": 10, "preferred_max_bytes": 16 * 1024, "batch_timeout_ms": 200}
MEDIUM, LARGE = 4 * 1024, 24 * 1024


def conformance_variant(base: Variant) -> Variant:
    """`base` with the batch settings above (the orderer implementation is kept)."""
    return base.model_copy(update={"orderer": base.orderer.model_copy(update=CONFORMANCE_ORDERER)})


def batch_settings(variant: Variant) -> BatchSettings:
    o = variant.orderer
    return BatchSettings(max_message_count=o.max_message_count, absolute_max_bytes=o.absolute_max_bytes,
                         preferred_max_bytes=o.preferred_max_bytes, batch_timeout_ms=o.batch_timeout_ms)


# -- the faulted run --------------------------------------------------------------------


@dataclass
class LoadStats:
    attempted: int = 0
    acknowledged: int = 0
    faults: list[str] = field(default_factory=list)
    configs_attempted: int = 0
    configs_acknowledged: int = 0


def _config_updates(cluster: Cluster, client: OsnClient, stats: LoadStats, lock: threading.Lock,
                    done: threading.Event, seed: int) -> None:
    """Every 3 s, two config updates of one channel at once, a MaxMessageCount and a
    BatchTimeout, both built on the config as it is: whichever Kafka takes second was validated
    under the older config sequence, so Fabric re-validates it and re-submits it, as it does the
    txs in flight meanwhile. The settings stay near the conformance's own (8 or 10 messages,
    200 or 300 ms), so that every kind of cut still happens."""
    admin = cluster.config_admin()
    if admin is None:
        return
    rng = random.Random(seed * 7919)
    addresses = cluster.osn_addresses()
    channels = list(cluster.variant.orderer.channels)

    def submit(channel: str, name: str, setting: int, label: str) -> None:
        address = addresses[rng.choice(sorted(addresses))]
        try:
            config = client.channel_config(address, channel, timeout=5)
            update, _ = batch_update(channel, config, name, setting)
            envelope = config_update_envelope(channel, update, [admin], client.identity, label_nonce(label))
            status = client.broadcast_envelope(address, envelope, timeout=5)
        except Exception:  # noqa: BLE001 - faults make some fail: that is expected
            return
        if status == "SUCCESS":
            with lock:
                stats.configs_acknowledged += 1

    n = 0
    while not done.wait(3.0):
        n += 1
        channel = rng.choice(channels)
        pair = [("max_message_count", rng.choice([8, 10])), ("batch_timeout_ms", rng.choice([200, 300]))]
        with lock:
            stats.configs_attempted += len(pair)
        threads = [threading.Thread(target=submit, args=(channel, name, setting, f"conf-cfg-{seed}-{n}-{i}"))
                   for i, (name, setting) in enumerate(pair)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()


def faulted_load(cluster: Cluster, txs: int, seed: int = 14, log: Log = print,
                 config_updates: bool = False) -> LoadStats:
    """Broadcast at least `txs` txs (random channel, random orderer, mostly small, some larger
    than PreferredMaxBytes / 4) in bursts and trickles, with `config_updates` channel config
    updates in pairs too (_config_updates), while orderers and brokers are killed and paused;
    every fault is healed before returning. Config updates are opt-in: under these faults one
    channel stopped taking txs for the rest of a run (2026-11-30, docs/orderers.md), which the
    default load, the one make test runs, must not depend on."""
    channels = list(cluster.variant.orderer.channels)
    addresses = cluster.osn_addresses()
    client = OsnClient(cluster.client_identity())
    stats = LoadStats()
    lock = threading.Lock()
    faults_done = threading.Event()
    started = time.monotonic()

    def worker(n: int) -> None:
        rng = random.Random(seed * 100 + n)
        while True:
            with lock:
                if stats.attempted >= txs and faults_done.is_set():
                    return
                stats.attempted += 1
                label = f"conf-{seed}-{stats.attempted}"
            roll = rng.random()
            data = b"" if roll < 0.86 else rng.randbytes(MEDIUM if roll < 0.97 else LARGE)
            try:
                status = client.broadcast(addresses[rng.choice(sorted(addresses))], rng.choice(channels),
                                          label, data=data, timeout=3.0)
                if status == "SUCCESS":
                    with lock:
                        stats.acknowledged += 1
            except Exception:  # noqa: BLE001 - faults make some broadcasts fail: that is expected
                pass
            # 1.5 s bursts at full speed, then 2 s trickles (the batch timer cuts those)
            if (time.monotonic() - started) % 3.5 > 1.5:
                time.sleep(rng.uniform(0.02, 0.25))

    workers = [threading.Thread(target=worker, args=(n,), daemon=True) for n in range(6)]
    if config_updates:
        workers.append(threading.Thread(target=_config_updates, args=(cluster, client, stats, lock, faults_done, seed),
                                        daemon=True))
    for w in workers:
        w.start()

    def fault(what: str, action: Callable[[], None]) -> None:
        # A verb the engine could not carry out (a freeze that never settled) leaves that
        # fault out of this run; the comparison is as strict with fewer faults.
        try:
            action()
        except NodeVerbFailed as exc:
            what = f"{what} NOT DONE ({exc})"
        stats.faults.append(f"{time.monotonic() - started:5.1f}s {what}")
        log(f"  fault: {stats.faults[-1]}")

    osn = {n.name: n for n in cluster.osns}
    try:
        time.sleep(2)
        fault("kill osn2", osn["osn2"].kill)
        time.sleep(3)
        fault("start osn2", osn["osn2"].start)
        time.sleep(2)
        fault("pause osn3", osn["osn3"].pause)
        time.sleep(3)
        fault("resume osn3", osn["osn3"].resume)
        broker = cluster.leader_of(channels[0]) or cluster.brokers[0]
        fault(f"kill {broker.name} (leader of {channels[0]})", broker.kill)
        time.sleep(5)
        fault(f"start {broker.name}", broker.start)
        time.sleep(2)
        fault("kill osn1", osn["osn1"].kill)
        fault("pause osn2", osn["osn2"].pause)
        time.sleep(3)
        fault("start osn1", osn["osn1"].start)
        fault("resume osn2", osn["osn2"].resume)
        time.sleep(2)
        broker = cluster.leader_of(channels[-1]) or cluster.brokers[-1]
        fault(f"pause {broker.name} (leader of {channels[-1]})", broker.pause)
        time.sleep(3)
        fault(f"resume {broker.name}", broker.resume)
    finally:
        for node in cluster.osns + cluster.brokers:
            node.start()  # resumes a paused node, starts a stopped one
        faults_done.set()
    for w in workers:
        w.join()
    client.close()
    log(f"  load: {stats.acknowledged}/{stats.attempted} txs acknowledged in {time.monotonic() - started:.0f} s, "
        f"{stats.configs_acknowledged}/{stats.configs_attempted} config updates")
    return stats


# -- reading both sides ------------------------------------------------------------------


def read_partition(bootstrap_servers: str, topic: str, timeout: float = 60.0) -> list[tuple[int, bytes]]:
    """Every record of topic/0 from the oldest offset to the high watermark."""
    consumer = Consumer({"bootstrap.servers": bootstrap_servers, "group.id": f"ordeal-conformance-{uuid.uuid4().hex[:8]}",
                         "enable.auto.commit": False, "auto.offset.reset": "earliest",
                         "fetch.message.max.bytes": 104857600, "enable.partition.eof": False})
    try:
        low, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=timeout)
        consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        records: list[tuple[int, bytes]] = []
        deadline = time.monotonic() + timeout
        while (not records or records[-1][0] < high - 1) and high > low:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{topic}: read up to offset {records[-1][0] if records else None} of {high - 1}")
            msg = consumer.poll(1.0)
            if msg is None or msg.error():
                continue
            if msg.offset() < high:
                records.append((msg.offset(), msg.value()))
        return records
    finally:
        consumer.close()


def settled_chains(cluster: Cluster, channel: str, timeout: float = 60.0, log: Log = print) -> dict[str, list]:
    """Every orderer's blocks (raw) once all have the same height, unchanged for 2 s."""
    client = OsnClient(cluster.client_identity())
    deadline = time.monotonic() + timeout
    previous: tuple[int, ...] = ()
    try:
        while True:
            chains = {}
            for name, address in sorted(cluster.osn_addresses().items()):
                try:
                    chains[name] = client.deliver_blocks(address, channel, 0, timeout=30)
                except (DeliverFailed, OsnUnreachable):
                    chains[name] = []
            heights = tuple(len(c) for c in chains.values())
            if (len(set(heights)) == 1 and heights == previous) or time.monotonic() > deadline:
                if len(set(heights)) != 1:
                    log(f"  {channel}: orderers did not settle, heights {heights}")
                return chains
            previous = heights
            time.sleep(2.0)
    finally:
        client.close()


# -- the check ---------------------------------------------------------------------------


@dataclass
class ChannelConformance:
    channel: str
    messages: int
    replay: Replay
    comparisons: list[Comparison]

    @property
    def difference(self):  # -> Difference | None
        return next((c.difference for c in self.comparisons if c.difference), None)


@dataclass
class ConformanceResult:
    channels: list[ChannelConformance]
    load: LoadStats | None = None

    @property
    def equal(self) -> bool:
        return all(c.difference is None for c in self.channels)

    @property
    def first_difference(self):
        return next((c.difference for c in self.channels if c.difference), None)

    def counts(self) -> dict[str, int]:
        """Blocks compared (distinct blocks, block 0 excluded, and block x orderer comparisons),
        blocks cut by each reason (among the compared), Kafka messages replayed."""
        out = {"channels": len(self.channels), "messages": sum(c.messages for c in self.channels),
               "blocks_compared": 0, "block_comparisons": 0, "not_compared": 0}
        out.update({reason: 0 for reason in CUT_REASONS})
        for ch in self.channels:
            compared = min((c.compared for c in ch.comparisons), default=0)
            out["blocks_compared"] += compared
            out["block_comparisons"] += sum(c.compared for c in ch.comparisons)
            out["not_compared"] += max((c.not_compared for c in ch.comparisons), default=0)
            for block in ch.replay.blocks[:compared]:
                out[block.cut_by] += 1
        out["txs_in_blocks"] = sum(len(b.summary["txs"]) for ch in self.channels
                                   for b in ch.replay.blocks)
        return out

    def summary(self) -> str:
        c = self.counts()
        lines = [f"conformance: {'EQUAL' if self.equal else 'DIFFERENT'} — {c['blocks_compared']} blocks compared "
                 f"on {c['channels']} channels ({c['block_comparisons']} block x orderer comparisons, "
                 f"{c['messages']} Kafka messages replayed, {c['txs_in_blocks']} txs in blocks)",
                 f"  cut by TTC: {c['ttc']}, by count: {c['count']}, by PreferredMaxBytes: "
                 f"{c['preferred_max_bytes'] + c['oversized']} ({c['preferred_max_bytes']} pending batches cut "
                 f"before an overflowing or oversized tx, {c['oversized']} oversized txs isolated), by a config "
                 f"update: {c['config']} (config blocks and the batches cut before them)"]
        for ch in self.channels:
            r = ch.replay
            extra = []
            if r.out_of_scope:
                extra.append(f"replay stopped at offset {r.out_of_scope[0]}: {r.out_of_scope[1]}")
            if r.halted:
                extra.append(f"model halted at offset {r.halted[0]}: {r.halted[1]}")
            per_osn = ", ".join(f"{cmp.osn} {cmp.compared}" for cmp in ch.comparisons)
            lines.append(f"  {ch.channel}: {ch.messages} messages, {len(r.blocks)} blocks replayed; "
                         f"compared per orderer: {per_osn}" + ("; " + "; ".join(extra) if extra else ""))
        if self.first_difference:
            lines.append(str(self.first_difference))
        return "\n".join(lines)


def check(cluster: Cluster, cutter: CutterFactory | None = None, log: Log = print) -> ConformanceResult:
    """Replay every application channel's partition through the model and compare with every
    real orderer's chain. The system channel is out of scope (config messages only)."""
    batch = batch_settings(cluster.variant)  # the genesis block's; a config block changes them on the way
    results = []
    for channel in cluster.variant.orderer.channels:
        chains = settled_chains(cluster, channel, log=log)
        messages = read_partition(cluster.bootstrap_servers(), channel)
        genesis = next(c[0] for c in chains.values() if c)
        result = replay(channel, messages, genesis, batch, cutter=cutter)
        real = {name: [block_summary(b) for b in blocks] for name, blocks in chains.items()}
        longest = max(len(c) for c in real.values())
        if len(result.blocks) + 1 > longest and not result.halted:
            # the orderers may still be consuming the log's tail: look again
            chains = settled_chains(cluster, channel, log=log)
            real = {name: [block_summary(b) for b in blocks] for name, blocks in chains.items()}
        comparisons = [compare(result, chain, name) for name, chain in sorted(real.items())]
        results.append(ChannelConformance(channel, len(messages), result, comparisons))
    return ConformanceResult(results)


def run(cluster: Cluster, txs: int = 2400, seed: int = 14, cutter: CutterFactory | None = None,
        log: Log = print, config_updates: bool = False) -> ConformanceResult:
    """Faulted load, then the check."""
    log(f"conformance: {txs} txs on {cluster.variant.orderer.channels} with faults "
        f"(orderer {cluster.variant.orderer.implementation})")
    stats = faulted_load(cluster, txs, seed=seed, log=log, config_updates=config_updates)
    deadline = time.monotonic() + 90
    while not all(cluster.osn_healthy(n) for n in cluster.osns) and time.monotonic() < deadline:
        time.sleep(1.0)
    result = check(cluster, cutter=cutter, log=log)
    result.load = stats
    return result


# -- the other direction: a partition the model wrote, read by real orderers started afterwards


@dataclass
class ReverseResult:
    channel: str
    model_blocks: int             # blocks the model's OSNs cut (block 0 excluded)
    acknowledged: int
    replay: Replay
    comparisons: list[Comparison]
    models_agree: bool            # the model OSNs' ledgers equal each other and the replay

    @property
    def difference(self):
        return next((c.difference for c in self.comparisons if c.difference), None)

    @property
    def equal(self) -> bool:
        return self.models_agree and self.difference is None

    def summary(self) -> str:
        c = self.replay.counts()
        head = (f"reverse: {'EQUAL' if self.equal else 'DIFFERENT'} — {self.channel}: {self.model_blocks} blocks cut by "
                f"the model's OSNs ({self.acknowledged} txs; by TTC {c['ttc']}, by count {c['count']}, by "
                f"PreferredMaxBytes {c['preferred_max_bytes'] + c['oversized']}), real orderers started afterwards "
                f"cut: " + ", ".join(f"{cmp.osn} {cmp.compared} equal" for cmp in self.comparisons))
        if not self.models_agree:
            head += "\n  the model OSNs' own ledgers differ from each other or from the replay"
        return head + (f"\n{self.difference}" if self.difference else "")


def reverse(cluster: Cluster, txs: int = 400, models: int = 3, seed: int = 15, channel: str | None = None,
            log: Log = print) -> ReverseResult:
    """Stop the real orderers of a fresh cluster (`channel` at height 1), order `txs` txs on
    `channel` (default: the last one) through `models` of the model's chains (in this process, on the real
    Kafka, seeded with the real block 0, their batch timers racing), stop them, start the real
    orderers again: they consume the partition the model wrote from the oldest offset, and must
    cut the blocks the model cut."""
    import tempfile
    from pathlib import Path

    from osn.chain import Chain
    from fabric.envelopes import make_envelope
    from osn.kafka_log import KafkaLogs
    from osn.ledger import Ledger
    from checkers.conformance import config_sequence
    from osn.settings import OsnSettings, TopicSettings

    channel = channel or cluster.variant.orderer.channels[-1]
    batch = batch_settings(cluster.variant)
    client = OsnClient(cluster.client_identity())
    first = sorted(cluster.osn_addresses().values())[0]
    genesis = client.deliver_blocks(first, channel, 0, 0)[0]
    heights = {n: len(client.deliver_blocks(a, channel, 0)) for n, a in cluster.osn_addresses().items()}
    if set(heights.values()) != {1}:
        raise RuntimeError(f"reverse needs a fresh channel (height 1 everywhere), found {heights}")
    for node in cluster.osns:
        node.kill()
    log(f"  reverse: real orderers killed; {models} model chains order {txs} txs on {channel}")
    k = cluster.variant.kafka
    settings = OsnSettings(name="conformance-model", kafka_bootstrap_servers=cluster.bootstrap_servers().split(","),
                           channels=[channel], batch=batch,
                           topic=TopicSettings(replication_factor=k.replication_factor,
                                               min_insync_replicas=k.min_insync_replicas))
    acknowledged = 0
    with tempfile.TemporaryDirectory() as tmp:
        kafka = [KafkaLogs(settings.model_copy(update={"name": f"conformance-model{i}"})) for i in range(models)]
        chains = []
        for i, logs in enumerate(kafka):
            ledger = Ledger(Path(tmp) / f"model{i}" / f"{channel}.blocks")
            ledger.write_block(genesis)
            chains.append(Chain(channel, logs.partition(channel), ledger, batch,
                                config_seq=config_sequence(genesis)))
        try:
            for chain in chains:
                chain.start()
                if not chain.wait_started(60):
                    raise RuntimeError(f"a model chain did not start: {chain.halted}")
            lock = threading.Lock()
            counter = iter(range(txs))

            def worker(n: int) -> None:
                nonlocal acknowledged
                rng = random.Random(seed * 100 + n)
                for i in counter:
                    roll = rng.random()
                    data = b"" if roll < 0.86 else rng.randbytes(MEDIUM if roll < 0.97 else LARGE)
                    env = make_envelope(channel, client.identity, data, label=f"rev-{seed}-{i}")
                    try:
                        rng.choice(chains).order(env.SerializeToString())
                        with lock:
                            acknowledged += 1
                    except Exception:  # noqa: BLE001
                        pass
                    if (i // 40) % 2:
                        time.sleep(rng.uniform(0.02, 0.3))  # trickles, cut by the model's timers

            workers = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
            for w in workers:
                w.start()
            for w in workers:
                w.join()
            # settle: every model chain at one height, unchanged for a few batch timeouts
            last: tuple[int, ...] = ()
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                now = tuple(c.ledger.height for c in chains)
                if len(set(now)) == 1 and now == last:
                    break
                last = now
                time.sleep(max(1.0, 4 * batch.batch_timeout_ms / 1000))
            model_chains = [[block_summary(c.ledger.block(i)) for i in range(c.ledger.height)] for c in chains]
        finally:
            for chain in chains:
                chain.stop()
                chain.ledger.close()
            for logs in kafka:
                logs.close()
    log(f"  reverse: model cut {len(model_chains[0]) - 1} blocks; starting the real orderers")
    for node in cluster.osns:
        node.start()
    deadline = time.monotonic() + 90
    while not all(cluster.osn_healthy(n) for n in cluster.osns) and time.monotonic() < deadline:
        time.sleep(1.0)
    real = {name: [block_summary(b) for b in blocks] for name, blocks in settled_chains(cluster, channel, log=log).items()}
    messages = read_partition(cluster.bootstrap_servers(), channel)
    result = replay(channel, messages, genesis, batch)
    expected = model_chain(result)
    agree = all(chain == expected for chain in model_chains)
    comparisons = [compare(result, chain, name) for name, chain in sorted(real.items())]
    client.close()
    return ReverseResult(channel, len(model_chains[0]) - 1, acknowledged, result, comparisons, agree)
