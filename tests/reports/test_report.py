"""report.html: verdict first, evidence that links to its ops, honest about caps and missing files."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from html_structure import parse_page
from run_builder import ALL_ANOMALIES

from reports import history_digest
from reports.report import write_report
from reports.run_files import RunDirError


@pytest.mark.parametrize("name", ["clean", "anomalous", "empty", "large"])
def test_report_html_parses_with_balanced_tags(reports, name):
    assert parse_page(reports[name]).errors == []


@pytest.mark.parametrize("name", ["clean", "anomalous", "empty", "large"])
def test_element_ids_are_unique(reports, name):
    ids = parse_page(reports[name]).ids
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("name", ["clean", "anomalous", "large"])
def test_every_in_page_link_has_its_target(reports, name):
    page = parse_page(reports[name])
    targets = {h[1:] for h in page.hrefs if h.startswith("#")}
    assert targets - set(page.ids) == set()


def test_every_evidence_index_links_to_an_op_anchor(reports, runs):
    import json

    results = json.loads((runs["anomalous"] / "results.json").read_text())
    evidence = {i for body in results["anomalies"].values() for i in body["evidence"]}
    page = parse_page(reports["anomalous"])
    assert {f"op-{i}" for i in evidence} <= set(page.ids)
    assert {f"#op-{i}" for i in evidence} <= set(page.hrefs)


@pytest.mark.parametrize("name", ["clean", "anomalous", "empty", "large"])
def test_page_loads_nothing_from_the_network(reports, name):
    page = parse_page(reports[name])
    external = [u for u in page.hrefs + page.srcs if re.match(r"(https?:)?//", u)]
    assert external == [] and "@import" not in reports[name]


def test_clean_run_verdict_is_valid_and_says_nothing_was_lost(reports):
    html = reports["clean"]
    assert re.search(r'class="verdict valid"', html)
    assert "No lost, reordered or forked data" in html


def test_anomalous_run_verdict_is_invalid(reports):
    assert 'class="verdict invalid"' in reports["anomalous"]


def test_verdict_comes_before_any_anomaly_detail(reports):
    html = reports["anomalous"]
    assert html.index('id="verdict"') < html.index('id="anomalies"') < html.index('id="anomaly-lost-write"')


@pytest.mark.parametrize("anomaly", ALL_ANOMALIES)
def test_each_anomaly_type_has_its_own_section_with_count(reports, anomaly):
    assert re.search(rf'<h3 id="anomaly-{anomaly}">{anomaly} × \d+', reports["anomalous"])


def test_verdict_banner_lists_failing_types_with_counts(reports):
    banner = reports["anomalous"].split('id="verdict"')[1].split("</section>")[0]
    assert "lost-write × 1" in banner and "block-fork × 2" in banner


def test_duplicates_are_marked_allowed_without_idempotence(reports):
    row = reports["anomalous"].split('href="#anomaly-duplicate">')[1].split("</tr>")[0]
    assert 'class="role allowed"' in row


def test_headline_tiles_count_lost_writes_and_forks(reports):
    html = reports["anomalous"]
    assert re.search(r'<div class="n">2</div><div class="k">lost</div>', html)
    assert re.search(r'<div class="n">3</div><div class="k">forked chain</div>', html)


def test_availability_counts_ok_writes_over_attempted(reports):
    assert "availability: 49 ok / 50 writes" in reports["anomalous"]


def test_scenario_and_variant_settings_are_shown(reports):
    html = reports["anomalous"]
    assert "kafka.unclean.leader.election.enable" in html and "partition-halves" in html


def test_plots_are_inline_png_images(reports):
    srcs = parse_page(reports["anomalous"]).srcs
    assert len(srcs) == 4 and all(s.startswith("data:image/png;base64,") for s in srcs)


def test_offset_view_marks_acked_offset_missing_from_final_read(reports):
    table = reports["anomalous"].split(">t0 / partition 0</h3>")[1].split("</table>")[0]
    first_row = table.split("<tr class=")[1]
    assert "missing" in first_row.split(">")[0] and "<td>0</td>" in first_row


def test_offset_view_shows_each_reader_as_a_column(reports):
    table = reports["anomalous"].split(">t0 / partition 1</h3>")[1].split("</table>")[0]
    assert all(f"<th>{r}</th>" in table for r in ("acked send", "poll c1", "final read"))


def test_fork_view_names_which_osn_holds_which_hash(reports):
    html = reports["anomalous"]
    fork = html.split("Fork view")[1].split("</table>")[0]
    assert "<th>osn2</th>" in fork and "ff00000000000000" in fork and "aa00000000000000" in fork


def test_clean_run_has_no_fork_view(reports):
    assert "Fork view" not in reports["clean"]
    assert "same hash at every height" in reports["clean"]


def test_fault_table_lists_partition_and_kill_with_heal_times(reports):
    faults = reports["anomalous"].split('<h2 id="faults">')[1].split("</table>")[0]
    assert "partition kafka1,zk1" in faults and "kill osn2" in faults and "not healed" not in faults


def test_empty_history_says_so_and_names_missing_files(reports):
    html = reports["empty"]
    assert "The history is empty" in html
    assert "run.json is missing" in html and "results.json is missing" in html
    assert 'class="verdict unknown"' in html


def test_large_history_timeline_is_capped_and_says_so(reports):
    html = reports["large"]
    assert html.count('<tr id="tl-') <= history_digest.TIMELINE_CAP + history_digest.CONTEXT_CAP
    assert f"Capped: the first {history_digest.TIMELINE_CAP} ops" in html


def test_evidence_beyond_the_timeline_cap_still_has_its_anchor(reports, runs):
    import json

    evidence = json.loads((runs["large"] / "results.json").read_text())["anomalies"]["lost-write"]["evidence"]
    page = parse_page(reports["large"])
    assert all(i > 2 * history_digest.TIMELINE_CAP for i in evidence)
    assert {f"op-{i}" for i in evidence} <= set(page.ids)


def test_large_history_page_stays_small(reports):
    assert len(reports["large"].encode()) < 2_000_000


def test_evidence_op_missing_from_history_is_said_not_dropped(tmp_path, runs):
    import json
    import shutil

    run = shutil.copytree(runs["clean"], tmp_path / "run")
    results = json.loads((run / "results.json").read_text())
    results["anomalies"] = {"lost-write": {"count": 1, "examples": [], "evidence": [999_999]}}
    (run / "results.json").write_text(json.dumps(results))
    page = parse_page(write_report(run).read_text())
    assert "op-999999" in page.ids and "not in the history" in "".join(page.text)


def test_write_report_also_writes_junit(runs):
    write_report(runs["clean"])
    assert (runs["clean"] / "junit.xml").is_file()


def test_missing_directory_is_a_run_dir_error(tmp_path):
    with pytest.raises(RunDirError, match="not a directory"):
        write_report(tmp_path / "absent")


def test_directory_without_history_is_a_run_dir_error(tmp_path):
    with pytest.raises(RunDirError, match="no history.jsonl"):
        write_report(tmp_path)


def test_unparseable_history_lines_are_counted_not_fatal(tmp_path, runs):
    import shutil

    run = shutil.copytree(runs["clean"], tmp_path / "run")
    with open(run / "history.jsonl", "a") as fh:
        fh.write('{"index": 9999, "time": 1, "proc')
    assert "1 history lines could not be parsed" in write_report(Path(run)).read_text()


def test_unchecked_run_shows_no_reassuring_zero_counts(reports):
    assert '<div class="n">–</div><div class="k">lost</div>' in reports["empty"]


def test_evidence_op_row_names_the_anomaly_it_supports(reports):
    row = reports["anomalous"].split('<tr id="op-25">')[1].split("</tr>")[0]
    assert 'href="#anomaly-aborted-read"' in row and "not-enough-replicas" in row


def test_checker_unknown_reasons_and_warnings_are_shown(tmp_path, runs):
    import json
    import shutil

    run = shutil.copytree(runs["clean"], tmp_path / "run")
    results = json.loads((run / "results.json").read_text())
    results["checkers"]["kafka"] = {"valid": "unknown", "anomalies": [], "unknown": ["no final read of t0/1"]}
    results["warnings"] = ["3 ops without completion"]
    (run / "results.json").write_text(json.dumps(results))
    html = write_report(run).read_text()
    assert "kafka could not judge: no final read of t0/1" in html and "3 ops without completion" in html


def test_results_idempotent_flag_makes_duplicates_fail(tmp_path, runs):
    import json
    import shutil

    run = shutil.copytree(runs["anomalous"], tmp_path / "run")
    results = json.loads((run / "results.json").read_text())
    results["idempotent"] = True
    (run / "results.json").write_text(json.dumps(results))
    row = write_report(run).read_text().split('href="#anomaly-duplicate">')[1].split("</tr>")[0]
    assert 'class="role fails"' in row


def test_nested_example_fields_are_shown_readably(tmp_path, runs):
    import json
    import shutil

    run = shutil.copytree(runs["anomalous"], tmp_path / "run")
    results = json.loads((run / "results.json").read_text())
    held = [{"osn": "osn1", "hash": "aa" * 32}, {"osn": "osn2", "hash": "ff" * 32}]
    results["anomalies"]["block-fork"]["examples"] = [{"channel": "ch0", "number": 3, "held": held}]
    (run / "results.json").write_text(json.dumps(results))
    html = write_report(run).read_text()
    assert "osn=osn1 hash=aaaaaaaaaa…aaaaaa; osn=osn2 hash=ffffffffff…ffffff" in html


def test_fork_named_only_by_a_block_fork_example_is_in_the_fork_view(tmp_path, runs):
    import json
    import shutil

    run = shutil.copytree(runs["clean"], tmp_path / "run")
    results = json.loads((run / "results.json").read_text())
    held = [{"osn": "osn1", "hash": "12" * 32}, {"osn": "osn3", "hash": "34" * 32}]
    results["anomalies"] = {"block-fork": {"count": 1, "examples": [{"channel": "ch9", "number": 77, "held": held}],
                                           "evidence": []}}
    (run / "results.json").write_text(json.dumps(results))
    fork = write_report(run).read_text().split("Fork view")[1].split("</table>")[0]
    assert "<td>ch9</td><td>77</td>" in fork and "3434343434343434" in fork


def test_verdict_against_a_variant_promise_of_valid_is_flagged_unexpected(tmp_path, runs):
    import json
    import shutil

    run = shutil.copytree(runs["anomalous"], tmp_path / "run")
    meta = json.loads((run / "run.json").read_text())
    meta["variant"]["expect"] = {"partition-halves": "valid"}
    (run / "run.json").write_text(json.dumps(meta))
    assert "UNEXPECTED: variant unclean-election promises valid under partition-halves" in write_report(run).read_text()


def test_invalid_verdict_allowed_by_the_variant_says_as_expected(reports):
    assert "As the variant expects under partition-halves: invalid-possible" in reports["anomalous"]


def test_banner_names_the_durability_settings(reports):
    banner = reports["anomalous"].split('id="verdict"')[1].split("</section>")[0]
    assert "acks=all" in banner and "unclean.leader.election.enable=true" in banner


def test_banner_names_the_orderer_implementation_that_ran(reports):
    banner = reports["anomalous"].split('id="verdict"')[1].split("</section>")[0]
    assert "orderer: fabric-1.4.12" in banner


def test_allowed_duplicates_are_not_counted_as_data_going_wrong(reports):
    html = reports["anomalous"]
    assert '<div class="tile allowed"><div class="n">2</div><div class="k">duplicated (allowed)' in html
    assert "allowed by this configuration: duplicated (2)" in html


def test_timeline_past_its_cap_shows_the_ops_around_evidence(reports, runs):
    import json

    evidence = json.loads((runs["large"] / "results.json").read_text())["anomalies"]["lost-write"]["evidence"]
    html = reports["large"]
    assert f'<tr id="tl-{evidence[0]}">' in html and "ops not shown …" in html


def test_anomaly_sections_link_to_the_views_that_show_them(reports):
    lost = reports["anomalous"].split('id="anomaly-lost-write"')[1].split("<h3")[0]
    fork = reports["anomalous"].split('id="anomaly-block-fork"')[1].split("<h3")[0]
    assert 'href="#offsets-t0-0"' in lost and 'href="#forks"' in fork


def test_a_history_that_proves_nothing_is_unknown_on_the_page_with_its_reason(tmp_path, runs):
    import json
    import shutil

    run = shutil.copytree(runs["clean"], tmp_path / "run")
    results = json.loads((run / "results.json").read_text())
    reason = "the history proves nothing: no client op completed ok that sent or read anything"
    results.update(valid="unknown", checkers={}, unknown=[reason])
    (run / "results.json").write_text(json.dumps(results))
    html = write_report(run).read_text()
    banner = html.split('class="verdict unknown"')[1].split("</div>")[0]
    assert f"Undecided: the history cannot be judged: {reason}" in html and f"unknown: {reason}" in html, banner


def test_an_unknown_verdict_names_the_checker_that_could_not_decide_and_on_what(tmp_path, runs):
    """Never "the checkers could not decide" alone: which checker, which anomaly, where."""
    import json
    import shutil

    run = shutil.copytree(runs["clean"], tmp_path / "run")
    results = json.loads((run / "results.json").read_text())
    results.update(valid="unknown", unknown=[], checkers={
        "kafka": {"valid": True, "anomalies": [], "not_judged": {}},
        "ordering": {"valid": "unknown", "anomalies": ["lagging-osn"],
                     "not_judged": {"lost-tx": ["no final deliver of channel ch1 ended ok", "ch2 too"]}}})
    (run / "results.json").write_text(json.dumps(results))
    html = write_report(run).read_text()
    assert ("Undecided: ordering found lagging-osn, which leaves it undecided; could not judge lost-tx: "
            "no final deliver of channel ch1 ended ok (and 1 more)") in html


def test_results_written_apart_from_their_history_are_reported_from_the_history_they_name(tmp_path, runs):
    import json
    import shutil

    source = shutil.copytree(runs["anomalous"], tmp_path / "elsewhere")
    history = source / "some-other-tool.jsonl"
    (source / "history.jsonl").rename(history)
    out = tmp_path / "out"
    out.mkdir()
    results = json.loads((source / "results.json").read_text())
    (out / "results.json").write_text(json.dumps(dict(results, history=str(history))))
    html = write_report(out).read_text()
    assert '<tr id="op-25">' in html and "not-enough-replicas" in html  # ops read from the named history
    (out / "results.json").write_text(json.dumps(dict(results, history=str(tmp_path / "gone.jsonl"))))
    with pytest.raises(RunDirError, match="holds no history.jsonl, nor does its results.json name one that exists"):
        write_report(out)


def test_banner_names_the_kafka_client_that_ran(runs, tmp_path):
    import json
    import shutil

    run = shutil.copytree(runs["anomalous"], tmp_path / "run")
    meta = json.loads((run / "run.json").read_text())
    meta["client"] = {"implementation": "java", "version": "4.4.0"}
    (run / "run.json").write_text(json.dumps(meta))
    banner = write_report(run).read_text().split('id="verdict"')[1].split("</section>")[0]
    assert "client: java 4.4.0" in banner
    meta["client"] = {"implementation": "librdkafka", "version": "2.3.0", "confluent_kafka": "2.3.0", "process": "own"}
    (run / "run.json").write_text(json.dumps(meta))
    banner = write_report(run).read_text().split('id="verdict"')[1].split("</section>")[0]
    assert "client: librdkafka 2.3.0 (confluent-kafka 2.3.0, its own process)" in banner


def test_a_stalled_osns_cause_is_read_from_its_log_and_the_channels_offsets(tmp_path):
    """The case of a restarted orderer asking for records retention had deleted: its start
    offset is below the partition's log start, and the sentence says so."""
    from reports.osn_evidence import last_distinct_problems, sentence, stalled_causes

    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "osn2.log").write_text(
        "2026-12-07 10:00:00.1 UTC [orderer.consensus.kafka] startThread -> INFO 01 [channel: ch1] Starting chain "
        "with last persisted offset 16 and last recorded block [16]\n"
        "2026-12-07 10:00:01.2 UTC [orderer.consensus.kafka] try -> WARN 02 [channel: ch1] Need to retry because "
        "process failed = kafka server: The requested offset is outside the range of offsets\n"
        "2026-12-07 10:00:02.3 UTC [orderer.consensus.kafka] try -> WARN 03 [channel: ch1] Need to retry because "
        "process failed = kafka server: The requested offset is outside the range of offsets\n")
    (tmp_path / "evidence").mkdir()
    (tmp_path / "evidence" / "channels.json").write_text('{"ch1": {"log_start": 60, "log_end": 91}}')
    (cause,) = stalled_causes(tmp_path, [{"channel": "ch1", "osn": "osn2", "height": 17, "channel_height": 91}])
    assert (cause["start_offset"], cause["log_start"], cause["log_end"]) == (17, 60, 91)
    assert [p["count"] for p in cause["problems"]] == [2]
    assert sentence(cause) == ("osn2 stopped serving ch1 after the faults (height 17 of 91): it restarted asking "
                               "Kafka for offset 17, below the log start offset 60 of its partition, whose records "
                               "had been deleted.")
    assert last_distinct_problems("INFO all fine\n") == []


def test_an_unavailable_partitions_leader_and_isr_history_is_read_from_the_brokers_logs(tmp_path):
    from reports.osn_evidence import unavailable_causes

    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "kafka1.log").write_text(
        "[2026-12-07 10:00:01,000] INFO [Partition t0-1 broker=1] Shrinking ISR from 1,2,3 to 1 (kafka.cluster.Partition)\n"
        "[2026-12-07 10:00:03,000] INFO [Broker id=1] Follower t0-10 starts at leader epoch 2 (state.change.logger)\n")
    (tmp_path / "logs" / "kafka2.log").write_text(
        "[2026-12-07 10:00:02,000] INFO [Controller id=2 epoch=1] Changed partition t0-1 from OnlinePartition to "
        "OfflinePartition (state.change.logger)\n")
    (cause,) = unavailable_causes(tmp_path, [{"topic": "t0", "partition": 1, "attempts": 3}])
    assert [line.split("]")[0] for line in cause["history"]] == ["[2026-12-07 10:00:01,000", "[2026-12-07 10:00:02,000"]
    assert cause["history"][1].endswith("[kafka2]")
