"""Headless Chromium renders report.html to a screenshot that is not blank."""
from __future__ import annotations

import pytest
from matplotlib import image

from reports.screenshot import chromium_path, screenshot_run

pytestmark = pytest.mark.skipif(
    chromium_path() is None, reason="needs Debian's chromium at /usr/bin/chromium to render the report"
)


@pytest.fixture(scope="module")
def pixels(runs, reports, tmp_path_factory):
    png = screenshot_run(runs["anomalous"], tmp_path_factory.mktemp("shot") / "report.png")
    return image.imread(png)[:, :, :3]


def test_screenshot_is_not_blank(pixels):
    non_white = (pixels < 0.95).any(axis=2).mean()
    colours = {tuple(p) for p in (pixels[::4, ::4] * 255).astype(int).reshape(-1, 3)}
    assert non_white > 0.05 and len(colours) > 50


def test_invalid_verdict_banner_is_red_at_the_top(pixels):
    top = pixels[: pixels.shape[0] // 8]
    red = (top[:, :, 0] > 0.8) & (top[:, :, 1] < 0.35) & (top[:, :, 2] < 0.35)
    assert red.mean() > 0.05
