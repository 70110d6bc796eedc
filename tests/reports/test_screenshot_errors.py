"""The screenshot script fails in one line, not a stack trace, when it cannot run."""
from __future__ import annotations

import pytest

from reports import screenshot


def test_missing_chromium_is_a_screenshot_error(tmp_path, monkeypatch):
    monkeypatch.setattr(screenshot, "chromium_path", lambda: None)
    with pytest.raises(screenshot.ScreenshotError, match="Debian package: chromium"):
        screenshot.screenshot_html(tmp_path / "report.html", tmp_path / "out.png")


def test_script_on_a_missing_run_dir_exits_2_with_one_line(tmp_path, capsys):
    assert screenshot.main([str(tmp_path / "absent")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("screenshot: ") and "\n" not in err
