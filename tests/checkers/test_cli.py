"""`ordeal check`: exit codes, and one clear line naming the line of bad input."""
from __future__ import annotations

import json
from pathlib import Path

from harness.cli import main

from checkers.synthetic import HistoryBuilder


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
