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
