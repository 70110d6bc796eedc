"""`ordeal report` and `ordeal compare`: paths printed, bad input answered in one line with exit 2."""
from __future__ import annotations

from cli.main import main


def test_report_command_writes_report_and_exits_zero(runs, capsys):
    assert main(["report", str(runs["clean"])]) == 0
    assert capsys.readouterr().out.strip().endswith("report.html")


def test_report_of_missing_directory_is_one_line_exit_2(tmp_path, capsys):
    assert main(["report", str(tmp_path / "absent")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("ordeal: ") and "\n" not in err


def test_report_of_directory_without_history_exits_2(tmp_path, capsys):
    assert main(["report", str(tmp_path)]) == 2
    assert "no history.jsonl" in capsys.readouterr().err


def test_compare_command_writes_out_file(runs, tmp_path):
    out = tmp_path / "page.html"
    assert main(["compare", str(runs["clean"]), str(runs["anomalous"]), "--out", str(out)]) == 0
    assert out.is_file()


def test_compare_of_empty_store_exits_2(tmp_path, capsys):
    assert main(["compare", str(tmp_path)]) == 2
    assert "no run directory" in capsys.readouterr().err


def test_compare_to_an_unwritable_place_is_one_line_exit_2(runs, tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main(["compare", str(runs["clean"]), "--out", str(blocker / "sub" / "c.html")]) == 2
    assert capsys.readouterr().err.startswith("ordeal: cannot write")
