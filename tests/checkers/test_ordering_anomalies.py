"""Each ordering-service anomaly on a tiny history that has exactly it, and on its clean twin."""
from __future__ import annotations

from checkers import ordering
from checkers.check import check_history
from tests.histories import HistoryBuilder, make_chain


def _anomalies(tables, transform: str):
    ops = tables.ops
    chain = ordering.delivered_blocks(tables.blocks)
    txs = ordering.chain_txs(chain)
    height = ordering.heights(ordering.final_delivers(ops), tables.blocks)
    broadcasts = ordering.successful_broadcasts(ops)
    summary = ordering.tx_summary(chain, broadcasts)
    updates = ordering.config_updates(ops)
    placed = ordering.config_blocks(chain, updates)
    return {
        "block-fork": lambda: ordering.block_forks(chain),
        "broken-chain": lambda: ordering.broken_chains(chain),
        "lost-tx": lambda: ordering.lost_txs(broadcasts, summary, height, ordering.superseded_updates(updates, placed)),
        "duplicate-tx": lambda: ordering.duplicate_txs(txs, summary, ordering.broadcast_txs(ops)),
        "lagging-osn": lambda: ordering.lagging_osns(height),
        "config-not-alone": lambda: ordering.configs_not_alone(placed),
        "batch-overflow": lambda: ordering.batch_overflows(chain, placed),
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


# -- config updates --------------------------------------------------------------------

def _config_history(batches: list[list[str]], **updates: dict) -> tuple[HistoryBuilder, dict[str, int], int]:
    """Config updates (tx -> config_update's keywords, on ch0 via osn1), then one final deliver of
    `batches` from osn1; returns the history, each update's completion index and the deliver's."""
    h = HistoryBuilder()
    done = {tx: h.config_update(1, "ch0", "osn1", tx, **kw)[1] for tx, kw in updates.items()}
    _, d = h.deliver(9, "ch0", "osn1", make_chain(batches), final=True)
    return h, done, d


def test_a_config_update_in_a_block_with_other_txs_is_config_not_alone(ops_of, found):
    h, _, d = _config_history([["tx-1"], ["tx-2", "cfg-1", "tx-3"]], **{"cfg-1": dict(version=2, max_message_count=7)})
    rows = found(_anomalies(ops_of(h), "config-not-alone"))
    assert [(r["evidence"], r["example"]) for r in rows] == [
        ([d], {"channel": "ch0", "osn": "osn1", "number": 1, "tx": "cfg-1", "txs": ["tx-2", "cfg-1", "tx-3"]})]


def test_a_config_update_alone_in_its_block_is_not_config_not_alone(ops_of, found):
    h, _, _ = _config_history([["tx-1", "tx-2"], ["cfg-1"], ["tx-3"]],
                              **{"cfg-1": dict(version=2, batch_timeout_ms=800)})
    assert found(_anomalies(ops_of(h), "config-not-alone")) == []


def test_a_tx_with_others_that_no_config_update_of_this_history_wrote_is_not_config_not_alone(ops_of, found):
    h, _, _ = _config_history([["cfg-1", "tx-1"]])  # an earlier run's label, or a broadcast's
    assert found(_anomalies(ops_of(h), "config-not-alone")) == []


def test_a_successful_config_update_in_no_block_is_lost_tx(ops_of, found):
    h, done, _ = _config_history([["tx-1"], ["cfg-1"]], **{"cfg-1": dict(version=2, max_message_count=7),
                                                            "cfg-2": dict(version=3, max_message_count=9)})
    rows = found(_anomalies(ops_of(h), "lost-tx"))
    assert [(r["evidence"], r["example"]["tx"]) for r in rows] == [([done["cfg-2"]], "cfg-2")]


def test_a_successful_config_update_superseded_by_one_of_its_version_in_a_block_is_not_lost_tx(ops_of, found):
    h, _, _ = _config_history([["tx-1"], ["cfg-1"]], **{"cfg-1": dict(version=2, max_message_count=7),
                                                         "cfg-2": dict(version=2, max_message_count=9)})
    assert found(_anomalies(ops_of(h), "lost-tx")) == []


def test_an_update_of_the_other_setting_at_that_version_does_not_supersede_a_config_update(ops_of, found):
    h, done, _ = _config_history([["tx-1"], ["cfg-1"]], **{"cfg-1": dict(version=2, batch_timeout_ms=800),
                                                            "cfg-2": dict(version=2, max_message_count=9)})
    rows = found(_anomalies(ops_of(h), "lost-tx"))
    assert [(r["evidence"], r["example"]["tx"]) for r in rows] == [([done["cfg-2"]], "cfg-2")]


def test_a_config_update_that_failed_or_was_refused_is_never_lost_tx(ops_of, found):
    h, _, _ = _config_history([["tx-1"]], **{"cfg-1": dict(version=2, max_message_count=7, type="fail",
                                                           error="bad-request"),
                                             "cfg-2": dict(version=2, max_message_count=7, status="BAD_REQUEST")})
    assert found(_anomalies(ops_of(h), "lost-tx")) == []


def test_the_version_a_config_update_writes_may_be_given_by_its_completion_only(ops_of, found):
    """The workload learns the version once it has read the channel's config: an invoke
    without it is superseded like one with it."""
    h = HistoryBuilder()
    h.config_update(1, "ch0", "osn1", "cfg-1", version=2, max_message_count=7)
    h.op(2, "invoke", "config-update", {"channel": "ch0", "osn": "osn2", "tx": "cfg-2", "max_message_count": 9})
    h.op(2, "ok", "config-update", {"channel": "ch0", "osn": "osn2", "tx": "cfg-2", "max_message_count": 9,
                                     "version": 2, "status": "SUCCESS"})
    h.deliver(9, "ch0", "osn1", make_chain([["cfg-1"]]), final=True)
    assert found(_anomalies(ops_of(h), "lost-tx")) == []


def test_a_config_update_tx_twice_in_one_osn_chain_is_duplicate_tx(ops_of, found):
    h, _, d = _config_history([["cfg-1"], ["cfg-1"]], **{"cfg-1": dict(version=2, max_message_count=7, type="info",
                                                                       error="timeout")})
    rows = found(_anomalies(ops_of(h), "duplicate-tx"))
    assert [(r["evidence"], r["example"]["tx"]) for r in rows] == [([d], "cfg-1")]


_MAX_2 = {"cfg-1": dict(version=2, max_message_count=2)}


def test_a_block_with_more_txs_than_the_max_message_count_set_before_it_is_batch_overflow(ops_of, found):
    h, _, d = _config_history([["tx-1"], ["cfg-1"], ["tx-2", "tx-3", "tx-4"]], **_MAX_2)
    rows = found(_anomalies(ops_of(h), "batch-overflow"))
    assert [(r["evidence"], r["example"]) for r in rows] == [
        ([d], {"channel": "ch0", "osn": "osn1", "number": 2, "txs": 3, "max_message_count": 2, "config_tx": "cfg-1",
               "config_number": 1})]


def test_a_block_with_as_many_txs_as_the_max_message_count_is_not_batch_overflow(ops_of, found):
    h, _, _ = _config_history([["tx-1"], ["cfg-1"], ["tx-2", "tx-3"], ["tx-4"]], **_MAX_2)
    assert found(_anomalies(ops_of(h), "batch-overflow")) == []


def test_blocks_before_the_first_max_message_count_config_block_are_not_judged(ops_of, found):
    h, _, _ = _config_history([["tx-1", "tx-2", "tx-3", "tx-4", "tx-5"], ["cfg-1"], ["tx-6"]], **_MAX_2)
    assert found(_anomalies(ops_of(h), "batch-overflow")) == []


def test_a_max_message_count_config_block_whatever_its_broadcast_answered_sets_the_max(ops_of, found):
    h, _, _ = _config_history([["cfg-1"], ["tx-1", "tx-2", "tx-3"]],
                              **{"cfg-1": dict(version=2, max_message_count=2, type="info", error="timeout")})
    assert [r["example"]["number"] for r in found(_anomalies(ops_of(h), "batch-overflow"))] == [1]


def test_a_batch_timeout_config_block_does_not_change_the_max_in_force(ops_of, found):
    h, _, _ = _config_history([["cfg-1"], ["cfg-2"], ["tx-1", "tx-2", "tx-3"]],
                              **_MAX_2, **{"cfg-2": dict(version=2, batch_timeout_ms=800)})
    rows = found(_anomalies(ops_of(h), "batch-overflow"))
    assert [(r["example"]["number"], r["example"]["config_tx"]) for r in rows] == [(2, "cfg-1")]


def test_a_batch_timeout_config_block_alone_sets_no_max(ops_of, found):
    h, _, _ = _config_history([["cfg-2"], ["tx-1", "tx-2", "tx-3"]], **{"cfg-2": dict(version=2, batch_timeout_ms=800)})
    assert found(_anomalies(ops_of(h), "batch-overflow")) == []


def test_a_later_max_message_count_config_block_replaces_the_max_in_force(ops_of, found):
    h, _, _ = _config_history([["cfg-1"], ["tx-1", "tx-2", "tx-3"], ["cfg-2"], ["tx-4", "tx-5", "tx-6", "tx-7"],
                               ["cfg-3"], ["tx-8", "tx-9"]],
                              **_MAX_2, **{"cfg-2": dict(version=3, max_message_count=5),
                                           "cfg-3": dict(version=4, max_message_count=1)})
    rows = found(_anomalies(ops_of(h), "batch-overflow"))
    assert [(r["example"]["number"], r["example"]["max_message_count"]) for r in rows] == [(1, 2), (5, 1)]


def test_each_osn_chain_is_judged_by_the_config_blocks_it_holds(ops_of, found):
    """osn2 delivered from after the config block: its blocks are not judged; osn1's are."""
    h, _, d = _config_history([["cfg-1"], ["tx-1", "tx-2", "tx-3"]], **_MAX_2)
    h.deliver(9, "ch0", "osn2", make_chain([["cfg-1"], ["tx-1", "tx-2", "tx-3"]])[1:], start=1, final=True)
    rows = found(_anomalies(ops_of(h), "batch-overflow"))
    assert [(r["evidence"], r["example"]["osn"]) for r in rows] == [([d], "osn1")]


def _config_run(tmp_path, batches: list[list[str]], **updates: dict):
    """A run directory whose osn1 and osn2 deliver `batches` after the final heal, with config
    updates (tx -> config_update's keywords) and a broadcast of every other tx."""
    h = HistoryBuilder()
    for tx in sorted({tx for batch in batches for tx in batch} - set(updates)):
        h.broadcast(1, "ch0", "osn1", tx)
    for tx, kw in updates.items():
        h.config_update(2, "ch0", "osn2", tx, **kw)
    h.nemesis("heal", {"healed": "all"})
    for osn in ("osn1", "osn2"):
        h.deliver(9, "ch0", osn, make_chain(batches), final=True)
    h.write(tmp_path / "history.jsonl")
    return tmp_path


def test_config_not_alone_and_batch_overflow_make_the_run_invalid(spark, tmp_path):
    results = check_history(_config_run(tmp_path, [["tx-1"], ["cfg-1", "tx-2"], ["tx-3", "tx-4", "tx-5"]], **_MAX_2),
                            spark=spark)
    assert (results["valid"], sorted(results["anomalies"]),
            {a: results["anomalies"][a]["count"] for a in results["anomalies"]}) == (
        False, ["batch-overflow", "config-not-alone"], {"batch-overflow": 2, "config-not-alone": 2})


def test_a_run_whose_config_updates_fabric_ordered_as_it_says_is_valid(spark, tmp_path):
    """Alone in their blocks, the blocks after them within the max, one superseded."""
    results = check_history(_config_run(tmp_path, [["tx-1", "tx-2", "tx-3"], ["cfg-1"], ["tx-4", "tx-5"], ["cfg-3"],
                                                   ["tx-6"]],
                                        **_MAX_2, **{"cfg-2": dict(version=2, max_message_count=4),
                                                     "cfg-3": dict(version=2, batch_timeout_ms=800)}), spark=spark)
    assert (results["valid"], results["anomalies"]) == (True, {})
