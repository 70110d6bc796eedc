"""Bounded summaries: the plots never carry more points than the cap, quantiles stay within 1%."""
from __future__ import annotations

from reports.downsample import LogHistogram, StrideSample


def test_stride_sample_never_exceeds_its_cap():
    s = StrideSample(100)
    for i in range(100_000):
        s.add(i)
    assert len(s.items) <= 100 and s.thinned


def test_stride_sample_spans_the_whole_stream():
    s = StrideSample(100)
    for i in range(100_000):
        s.add(i)
    assert s.items[0] == 0 and s.items[-1] > 90_000


def test_stride_sample_keeps_everything_under_the_cap():
    s = StrideSample(100)
    for i in range(50):
        s.add(i)
    assert s.items == list(range(50)) and not s.thinned


def test_log_histogram_quantiles_are_within_one_percent():
    h = LogHistogram()
    for i in range(1, 10_001):
        h.add(i * 1000.0)
    assert abs(h.quantile(0.5) / 5_000_000 - 1) < 0.01
    assert abs(h.quantile(0.99) / 9_900_000 - 1) < 0.01


def test_empty_histogram_has_no_quantile():
    assert LogHistogram().quantile(0.5) is None
