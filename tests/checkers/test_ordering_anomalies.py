"""Each ordering-service anomaly on a tiny history that has exactly it, and on its clean twin."""
from __future__ import annotations

from checkers import ordering
from checkers.synthetic import HistoryBuilder, make_chain


def _anomalies(tables, transform: str):
    ops = tables.ops
    chain = ordering.delivered_blocks(tables.blocks)
    txs = ordering.chain_txs(chain)
    height = ordering.heights(ordering.final_delivers(ops), tables.blocks)
    broadcasts = ordering.successful_broadcasts(ops)
    summary = ordering.tx_summary(chain, broadcasts)
    return {
        "block-fork": lambda: ordering.block_forks(chain),
        "broken-chain": lambda: ordering.broken_chains(chain),
        "lost-tx": lambda: ordering.lost_txs(broadcasts, summary, height),
        "duplicate-tx": lambda: ordering.duplicate_txs(txs, summary, ordering.broadcast_txs(ops)),
        "lagging-osn": lambda: ordering.lagging_osns(height),
    }[transform]()


def _two_osns(second: list[dict]) -> tuple[HistoryBuilder, int, int]:
    h = HistoryBuilder()
    _, d1 = h.deliver(9, "ch0", "osn1", make_chain([["tx-1"], ["tx-2"]]), final=True)
    _, d2 = h.deliver(9, "ch0", "osn2", second, final=True)
    return h, d1, d2


def test_osns_with_different_blocks_at_one_number_are_block_fork(ops_of, found):
    h, d1, d2 = _two_osns(make_chain([["tx-1"], ["tx-3"]]))
    rows = found(_anomalies(ops_of(h), "block-fork"))
    assert [(r["evidence"], r["example"]["number"]) for r in rows] == [([d1, d2], 1)]


def test_osns_with_identical_chains_do_not_fork(ops_of, found):
    h, _, _ = _two_osns(make_chain([["tx-1"], ["tx-2"]]))
    assert found(_anomalies(ops_of(h), "block-fork")) == []


def test_hashes_differing_only_in_case_are_one_block(ops_of, found):
    """Hex is compared as lower-case: an OSN that reports its hashes in upper case holds the
    same chain, neither a fork nor a broken one; the block rows hold them lower-cased."""
    upper = [{k: v.upper() if k.endswith("hash") else v for k, v in block.items()}
             for block in make_chain([["tx-1"], ["tx-2"]], with_data=True)]
    h, _, _ = _two_osns(upper)
    tables = ops_of(h)
    assert found(_anomalies(tables, "block-fork")) == []
    assert found(_anomalies(tables, "broken-chain")) == []
    hashes = {r[c] for r in tables.blocks.collect() for c in ("hash", "previous_hash", "data_hash") if r[c]}
    assert hashes and hashes == {x.lower() for x in hashes}


def test_previous_hash_not_matching_predecessor_is_broken_chain(ops_of, found):
    blocks = make_chain([["tx-1"], ["tx-2"], ["tx-3"]])
    blocks[2]["previous_hash"] = "00" * 32
    h = HistoryBuilder()
    _, d = h.deliver(9, "ch0", "osn1", blocks)
    rows = found(_anomalies(ops_of(h), "broken-chain"))
    assert [(r["evidence"], r["example"]["number"], r["example"]["mismatch"]) for r in rows] == [
        ([d], 2, "previous_hash")]


def test_chain_of_reported_hashes_that_links_is_not_broken(ops_of, found):
    h = HistoryBuilder()
    h.deliver(9, "ch0", "osn1", make_chain([["tx-1"], ["tx-2"], ["tx-3"]]))
    assert found(_anomalies(ops_of(h), "broken-chain")) == []


def test_recomputed_hashes_of_blocks_with_bytes_match_fabric_hashing(ops_of, found):
    h = HistoryBuilder()
    h.deliver(9, "ch0", "osn1", make_chain([["tx-1", "tx-2"], [], ["tx-3"]], with_data=True))
    assert found(_anomalies(ops_of(h), "broken-chain")) == []


def test_block_bytes_not_matching_data_hash_are_broken_chain(ops_of, found):
    blocks = make_chain([["tx-1"], ["tx-2"]], with_data=True)
    blocks[1]["data"] = [b"tampered".hex()]
    h = HistoryBuilder()
    h.deliver(9, "ch0", "osn1", blocks)
    rows = found(_anomalies(ops_of(h), "broken-chain"))
    assert [(r["example"]["number"], r["example"]["mismatch"]) for r in rows] == [(1, "data_hash")]


def test_header_hash_not_matching_header_is_broken_chain(ops_of, found):
    blocks = make_chain([["tx-1"]], with_data=True)
    blocks[0]["hash"] = "ab" * 32
    h = HistoryBuilder()
    h.deliver(9, "ch0", "osn1", blocks)
    rows = found(_anomalies(ops_of(h), "broken-chain"))
    assert [(r["example"]["number"], r["example"]["mismatch"]) for r in rows] == [(0, "hash")]


def _broadcasts(chain_txs: list[list[str]]) -> tuple[HistoryBuilder, list[int]]:
    h = HistoryBuilder()
    oks = [h.broadcast(1, "ch0", "osn1", tx)[1] for tx in ("tx-1", "tx-2", "tx-3")]
    h.broadcast(1, "ch0", "osn1", "tx-4", status="SERVICE_UNAVAILABLE")
    h.broadcast(1, "ch0", "osn1", "tx-5", type="fail", error="service-unavailable")
    h.deliver(9, "ch0", "osn1", make_chain(chain_txs), final=True)
    return h, oks


def test_successful_broadcast_in_no_block_is_lost_tx(ops_of, found):
    h, oks = _broadcasts([["tx-1", "tx-2"]])
    rows = found(_anomalies(ops_of(h), "lost-tx"))
    assert [(r["evidence"], r["example"]["tx"]) for r in rows] == [([oks[2]], "tx-3")]


def test_every_successful_broadcast_in_a_block_loses_nothing(ops_of, found):
    h, _ = _broadcasts([["tx-1", "tx-2"], ["tx-3"]])
    assert found(_anomalies(ops_of(h), "lost-tx")) == []


def test_tx_twice_in_one_osn_chain_is_duplicate_tx(ops_of, found):
    h = HistoryBuilder()
    h.broadcast(1, "ch0", "osn1", "tx-1", type="info")
    _, d = h.deliver(9, "ch0", "osn1", make_chain([["tx-1", "tx-2"], ["tx-1"]]))
    rows = found(_anomalies(ops_of(h), "duplicate-tx"))
    assert [(r["evidence"], r["example"]["tx"]) for r in rows] == [([d], "tx-1")]


def test_a_duplicate_of_a_tx_this_history_did_not_broadcast_is_not_its_anomaly(ops_of, found):
    h = HistoryBuilder()  # an earlier run's tx, delivered again from the shared channel
    h.deliver(9, "ch0", "osn1", make_chain([["tx-1", "tx-2"], ["tx-1"]]))
    assert found(_anomalies(ops_of(h), "duplicate-tx")) == []


def test_same_tx_on_two_osns_is_not_duplicate_tx(ops_of, found):
    h, _, _ = _two_osns(make_chain([["tx-1"], ["tx-2"]]))
    assert found(_anomalies(ops_of(h), "duplicate-tx")) == []


def test_osn_below_channel_height_is_lagging_osn(ops_of, found):
    h, _, d2 = _two_osns(make_chain([["tx-1"]]))
    rows = found(_anomalies(ops_of(h), "lagging-osn"))
    assert [(r["evidence"], r["example"]["osn"], r["example"]["height"]) for r in rows] == [([d2], "osn2", 1)]


def test_osns_at_equal_height_do_not_lag(ops_of, found):
    h, _, _ = _two_osns(make_chain([["tx-1"], ["tx-2"]]))
    assert found(_anomalies(ops_of(h), "lagging-osn")) == []
