"""compare.html: a variants x scenarios matrix whose cells link to each run's report."""
from __future__ import annotations

from pathlib import Path

import pytest
from html_structure import parse_page

from reports.compare import find_runs, write_compare
from reports.run_files import RunDirError


@pytest.fixture(scope="module")
def compare_page(runs, tmp_path_factory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("cmp") / "compare.html"
    write_compare([runs["clean"].parent], out)
    return out, out.read_text()


def test_store_directory_is_searched_for_runs(runs):
    assert set(find_runs([runs["clean"].parent])) == {runs["clean"].resolve(), runs["anomalous"].resolve()}


def test_matrix_has_a_row_per_variant_and_a_column_per_scenario(compare_page):
    html = compare_page[1]
    assert "<th>fabric-recommended</th>" in html and "<th>unclean-election</th>" in html
    assert "<th>partition-halves</th>" in html


def test_cells_show_verdict_anomalies_availability_and_latency(compare_page):
    html = compare_page[1]
    assert 'class="badge invalid"' in html and 'class="badge valid"' in html
    assert "lost-write</b> 1" in html
    assert "availability 98.0% (49 / 50)" in html and "p99" in html


def test_every_report_link_points_at_an_existing_report(compare_page):
    out, html = compare_page
    links = [h for h in parse_page(html).hrefs if h.endswith("report.html")]
    assert len(links) == 2 and all((out.parent / h).resolve().is_file() for h in links)


def test_compare_page_parses(compare_page):
    assert parse_page(compare_page[1]).errors == []


def test_directory_without_runs_is_a_run_dir_error(tmp_path):
    with pytest.raises(RunDirError, match="no run directory"):
        write_compare([tmp_path], tmp_path / "compare.html")


def test_run_named_directly_without_results_is_shown_unchecked(runs, tmp_path):
    html = write_compare([runs["empty"]], tmp_path / "c.html")[0].read_text()
    assert "not checked: no results.json" in html


def test_failing_anomalies_are_marked_apart_from_allowed_ones(compare_page):
    html = compare_page[1]
    assert '<b class="fails">lost-write</b>' in html and '<b class="allowed">duplicate</b>' in html


def test_a_cell_with_many_runs_shows_the_newest_and_counts_the_rest(runs, tmp_path):
    import json
    import shutil

    from reports.compare import RUNS_PER_CELL

    for n in range(RUNS_PER_CELL + 2):
        run = shutil.copytree(runs["clean"], tmp_path / "store" / f"run{n}")
        meta = json.loads((run / "run.json").read_text())
        meta["started"] = f"2026-11-{10 + n}T00:00:00Z"
        (run / "run.json").write_text(json.dumps(meta))
    html = write_compare([tmp_path / "store"], tmp_path / "c.html")[0].read_text()
    assert "2 older runs not shown" in html and "run6" in html and ">run0 ·" not in html


def test_runs_of_one_variant_on_different_clients_are_rows_of_their_own(runs, tmp_path):
    """A suite's clients axis: the same variant and scenario on two clients are two rows,
    each named for its client (scenario.json's client)."""
    import json
    import shutil

    for name, client in (("rdkafka", {"implementation": "librdkafka", "version": "2.3.0"}),
                         ("java", {"implementation": "java"}), ("own", None)):
        run = shutil.copytree(runs["clean"], tmp_path / "store" / name)
        meta = json.loads((run / "run.json").read_text())
        meta["scenario"] = {**meta["scenario"], "client": client}
        (run / "run.json").write_text(json.dumps(meta))
    _, matrix = write_compare([tmp_path / "store"], tmp_path / "c.html")
    variant = json.loads((runs["clean"] / "run.json").read_text())["variant"]["name"]
    assert matrix.variants == [variant, f"{variant} (java)", f"{variant} (librdkafka@2.3.0)"]


def test_compare_prints_the_matrix_as_a_table_with_verdicts_and_counts(runs, tmp_path):
    from reports.compare import matrix_text

    _, matrix = write_compare([runs["clean"].parent], tmp_path / "c.html")
    lines = matrix_text(matrix).splitlines()
    assert lines[0] == "| scenario | " + " | ".join(matrix.variants) + " |"
    row = next(line for line in lines if line.startswith("| partition-halves |"))
    assert "invalid (" in row and "lost-write 1" in row


def test_several_runs_in_a_cell_are_tallied(runs, tmp_path):
    import shutil

    from reports.compare import build_matrix, cell_text, summarize

    for n in range(3):
        shutil.copytree(runs["anomalous"], tmp_path / "store" / f"run{n}")
    matrix = build_matrix([summarize(p, tmp_path) for p in find_runs([tmp_path / "store"])])
    (cell,) = matrix.cells.values()
    assert cell_text(cell).startswith("invalid 3/3 (lost-write 3 in 3/3")
