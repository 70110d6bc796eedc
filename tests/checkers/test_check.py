"""check_history end to end: results.json for Kafka-only and ordering-only histories, run.json.

The histories whose results the tests read are checked once, as one batch (`judged`: each
judged as if alone, tests/checkers/test_batch.py); the tests of a check's own behaviour check
their history by itself."""
from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from checkers.check import NOTHING_PROVEN, batch_tables, check_history, read_run_info
from checkers.ingest.history import load_history
from checkers.runtime import session
from checkers.runtime.session import SessionOnDemand, fit_to_input
from tests.histories import HistoryBuilder, make_chain
from ground.run_files import RESULTS_JSON as RESULTS_FILE


def _kafka_only(lost: bool) -> HistoryBuilder:
    h = HistoryBuilder()
    h.assign(7, "c1", [("t0", 0)])
    h.send(0, "t0", 1, offset=0)
    h.send(0, "t0", 2, offset=1)
    h.send(1, "t0", 3, type="info")
    h.poll(7, "c1", [("t0", 0, 0, 1), ("t0", 0, 1, 2), ("t0", 0, 2, 3)])
    h.nemesis("heal", {"healed": "all"})
    h.final_read(9, "t0", 0, [(0, 1), (2, 3)] if lost else [(0, 1), (1, 2), (2, 3)])
    return h


def _ordering_only() -> HistoryBuilder:
    h = HistoryBuilder()
    for tx in ("tx-1", "tx-2"):
        h.broadcast(1, "ch0", "osn1", tx)
    h.nemesis("heal", {"healed": "all"})
    for osn in ("osn1", "osn2"):
        h.deliver(9, "ch0", osn, make_chain([["tx-1"], ["tx-2"]]))
    return h


def _run_dir(tmp_path: Path, h: HistoryBuilder, run: dict | None = None) -> Path:
    h.write(tmp_path / "history.jsonl")
    if run is not None:
        (tmp_path / "run.json").write_text(json.dumps(run))
    return tmp_path


@pytest.fixture(scope="module")
def judged(check_together) -> dict[str, dict]:
    """The results of every history below whose test only reads them, checked as one batch."""
    return check_together({
        "kafka-clean": _kafka_only(lost=False), "kafka-lost": _kafka_only(lost=True),
        "ordering-clean": _ordering_only(), "ordering-interrupted": _interrupted("none"),
        "errored-chain": _errored_chain(), "final-heal": _interrupted("heal"), "final-marked": _interrupted("marked"),
        "heal-mid-run": _heal_mid_run(), "kafka-interrupted": _kafka_interrupted(),
        "crash-proving-nothing": _crash_proving_nothing(), "polls-unread": _polls_unread(),
        "acked-without-offset": _acked_without_offset(), "25-unread-partitions": _unread_partitions(25),
    }, out={"ordering-clean"})


def _run_of(results: dict) -> Path:
    return Path(results["history"]).parent


def test_clean_kafka_only_history_is_valid_with_kafka_checker_only(judged):
    results = judged["kafka-clean"]
    assert (results["valid"], list(results["checkers"])) == (True, ["kafka", "liveness"])


def test_results_json_written_beside_history_counts_ops_and_seen_info_sends(judged):
    written = json.loads((_run_of(judged["kafka-clean"]) / RESULTS_FILE).read_text())
    assert (written["stats"]["by_f"]["send"], written["stats"]["info_sends_seen"]) == (
        {"invoke": 3, "ok": 2, "info": 1}, 1)


def test_lost_write_makes_results_invalid_with_its_evidence(judged):
    results = judged["kafka-lost"]
    lost = results["anomalies"]["lost-write"]
    assert (results["valid"], lost["count"], lost["evidence"], lost["examples"][0]["value"]) == (
        False, 1, [5, 12], 2)


def test_clean_ordering_only_history_is_valid_with_ordering_checker_only(judged):
    results = judged["ordering-clean"]
    assert (results["valid"], list(results["checkers"]), (_run_of(results) / "out" / RESULTS_FILE).is_file()) == (
        True, ["ordering", "liveness"], True)


def test_run_json_names_variant_scenario_and_idempotence(tmp_path):
    (tmp_path / "run.json").write_text(json.dumps({
        "scenario": {"name": "kill-leader"}, "seed": 3,
        "variant": {"name": "acks-1", "producer": {"enable_idempotence": True, "acks": "1"}}}))
    info = read_run_info(tmp_path)
    assert (info.variant, info.scenario, info.idempotent) == ("acks-1", "kill-leader", True)


def test_bare_history_has_no_variant_and_no_idempotence(tmp_path):
    info = read_run_info(tmp_path)
    assert (info.variant, info.scenario, info.idempotent) == (None, None, False)


def test_recheck_reuses_the_parquet_copy(spark, judged):
    run = _run_of(judged["kafka-clean"])  # checked first in the module's batch
    marker = next((run / "history.parquet").glob("_ordeal_source.json"))
    before = marker.stat().st_mtime_ns
    check_history(run, spark=spark)
    assert marker.stat().st_mtime_ns == before


def _interrupted(final: str) -> HistoryBuilder:
    """Broadcasts answered SUCCESS, delivers during the run that do not hold them all yet, and
    then `final`: "none" (stopped before its final delivers), "heal" (final delivers after the
    heal, missing tx-3) or "marked" (final delivers marked as the harness marks them)."""
    h = HistoryBuilder()
    for tx in ("tx-1", "tx-2", "tx-3"):
        h.broadcast(1, "ch0", "osn1", tx)
    h.deliver(9, "ch0", "osn1", make_chain([["tx-1"]]))
    h.deliver(9, "ch0", "osn2", make_chain([["tx-1"], ["tx-2"]]))
    h.nemesis("heal", {"healed": "all"})
    if final != "none":
        for osn in ("osn1", "osn2"):
            h.deliver(9, "ch0", osn, make_chain([["tx-1"], ["tx-2"]]), final=final == "marked")
    return h


def test_interrupted_ordering_run_is_unknown_not_lost_tx(judged):
    results = judged["ordering-interrupted"]
    ordering = results["checkers"]["ordering"]
    assert (results["valid"], "lost-tx" in results["anomalies"], "lagging-osn" in results["anomalies"],
            ordering["not_judged"]) == (
        "unknown", False, False,
        {"lost-tx": ["no final deliver of channel ch0 ended ok (read to the chain's end), "
                     "and it had SUCCESS broadcasts"],
         "lagging-osn": ["no final deliver of channel ch0 from osn1 ended ok (read to the chain's end)",
                         "no final deliver of channel ch0 from osn2 ended ok (read to the chain's end)"]})


def _errored_chain() -> HistoryBuilder:
    """`_interrupted("none")`, then final delivers that end incomplete, two of them refused as
    the chain is errored."""
    h = _interrupted("none")
    chain = make_chain([["tx-1"], ["tx-2"]])
    for osn, errored in (("osn2", {"errored": True}), ("osn1", {"errored": True}), ("osn3", {})):
        h.call(9, "deliver", {"channel": "ch0", "osn": osn, "from": 0, "final": True},
               {"channel": "ch0", "osn": osn, "blocks": chain, **errored}, type="info", error="incomplete")
    return h


def test_final_delivers_that_found_the_chain_errored_say_so_in_the_not_judged_reasons(judged):
    """A channel whose chain halted (a Fabric 1.4 Kafka chain after its partition lost what it
    had read) answers Broadcast SUCCESS and cuts no block again: its final delivers end
    incomplete, and each says whether a strict read was refused (workloads.ordering)."""
    results = judged["errored-chain"]
    errored = ("a strict Deliver was refused with SERVICE_UNAVAILABLE: the chain is errored (halted for good where "
               "its Kafka partition lost records the OSN had read; else cut off from Kafka)")
    assert (results["valid"], results["checkers"]["ordering"]["not_judged"]) == (
        "unknown",
        {"lost-tx": ["no final deliver of channel ch0 ended ok (read to the chain's end), and it had SUCCESS "
                     f"broadcasts; on osn1, osn2 {errored}"],
         "lagging-osn": [f"no final deliver of channel ch0 from osn1 ended ok (read to the chain's end); {errored}",
                         f"no final deliver of channel ch0 from osn2 ended ok (read to the chain's end); {errored}",
                         "no final deliver of channel ch0 from osn3 ended ok (read to the chain's end)"]})


def test_final_delivers_missing_a_tx_are_lost_tx(judged):
    for final in ("heal", "marked"):
        results = judged[f"final-{final}"]
        assert (final, results["valid"], results["anomalies"]["lost-tx"]["examples"][0]["tx"],
                results["checkers"]["ordering"]["not_judged"]) == (final, False, "tx-3", {})


def _heal_mid_run() -> HistoryBuilder:
    h = HistoryBuilder()  # a mid-run heal, then delivers that are not final: not judged
    h.deliver(9, "ch0", "osn1", make_chain([["tx-1"]]), final=True)  # an earlier, marked history part
    h.nemesis("heal", {"fault": "partition"})
    h.broadcast(1, "ch0", "osn1", "tx-2")
    h.deliver(9, "ch0", "osn1", make_chain([["tx-1"]]))
    return h


def test_marked_final_delivers_ignore_a_heal_in_the_middle_of_the_run(judged):
    results = judged["heal-mid-run"]
    assert (results["valid"], "lost-tx" in results["anomalies"]) == (False, True)


def _kafka_interrupted() -> HistoryBuilder:
    h = HistoryBuilder()
    h.send(0, "t0", 1, offset=0)
    return h


def test_interrupted_kafka_run_says_lost_write_was_not_judged(judged):
    results = judged["kafka-interrupted"]
    assert (results["valid"], results["checkers"]["kafka"]["not_judged"]) == (
        "unknown", {"lost-write": ["no final read of t0/0 which had acknowledged sends"]})


def test_a_history_that_proves_nothing_is_unknown_with_the_reason_and_without_spark(tmp_path):
    h = HistoryBuilder()  # nothing completed ok that sent or read anything
    h.send(0, "t0", 1, type="fail")
    h.send(1, "t0", 2, type="info")
    h.poll(7, "c1", [])
    h.broadcast(2, "ch0", "osn1", "tx-1", type="fail", error="service-unavailable")
    h.nemesis("heal", {"healed": "all"})
    results = check_history(_run_dir(tmp_path, h), spark=None, spark_master="no Spark may start for this")
    assert (results["valid"], results["checkers"], results["unknown"], results["stats"]["ops"]) == (
        "unknown", {}, [NOTHING_PROVEN], 9)
    assert json.loads((tmp_path / RESULTS_FILE).read_text())["unknown"] == [NOTHING_PROVEN]


def _crash_proving_nothing() -> HistoryBuilder:
    h = HistoryBuilder()
    h.send(0, "t0", 1, type="fail")
    h.op("nemesis", "info", "crash", {"node": "osn1", "role": "osn", "exit_code": 2, "oom_killed": False,
                                      "log_tail": ["panic"]})
    return h


def test_a_crash_in_a_history_that_proves_nothing_is_still_invalid(judged):
    results = judged["crash-proving-nothing"]
    assert (results["valid"], list(results["checkers"]), results["unknown"]) == (False, ["nodes"], [NOTHING_PROVEN])


def _polls_unread() -> HistoryBuilder:
    h = HistoryBuilder()
    h.assign(7, "c1", [("t0", 0), ("t0", 1)])
    h.poll(7, "c1", [("t0", 0, 0, 10), ("t0", 1, 0, 20)])
    return h


def test_polls_without_any_final_read_are_unknown_naming_the_partitions_not_judged(judged):
    results = judged["polls-unread"]
    assert (results["valid"], results["unknown"], results["checkers"]["kafka"]["not_judged"]) == (
        "unknown", [], {"poll-skip": ["no final read of t0/0 which was polled",
                                     "no final read of t0/1 which was polled"]})


def _acked_without_offset() -> HistoryBuilder:
    h = HistoryBuilder()  # acks=0: the producer learns the partition, not the offset
    h.send(0, "t0", 1, partition=3, offset=None)
    return h


def test_sends_acknowledged_without_an_offset_and_never_read_back_are_not_judged(judged):
    results = judged["acked-without-offset"]
    assert (results["valid"], results["checkers"]["kafka"]["not_judged"]) == (
        "unknown", {"lost-write": ["no final read of t0/3 which had acknowledged sends"]})


def _unread_partitions(n: int) -> HistoryBuilder:
    h = HistoryBuilder()
    for p in range(n):
        h.send(0, "t0", p, partition=p, offset=0)
    return h


def test_places_not_judged_are_listed_up_to_twenty_in_order_then_counted(judged):
    results = judged["25-unread-partitions"]
    listed = results["checkers"]["kafka"]["not_judged"]["lost-write"]
    assert listed == [f"no final read of t0/{p} which had acknowledged sends" for p in range(20)] + ["... and 5 more"]


def test_results_name_the_checked_history_by_its_absolute_path(spark, tmp_path, monkeypatch):
    _kafka_only(lost=False).write(tmp_path / "h.jsonl")
    monkeypatch.chdir(tmp_path)
    results = check_history(Path("h.jsonl"), out_dir=Path("out"), spark=spark)
    assert results["history"] == str(tmp_path / "h.jsonl")


def test_a_large_history_starts_spark_before_its_convert_a_small_one_when_a_checker_needs_it(spark, tmp_path,
                                                                                            monkeypatch):
    events = []

    class Recorded(SessionOnDemand):
        def start_early(self):
            events.append("start early")

        def get(self, ops):
            events.append("get")
            return spark

    def checked(threshold: int) -> list[str]:
        monkeypatch.setattr(session, "SMALL_INPUT_BYTES", threshold)
        events.clear()
        check_history(_run_dir(tmp_path, _kafka_only(lost=False)), spark=Recorded(),
                      progress=lambda line: events.append(line.split()[0]))
        return events[:3]

    assert checked(threshold=1) == ["start early", "reading", "get"]
    assert checked(threshold=2**30) == ["reading", "get", "checking"]


def _exchanges(df) -> int:
    """How many shuffles Spark plans for `df` (its physical plan, as the server explains it)."""
    told = io.StringIO()
    with contextlib.redirect_stdout(told):
        df.explain()
    plan = told.getvalue()
    assert "== Physical Plan ==" in plan
    return sum("Exchange" in line and "ReusedExchange" not in line for line in plan.splitlines())


def test_a_small_historys_group_bys_and_joins_shuffle_nothing(spark, tmp_path: Path) -> None:
    # A shuffle per group-by or join was most of a small check's stages (checkers.check.batch_tables).
    lone = load_history(_kafka_only(lost=True).write(tmp_path / "a.jsonl"), tmp_path / "a.parquet")
    other = load_history(_kafka_only(lost=False).write(tmp_path / "b.jsonl"), tmp_path / "b.parquet")
    for histories in ([lone], [lone, other]):
        fit_to_input(spark, sum(h.op_count for h in histories))
        tables = batch_tables(spark, histories)
        counted = tables.sends.groupBy("history", "topic").count()
        joined = counted.join(tables.records.groupBy("history", "topic").count(), ["history", "topic"])
        assert _exchanges(joined) == 0, len(histories)
        assert sorted(r["history"] for r in joined.collect()) == list(range(len(histories)))
