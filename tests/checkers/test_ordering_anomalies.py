"""Each ordering-service anomaly on a tiny history that has exactly it, and on its clean twin.

The histories are built at import (CASES) and found as one batch by the registered checkers
(`found`, tests/conftest.py find_together): a batch judges each as if alone
(tests/checkers/test_batch.py) and costs about what one costs. The two runs whose verdict is
tested are checked as one batch too (`judged`, check_together)."""
from __future__ import annotations

import pytest

from tests.histories import HistoryBuilder, make_chain


def _two_osns(second: list[dict]) -> tuple[HistoryBuilder, tuple[int, int]]:
    h = HistoryBuilder()
    _, d1 = h.deliver(9, "ch0", "osn1", make_chain([["tx-1"], ["tx-2"]]), final=True)
    _, d2 = h.deliver(9, "ch0", "osn2", second, final=True)
    return h, (d1, d2)


def _upper_case() -> tuple[HistoryBuilder, None]:
    """osn2 reports osn1's chain with its hashes in upper case."""
    upper = [{k: v.upper() if k.endswith("hash") else v for k, v in block.items()}
             for block in make_chain([["tx-1"], ["tx-2"]], with_data=True)]
    h, _ = _two_osns(upper)
    return h, None


def _one_osn(blocks: list[dict], h: HistoryBuilder | None = None) -> tuple[HistoryBuilder, int]:
    """One deliver of `blocks` from osn1, not final (after `h`'s ops, if given)."""
    h = HistoryBuilder() if h is None else h
    _, d = h.deliver(9, "ch0", "osn1", blocks)
    return h, d


def _previous_hash_broken() -> tuple[HistoryBuilder, int]:
    blocks = make_chain([["tx-1"], ["tx-2"], ["tx-3"]])
    blocks[2]["previous_hash"] = "00" * 32
    return _one_osn(blocks)


def _data_tampered() -> tuple[HistoryBuilder, int]:
    blocks = make_chain([["tx-1"], ["tx-2"]], with_data=True)
    blocks[1]["data"] = [b"tampered".hex()]
    return _one_osn(blocks)


def _header_hash_wrong() -> tuple[HistoryBuilder, int]:
    blocks = make_chain([["tx-1"]], with_data=True)
    blocks[0]["hash"] = "ab" * 32
    return _one_osn(blocks)


def _broadcasts(chain_txs: list[list[str]]) -> tuple[HistoryBuilder, list[int]]:
    h = HistoryBuilder()
    oks = [h.broadcast(1, "ch0", "osn1", tx)[1] for tx in ("tx-1", "tx-2", "tx-3")]
    h.broadcast(1, "ch0", "osn1", "tx-4", status="SERVICE_UNAVAILABLE")
    h.broadcast(1, "ch0", "osn1", "tx-5", type="fail", error="service-unavailable")
    h.deliver(9, "ch0", "osn1", make_chain(chain_txs), final=True)
    return h, oks


def _tx_twice(broadcast: bool) -> tuple[HistoryBuilder, int]:
    """tx-1 twice in osn1's chain; `broadcast` by this history (else an earlier run's tx,
    delivered again from the shared channel)."""
    h = HistoryBuilder()
    if broadcast:
        h.broadcast(1, "ch0", "osn1", "tx-1", type="info")
    return _one_osn(make_chain([["tx-1", "tx-2"], ["tx-1"]]), h)


# -- config updates --------------------------------------------------------------------

def _config_history(batches: list[list[str]], **updates: dict) -> tuple[HistoryBuilder, tuple[dict[str, int], int]]:
    """Config updates (tx -> config_update's keywords, on ch0 via osn1), then one final deliver of
    `batches` from osn1; returns the history, and each update's completion index and the deliver's."""
    h = HistoryBuilder()
    done = {tx: h.config_update(1, "ch0", "osn1", tx, **kw)[1] for tx, kw in updates.items()}
    _, d = h.deliver(9, "ch0", "osn1", make_chain(batches), final=True)
    return h, (done, d)


def _version_at_completion() -> tuple[HistoryBuilder, None]:
    h = HistoryBuilder()
    h.config_update(1, "ch0", "osn1", "cfg-1", version=2, max_message_count=7)
    h.op(2, "invoke", "config-update", {"channel": "ch0", "osn": "osn2", "tx": "cfg-2", "max_message_count": 9})
    h.op(2, "ok", "config-update", {"channel": "ch0", "osn": "osn2", "tx": "cfg-2", "max_message_count": 9,
                                     "version": 2, "status": "SUCCESS"})
    h.deliver(9, "ch0", "osn1", make_chain([["cfg-1"]]), final=True)
    return h, None


_MAX_2 = {"cfg-1": dict(version=2, max_message_count=2)}


def _two_chains_one_config() -> tuple[HistoryBuilder, tuple[dict[str, int], int]]:
    """osn2 delivered from after the config block that osn1 holds."""
    h, at = _config_history([["cfg-1"], ["tx-1", "tx-2", "tx-3"]], **_MAX_2)
    h.deliver(9, "ch0", "osn2", make_chain([["cfg-1"], ["tx-1", "tx-2", "tx-3"]])[1:], start=1, final=True)
    return h, at


CASES = {
    "fork": _two_osns(make_chain([["tx-1"], ["tx-3"]])),
    "identical": _two_osns(make_chain([["tx-1"], ["tx-2"]])),
    "lagging": _two_osns(make_chain([["tx-1"]])),
    "upper-case": _upper_case(),
    "previous-hash": _previous_hash_broken(),
    "linked": _one_osn(make_chain([["tx-1"], ["tx-2"], ["tx-3"]])),
    "with-bytes": _one_osn(make_chain([["tx-1", "tx-2"], [], ["tx-3"]], with_data=True)),
    "data-tampered": _data_tampered(),
    "header-wrong": _header_hash_wrong(),
    "broadcast-lost": _broadcasts([["tx-1", "tx-2"]]),
    "broadcast-placed": _broadcasts([["tx-1", "tx-2"], ["tx-3"]]),
    "tx-twice": _tx_twice(broadcast=True),
    "not-ours-twice": _tx_twice(broadcast=False),
    "config-with-others": _config_history([["tx-1"], ["tx-2", "cfg-1", "tx-3"]],
                                          **{"cfg-1": dict(version=2, max_message_count=7)}),
    "config-alone": _config_history([["tx-1", "tx-2"], ["cfg-1"], ["tx-3"]],
                                    **{"cfg-1": dict(version=2, batch_timeout_ms=800)}),
    "not-our-config": _config_history([["cfg-1", "tx-1"]]),  # an earlier run's label, or a broadcast's
    "config-lost": _config_history([["tx-1"], ["cfg-1"]], **{"cfg-1": dict(version=2, max_message_count=7),
                                                             "cfg-2": dict(version=3, max_message_count=9)}),
    "config-superseded": _config_history([["tx-1"], ["cfg-1"]], **{"cfg-1": dict(version=2, max_message_count=7),
                                                                   "cfg-2": dict(version=2, max_message_count=9)}),
    "other-setting": _config_history([["tx-1"], ["cfg-1"]], **{"cfg-1": dict(version=2, batch_timeout_ms=800),
                                                               "cfg-2": dict(version=2, max_message_count=9)}),
    "config-refused": _config_history([["tx-1"]], **{"cfg-1": dict(version=2, max_message_count=7, type="fail",
                                                                   error="bad-request"),
                                                     "cfg-2": dict(version=2, max_message_count=7,
                                                                   status="BAD_REQUEST")}),
    "version-at-completion": _version_at_completion(),
    "config-twice": _config_history([["cfg-1"], ["cfg-1"]], **{"cfg-1": dict(version=2, max_message_count=7,
                                                                             type="info", error="timeout")}),
    "overflow": _config_history([["tx-1"], ["cfg-1"], ["tx-2", "tx-3", "tx-4"]], **_MAX_2),
    "at-max": _config_history([["tx-1"], ["cfg-1"], ["tx-2", "tx-3"], ["tx-4"]], **_MAX_2),
    "before-first-max": _config_history([["tx-1", "tx-2", "tx-3", "tx-4", "tx-5"], ["cfg-1"], ["tx-6"]], **_MAX_2),
    "max-timed-out": _config_history([["cfg-1"], ["tx-1", "tx-2", "tx-3"]],
                                     **{"cfg-1": dict(version=2, max_message_count=2, type="info", error="timeout")}),
    "timeout-after-max": _config_history([["cfg-1"], ["cfg-2"], ["tx-1", "tx-2", "tx-3"]],
                                         **_MAX_2, **{"cfg-2": dict(version=2, batch_timeout_ms=800)}),
    "timeout-alone": _config_history([["cfg-2"], ["tx-1", "tx-2", "tx-3"]],
                                     **{"cfg-2": dict(version=2, batch_timeout_ms=800)}),
    "later-max": _config_history([["cfg-1"], ["tx-1", "tx-2", "tx-3"], ["cfg-2"], ["tx-4", "tx-5", "tx-6", "tx-7"],
                                  ["cfg-3"], ["tx-8", "tx-9"]],
                                 **_MAX_2, **{"cfg-2": dict(version=3, max_message_count=5),
                                              "cfg-3": dict(version=4, max_message_count=1)}),
    "two-chains-one-config": _two_chains_one_config(),
}


@pytest.fixture(scope="module")
def found(find_together):
    """What the registered checkers found in CASES, as one batch (tests/support.Found)."""
    return find_together(CASES)


def test_osns_with_different_blocks_at_one_number_are_block_fork(found):
    rows, (d1, d2) = found("fork", "block-fork")
    assert [(r["evidence"], r["example"]["number"]) for r in rows] == [([d1, d2], 1)]


def test_osns_with_identical_chains_do_not_fork(found):
    assert found("identical", "block-fork")[0] == []


def test_hashes_differing_only_in_case_are_one_block(ops_of, found):
    """Hex is compared as lower-case: an OSN that reports its hashes in upper case holds the
    same chain, neither a fork nor a broken one; the block rows hold them lower-cased."""
    assert found("upper-case", "block-fork")[0] == []
    assert found("upper-case", "broken-chain")[0] == []
    tables = ops_of(CASES["upper-case"][0])
    hashes = {r[c] for r in tables.blocks.collect() for c in ("hash", "previous_hash", "data_hash") if r[c]}
    assert hashes and hashes == {x.lower() for x in hashes}


def test_previous_hash_not_matching_predecessor_is_broken_chain(found):
    rows, d = found("previous-hash", "broken-chain")
    assert [(r["evidence"], r["example"]["number"], r["example"]["mismatch"]) for r in rows] == [
        ([d], 2, "previous_hash")]


def test_chain_of_reported_hashes_that_links_is_not_broken(found):
    assert found("linked", "broken-chain")[0] == []


def test_recomputed_hashes_of_blocks_with_bytes_match_fabric_hashing(found):
    assert found("with-bytes", "broken-chain")[0] == []


def test_block_bytes_not_matching_data_hash_are_broken_chain(found):
    rows, _ = found("data-tampered", "broken-chain")
    assert [(r["example"]["number"], r["example"]["mismatch"]) for r in rows] == [(1, "data_hash")]


def test_header_hash_not_matching_header_is_broken_chain(found):
    rows, _ = found("header-wrong", "broken-chain")
    assert [(r["example"]["number"], r["example"]["mismatch"]) for r in rows] == [(0, "hash")]


def test_successful_broadcast_in_no_block_is_lost_tx(found):
    rows, oks = found("broadcast-lost", "lost-tx")
    assert [(r["evidence"], r["example"]["tx"]) for r in rows] == [([oks[2]], "tx-3")]


def test_every_successful_broadcast_in_a_block_loses_nothing(found):
    assert found("broadcast-placed", "lost-tx")[0] == []


def test_tx_twice_in_one_osn_chain_is_duplicate_tx(found):
    rows, d = found("tx-twice", "duplicate-tx")
    assert [(r["evidence"], r["example"]["tx"]) for r in rows] == [([d], "tx-1")]


def test_a_duplicate_of_a_tx_this_history_did_not_broadcast_is_not_its_anomaly(found):
    assert found("not-ours-twice", "duplicate-tx")[0] == []


def test_same_tx_on_two_osns_is_not_duplicate_tx(found):
    assert found("identical", "duplicate-tx")[0] == []


def test_osn_below_channel_height_is_lagging_osn(found):
    rows, (_, d2) = found("lagging", "lagging-osn")
    assert [(r["evidence"], r["example"]["osn"], r["example"]["height"]) for r in rows] == [([d2], "osn2", 1)]


def test_osns_at_equal_height_do_not_lag(found):
    assert found("identical", "lagging-osn")[0] == []


# -- config updates --------------------------------------------------------------------

def test_a_config_update_in_a_block_with_other_txs_is_config_not_alone(found):
    rows, (_, d) = found("config-with-others", "config-not-alone")
    assert [(r["evidence"], r["example"]) for r in rows] == [
        ([d], {"channel": "ch0", "osn": "osn1", "number": 1, "tx": "cfg-1", "txs": ["tx-2", "cfg-1", "tx-3"]})]


def test_a_config_update_alone_in_its_block_is_not_config_not_alone(found):
    assert found("config-alone", "config-not-alone")[0] == []


def test_a_tx_with_others_that_no_config_update_of_this_history_wrote_is_not_config_not_alone(found):
    assert found("not-our-config", "config-not-alone")[0] == []


def test_a_successful_config_update_in_no_block_is_lost_tx(found):
    rows, (done, _) = found("config-lost", "lost-tx")
    assert [(r["evidence"], r["example"]["tx"]) for r in rows] == [([done["cfg-2"]], "cfg-2")]


def test_a_successful_config_update_superseded_by_one_of_its_version_in_a_block_is_not_lost_tx(found):
    assert found("config-superseded", "lost-tx")[0] == []


def test_an_update_of_the_other_setting_at_that_version_does_not_supersede_a_config_update(found):
    rows, (done, _) = found("other-setting", "lost-tx")
    assert [(r["evidence"], r["example"]["tx"]) for r in rows] == [([done["cfg-2"]], "cfg-2")]


def test_a_config_update_that_failed_or_was_refused_is_never_lost_tx(found):
    assert found("config-refused", "lost-tx")[0] == []


def test_the_version_a_config_update_writes_may_be_given_by_its_completion_only(found):
    """The workload learns the version once it has read the channel's config: an invoke
    without it is superseded like one with it."""
    assert found("version-at-completion", "lost-tx")[0] == []


def test_a_config_update_tx_twice_in_one_osn_chain_is_duplicate_tx(found):
    rows, (_, d) = found("config-twice", "duplicate-tx")
    assert [(r["evidence"], r["example"]["tx"]) for r in rows] == [([d], "cfg-1")]


def test_a_block_with_more_txs_than_the_max_message_count_set_before_it_is_batch_overflow(found):
    rows, (_, d) = found("overflow", "batch-overflow")
    assert [(r["evidence"], r["example"]) for r in rows] == [
        ([d], {"channel": "ch0", "osn": "osn1", "number": 2, "txs": 3, "max_message_count": 2, "config_tx": "cfg-1",
               "config_number": 1})]


def test_a_block_with_as_many_txs_as_the_max_message_count_is_not_batch_overflow(found):
    assert found("at-max", "batch-overflow")[0] == []


def test_blocks_before_the_first_max_message_count_config_block_are_not_judged(found):
    assert found("before-first-max", "batch-overflow")[0] == []


def test_a_max_message_count_config_block_whatever_its_broadcast_answered_sets_the_max(found):
    assert [r["example"]["number"] for r in found("max-timed-out", "batch-overflow")[0]] == [1]


def test_a_batch_timeout_config_block_does_not_change_the_max_in_force(found):
    rows, _ = found("timeout-after-max", "batch-overflow")
    assert [(r["example"]["number"], r["example"]["config_tx"]) for r in rows] == [(2, "cfg-1")]


def test_a_batch_timeout_config_block_alone_sets_no_max(found):
    assert found("timeout-alone", "batch-overflow")[0] == []


def test_a_later_max_message_count_config_block_replaces_the_max_in_force(found):
    rows, _ = found("later-max", "batch-overflow")
    assert [(r["example"]["number"], r["example"]["max_message_count"]) for r in rows] == [(1, 2), (5, 1)]


def test_each_osn_chain_is_judged_by_the_config_blocks_it_holds(found):
    """osn2 delivered from after the config block: its blocks are not judged; osn1's are."""
    rows, (_, d) = found("two-chains-one-config", "batch-overflow")
    assert [(r["evidence"], r["example"]["osn"]) for r in rows] == [([d], "osn1")]


def _config_run(batches: list[list[str]], **updates: dict) -> HistoryBuilder:
    """A run whose osn1 and osn2 deliver `batches` after the final heal, with config updates
    (tx -> config_update's keywords) and a broadcast of every other tx."""
    h = HistoryBuilder()
    for tx in sorted({tx for batch in batches for tx in batch} - set(updates)):
        h.broadcast(1, "ch0", "osn1", tx)
    for tx, kw in updates.items():
        h.config_update(2, "ch0", "osn2", tx, **kw)
    h.nemesis("heal", {"healed": "all"})
    for osn in ("osn1", "osn2"):
        h.deliver(9, "ch0", osn, make_chain(batches), final=True)
    return h


@pytest.fixture(scope="module")
def judged(check_together) -> dict[str, dict]:
    """The results (check_history's) of a run with a config update not alone and a batch
    overflow, and of one whose config updates Fabric ordered as it says, checked as one batch."""
    return check_together({
        "invalid": _config_run([["tx-1"], ["cfg-1", "tx-2"], ["tx-3", "tx-4", "tx-5"]], **_MAX_2),
        "valid": _config_run([["tx-1", "tx-2", "tx-3"], ["cfg-1"], ["tx-4", "tx-5"], ["cfg-3"], ["tx-6"]],
                             **_MAX_2, **{"cfg-2": dict(version=2, max_message_count=4),
                                          "cfg-3": dict(version=2, batch_timeout_ms=800)})})


def test_config_not_alone_and_batch_overflow_make_the_run_invalid(judged):
    results = judged["invalid"]
    assert (results["valid"], sorted(results["anomalies"]),
            {a: results["anomalies"][a]["count"] for a in results["anomalies"]}) == (
        False, ["batch-overflow", "config-not-alone"], {"batch-overflow": 2, "config-not-alone": 2})


def test_a_run_whose_config_updates_fabric_ordered_as_it_says_is_valid(judged):
    """Alone in their blocks, the blocks after them within the max, one superseded."""
    results = judged["valid"]
    assert (results["valid"], results["anomalies"]) == (True, {})
