"""Time charts shade every fault interval and label it."""
from __future__ import annotations

import matplotlib.pyplot as plt

from reports.fault_intervals import FaultInterval
from reports.plots import shade_faults


def test_each_fault_is_shaded_and_labelled():
    fig, ax = plt.subplots()
    faults = [FaultInterval("partition", 1_000_000_000, 2_000_000_000, ["kafka1"], [], [["kafka1"], ["kafka2"]], 3),
              FaultInterval("kill", 3_000_000_000, None, ["osn2"], [], [], 7)]
    shade_faults(ax, faults, end=5.0)
    labels = [t.get_text().strip() for t in ax.texts]
    plt.close(fig)
    assert len(ax.patches) == 2 and labels == ["partition kafka1 | kafka2", "kill osn2"]


def test_unhealed_fault_is_shaded_to_the_end_of_the_run():
    fig, ax = plt.subplots()
    shade_faults(ax, [FaultInterval("pause", 3_000_000_000, None, ["zk1"], [], [], 1)], end=9.0)
    extent = ax.patches[0].get_window_extent(renderer=None)
    right = ax.transData.inverted().transform((extent.x1, 0))[0]
    plt.close(fig)
    assert abs(right - 9.0) < 1e-6


def test_log_ticks_are_round_and_few():
    from reports.plots import log_ticks

    assert log_ticks(0.1, 1500) == [0.1, 1, 10, 100, 1000]
    assert log_ticks(1, 25) == [1, 2, 5, 10, 20]
