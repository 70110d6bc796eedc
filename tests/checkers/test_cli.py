"""`ordeal check`: exit codes, and one clear line naming the line of bad input."""
from __future__ import annotations

import json
from pathlib import Path

from tests.histories import HistoryBuilder
from cli.main import main


def _history(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "h.jsonl"
    path.write_text("".join(line + "\n" for line in lines))
    return path


def _clean() -> list[str]:
    h = HistoryBuilder()
    h.send(0, "t0", 1, offset=0)
    h.final_read(9, "t0", 0, [(0, 1)])
    return h.lines()


def test_valid_history_exits_0(spark, tmp_path):
    assert main(["check", str(_history(tmp_path, _clean()))]) == 0


def test_client_crash_ops_are_read_and_judge_nothing(spark, tmp_path):
    """A history with Jepsen's crash ops is read, and its sends are judged as without them:
    all read back is valid; a send acknowledged before its process crashed and gone is lost."""
    h = HistoryBuilder()
    h.send(0, "t0", 1, offset=0)
    h.call(0, "client-crash", None, None, type="info", error="crashed")
    h.send(6, "t0", 2, offset=1)
    h.final_read(9, "t0", 0, [(0, 1), (1, 2)])
    assert main(["check", str(_history(tmp_path, h.lines()))]) == 0
    lost = HistoryBuilder()
    lost.send(0, "t0", 1, offset=0)
    lost.call(0, "client-crash", None, None, type="info", error="crashed")
    lost.final_read(9, "t0", 0, [])
    assert main(["check", str(_history(tmp_path, lost.lines()))]) == 1


def test_lost_write_exits_1(spark, tmp_path):
    h = HistoryBuilder()
    h.send(0, "t0", 1, offset=0)
    h.final_read(9, "t0", 0, [])
    assert main(["check", str(_history(tmp_path, h.lines()))]) == 1


def test_acknowledged_send_without_final_read_exits_3(spark, tmp_path):
    h = HistoryBuilder()
    h.send(0, "t0", 1, offset=0)
    assert main(["check", str(_history(tmp_path, h.lines()))]) == 3


def test_unparseable_middle_line_exits_2_naming_it(spark, tmp_path, capsys):
    lines = _clean()
    lines.insert(1, '{"index": 9, "type": ')
    code = main(["check", str(_history(tmp_path, lines))])
    assert (code, "line 2:" in capsys.readouterr().err) == (2, True)


def test_torn_last_line_is_skipped_with_a_warning_naming_it(spark, tmp_path, capsys):
    lines = _clean() + ['{"index": 4, "time": 5000, "process": 0, "ty']
    code = main(["check", str(_history(tmp_path, lines))])
    assert (code, "line 5: skipped a torn last line" in capsys.readouterr().err) == (0, True)


def test_unknown_f_exits_2_naming_its_line(spark, tmp_path, capsys):
    lines = _clean()
    lines[2] = json.dumps(dict(json.loads(lines[2]), f="frobnicate"))
    code = main(["check", str(_history(tmp_path, lines))])
    assert (code, "line 3: unknown f frobnicate" in capsys.readouterr().err) == (2, True)


def test_completion_without_invoke_exits_2_naming_its_line(spark, tmp_path, capsys):
    lines = _clean()
    del lines[0]
    code = main(["check", str(_history(tmp_path, lines))])
    assert (code, "line 1: a ok completion of process 0 without its invoke" in capsys.readouterr().err) == (2, True)


def test_missing_history_exits_2(spark, tmp_path, capsys):
    code = main(["check", str(tmp_path / "nowhere")])
    assert (code, capsys.readouterr().err.count("\n")) == (2, 1)


def test_a_first_check_says_it_converts_and_a_re_check_that_it_reuses_the_copy(spark, tmp_path, capsys):
    path = _history(tmp_path, _clean())
    assert main(["check", str(path)]) == 0
    first = capsys.readouterr().err
    assert main(["check", str(path)]) == 0
    again = capsys.readouterr().err
    assert f"reading {path} (0.0 MiB) into {tmp_path / 'h.parquet'}" in first and "reusing" not in first
    assert f"reusing {tmp_path / 'h.parquet'}" in again and "reading" not in again
    assert "checking 4 ops" in again


def _lost_write_hidden(field: str, wrong) -> list[str]:
    """One acknowledged send (value 2, offset 1) missing from the final read, with `field` of
    that send's ok completion replaced by a value of the wrong type."""
    h = HistoryBuilder()
    h.send(0, "t0", 1, offset=0)
    _, ack = h.send(0, "t0", 2, offset=1)
    h.final_read(9, "t0", 0, [(0, 1)])
    h.ops[ack]["value"][field] = wrong
    return h.lines()


def test_a_lost_write_hidden_behind_a_wrong_type_is_refused_naming_its_line(spark, tmp_path, capsys):
    for field, wrong in [("offset", "0"), ("offset", "zero"), ("offset", 0.5), ("offset", True),
                         ("offset", 2**70), ("value", "1"), ("value", {"a": 1}), ("value", [2]),
                         ("partition", "0"), ("topic", 0)]:
        code = main(["check", str(_history(tmp_path, _lost_write_hidden(field, wrong)))])
        err = capsys.readouterr().err
        assert (field, wrong, code, f"line 4: value.{field} is" in err) == (field, wrong, 2, True), err


def test_wrong_types_are_counted_and_only_fields_the_checks_read_count(spark, tmp_path, capsys):
    h = HistoryBuilder()
    h.send(0, "t0", 1, offset=0)
    h.broadcast(1, "ch0", "osn1", "tx-1")
    h.nemesis("kill", {"node": ["n1", "n2"]})  # free-form nemesis value: not read
    h.final_read(9, "t0", 0, [(0, 1)])
    lines = [json.loads(x) for x in h.lines()]
    lines[1]["value"]["extra"] = {"any": "thing"}  # a field no check reads
    assert main(["check", str(_history(tmp_path, [json.dumps(x) for x in lines]))]) == 3  # no final deliver
    capsys.readouterr()
    lines[1]["value"]["offset"] = "0"
    lines[3]["value"]["status"] = 1
    lines[3]["time"] = "soon"
    code = main(["check", str(_history(tmp_path, [json.dumps(x) for x in lines]))])
    err = capsys.readouterr().err
    assert (code, "line 2: value.offset is \"0\", not an integer" in err, "(2 lines have" in err) == (2, True, True), err


def test_a_complete_last_line_that_fails_validation_is_an_error_not_torn(spark, tmp_path, capsys):
    lines = _clean() + ['{"index": 4, "time": 5000}']
    code = main(["check", str(_history(tmp_path, lines))])
    err = capsys.readouterr().err
    assert (code, "line 5:" in err, "torn" in err) == (2, True, False)


def test_a_line_nested_too_deeply_is_one_line_and_leaves_no_parquet(spark, tmp_path, capsys):
    deep = '{"index": 0, "time": 1, "process": 0, "type": "invoke", "f": "send", "value": ' \
           + "[" * 100_000 + "]" * 100_000 + "}"
    path = _history(tmp_path, [deep])
    code = main(["check", str(path)])
    err = capsys.readouterr().err
    assert (code, "line 1: nested too deeply" in err, "Traceback" in err,
            (tmp_path / "h.parquet").exists()) == (2, True, False, False)


def _run(path: Path, lines: list[str]) -> Path:
    path.mkdir(parents=True)
    (path / "history.jsonl").write_text("".join(line + "\n" for line in lines))
    return path


def _lost() -> list[str]:
    h = HistoryBuilder()
    h.send(0, "t0", 1, offset=0)
    h.final_read(9, "t0", 0, [])
    return h.lines()


def _unread() -> list[str]:
    h = HistoryBuilder()
    h.send(0, "t0", 1, offset=0)
    return h.lines()


def test_worst_code_is_bad_input_then_invalid_then_unknown_then_valid():
    from cli.check import worst
    assert [worst(c) for c in ([0, 3, 1, 2], [0, 3, 1], [3, 0, 3], [0, 0], [])] == [2, 1, 3, 0, 0]


def test_a_store_tree_is_checked_run_by_run_in_one_call_with_a_line_each_and_a_total(spark, tmp_path, capsys):
    store = tmp_path / "store"
    valid = _run(store / "a" / "20240101T000000Z", _clean())
    lost = _run(store / "a" / "20240101T000001Z", _lost())
    unknown = _run(store / "b" / "20240101T000000Z", _unread())
    (store / "latest").symlink_to(unknown)  # followed by nothing: each run once
    assert main(["check", str(store)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert [line.split("  ")[0] for line in out[:3]] == ["valid: true", "valid: false", 'valid: "unknown"']
    assert [line.endswith(str(run / "results.json")) for line, run in zip(out, (valid, lost, unknown))] == [True] * 3
    assert out[3:] == ["total: 3 histories: valid 1, invalid 1, unknown 1"]
    assert [json.loads((run / "results.json").read_text())["valid"] for run in (valid, lost, unknown)] == [
        True, False, "unknown"]


def test_a_history_that_cannot_be_read_is_bad_input_the_others_are_still_checked(spark, tmp_path, capsys):
    good = _run(tmp_path / "good", _clean())
    bad = _run(tmp_path / "bad", ['{"index": 0, "type": '] + _clean())
    code = main(["check", str(bad), str(good)])
    captured = capsys.readouterr()
    assert (code, (good / "results.json").is_file(), "line 1:" in captured.err,
            captured.out.splitlines()[-1]) == (2, True, True, "total: 2 histories: valid 1, bad input 1")


def test_ten_histories_in_one_folder_are_checked_in_one_call_each_with_results_named_after_it(spark, tmp_path,
                                                                                                capsys):
    folder = tmp_path / "histories"
    folder.mkdir()
    clean = _history(tmp_path, _clean()).read_text()
    for i in range(9):
        (folder / f"h{i}.jsonl").write_text(clean)
    (folder / "h9.jsonl").write_text("\n".join(_lost()) + "\n")
    code = main(["check", *sorted(str(p) for p in folder.glob("*.jsonl"))])
    out = capsys.readouterr().out.splitlines()
    assert code == 1 and out[-1] == "total: 10 histories: valid 9, invalid 1"
    verdicts = {i: json.loads((folder / f"h{i}" / "results.json").read_text())["valid"] for i in range(10)}
    assert verdicts == {**{i: True for i in range(9)}, 9: False}
    assert not (folder / "results.json").exists()


def test_several_histories_with_out_get_one_folder_each_named_after_them(spark, tmp_path, capsys):
    a = _run(tmp_path / "run-a", _clean())
    b = tmp_path / "loose" / "b.jsonl"
    b.parent.mkdir()
    b.write_text((a / "history.jsonl").read_text())
    assert main(["check", str(a), str(b), "--out", str(tmp_path / "out")]) == 0
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["b", "run-a"]
    assert all((tmp_path / "out" / name / "results.json").is_file() for name in ("b", "run-a"))


def test_a_directory_with_no_history_under_it_is_bad_input(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert main(["check", str(tmp_path / "empty")]) == 2
    assert capsys.readouterr().err.strip() == f"ordeal check: {tmp_path / 'empty'}: no history.jsonl in it or under it"


def test_a_history_that_proves_nothing_exits_3_and_says_why(tmp_path, capsys):
    h = HistoryBuilder()
    h.send(0, "t0", 1, type="fail")
    assert main(["check", str(_history(tmp_path, h.lines()))]) == 3
    assert json.loads((tmp_path / "results.json").read_text())["unknown"][0].startswith("the history proves nothing")


def test_any_checked_history_gets_its_report_at_once_or_later(spark, tmp_path, capsys):
    path = _history(tmp_path, _lost())
    assert main(["check", str(path), "--out", str(tmp_path / "out"), "--report"]) == 1
    page = tmp_path / "out" / "report.html"
    assert page.is_file() and 'class="verdict invalid"' in page.read_text()
    page.unlink()
    capsys.readouterr()
    assert main(["report", str(tmp_path / "out")]) == 0
    assert capsys.readouterr().out.strip() == str(page) and "lost-write" in page.read_text()
