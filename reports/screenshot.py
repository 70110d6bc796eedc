"""Render a run's report.html to a PNG in headless Chromium, to see what a user sees first.

Uses Debian's `chromium` with every background network feature off and a fresh profile,
so the screenshot proves the page renders with no network.
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
SCREENSHOT = "report.png"


class ScreenshotError(RuntimeError):
    """Chromium is absent or did not produce a screenshot."""


def chromium_path() -> str | None:
    if Path(CHROMIUM).exists():
        return CHROMIUM
    return shutil.which("chromium")


def screenshot_html(html: Path, png: Path, width: int = 1280, height: int = 2000, timeout: float = 90) -> Path:
    """Screenshot one HTML file to png; raise ScreenshotError when that is not possible."""
    browser = chromium_path()
    if browser is None:
        raise ScreenshotError("chromium is not installed (Debian package: chromium)")
    png = Path(png).resolve()
    png.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(prefix="ordeal-chromium-") as profile:
        cmd = [
            browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
            "--hide-scrollbars", f"--user-data-dir={profile}", f"--screenshot={png}",
            f"--window-size={width},{height}", Path(html).resolve().as_uri(),
        ]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            raise ScreenshotError(f"chromium took longer than {timeout:.0f}s") from exc
    if not png.is_file() or png.stat().st_size == 0:
        tail = (proc.stderr or "").strip().splitlines()[-1:] or ["no output"]
        raise ScreenshotError(f"chromium wrote no screenshot (exit {proc.returncode}: {tail[0]})")
    return png


def screenshot_run(run_dir: Path, png: Path | None = None) -> Path:
    """Write the run's report if needed, then screenshot it to run_dir/report.png (or png)."""
    from ground.run_files import REPORT_HTML as REPORT
    from reports.report import write_report

    run_dir = Path(run_dir)
    html = run_dir / REPORT
    if not html.is_file():
        html = write_report(run_dir)
    return screenshot_html(html, png or run_dir / SCREENSHOT)


def main(argv: list[str] | None = None) -> int:
    from reports.run_files import RunDirError

    parser = argparse.ArgumentParser(prog="python -m reports.screenshot", description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--out", type=Path, default=None, help="PNG to write (default RUN_DIR/report.png)")
    args = parser.parse_args(argv)
    try:
        print(screenshot_run(args.run_dir, args.out))
    except (ScreenshotError, RunDirError) as exc:
        print(f"screenshot: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
