"""Charts of a run as inline PNG data URIs, so report.html needs no network and stays small.

Every time chart shades the fault intervals and labels them, because the question a
reader asks of a latency spike is "which fault was active then?".
"""
from __future__ import annotations

import base64
import io
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.ticker import FuncFormatter, NullLocator  # noqa: E402

from reports.fault_intervals import FaultInterval  # noqa: E402
from reports.history_digest import HistoryDigest  # noqa: E402

OUTCOME_COLOURS = {"ok": "#2f9e44", "fail": "#e03131", "info": "#f08c00"}
FAULT_COLOURS = {
    "partition": "#ffc9c9", "kill": "#d0bfff", "pause": "#a5d8ff",
    "link-fault": "#ffe8cc", "config": "#c3fae8", "crash": "#ff8787",
}
WIDTH_IN = 11.0
MAIN_OPS = ("send", "poll", "txn", "broadcast", "deliver")


def to_data_uri(fig: Figure) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def shade_faults(ax: Axes, faults: list[FaultInterval], end: float, labels: bool = True) -> None:
    """Shade each fault interval and write its label at the top, staggered so labels don't pile up."""
    for row, iv in enumerate(faults[:60]):
        start = iv.start / 1e9
        stop = iv.end / 1e9 if iv.end is not None else end
        colour = FAULT_COLOURS.get(iv.kind, "#dee2e6")
        ax.axvspan(start, max(stop, start + end * 0.002), color=colour, alpha=0.45, lw=0, zorder=0)
        if labels:
            ax.text(start, 1.0 - 0.07 * (row % 4), " " + iv.label, transform=ax.get_xaxis_transform(),
                    fontsize=7, va="top", ha="left", color="#495057", clip_on=True, zorder=5)


def log_ticks(lo: float, hi: float, most: int = 5) -> list[float]:
    """Round ticks (1, 2, 5 x 10^k) covering [lo, hi] on a log axis, thinned to at most `most`."""
    k = math.floor(math.log10(lo))
    candidates = []
    while 10 ** k <= hi * 10:
        candidates += [m * 10 ** k for m in (1, 2, 5)]
        k += 1
    inside = [c for c in candidates if lo / 1.5 <= c <= hi * 1.5] or [10 ** round(math.log10(hi))]
    for keep in ((1, 2, 5), (1, 5), (1,)):
        ticks = [c for c in inside if round(c / 10 ** math.floor(math.log10(c) + 1e-9)) in keep]
        if len(ticks) <= most:
            return ticks or inside[:1]
    step = -(-len(ticks) // most)
    return ticks[::step]


def latency_chart(d: HistoryDigest) -> str | None:
    """Raw latency points by invoke time, one panel per op type, coloured by outcome."""
    points = [p for sample in d.latency.values() for p in sample.items]
    if not points:
        return None
    # The main op types get a panel each; the rare ones (assign, final-read, ...) share one.
    by_f: dict[str, list] = {}
    for p in points:
        by_f.setdefault(p.f if p.f in MAIN_OPS else "other ops", []).append(p)
    kinds = [f for f in MAIN_OPS + ("other ops",) if f in by_f]
    fig, axes = plt.subplots(len(kinds), 1, figsize=(WIDTH_IN, 0.6 + 1.25 * len(kinds)), sharex=True, squeeze=False)
    plain = FuncFormatter(lambda v, _: f"{v:g}")
    for row, (ax, f) in enumerate(zip(axes[:, 0], kinds)):
        shade_faults(ax, d.faults.intervals, d.end_time, labels=row == 0)
        for outcome, colour in OUTCOME_COLOURS.items():
            sel = [p for p in by_f[f] if p.outcome == outcome]
            if sel:
                ax.scatter([p.t for p in sel], [max(p.ms, 0.01) for p in sel], s=8 if outcome == "ok" else 22,
                           c=colour, alpha=0.75, linewidths=0, zorder=3)
        ax.set_yscale("log")
        ys = [max(p.ms, 0.01) for p in by_f[f]]
        ax.set_yticks(log_ticks(min(ys), max(ys)))
        ax.set_ylim(min(ys) / 1.6, max(ys) * 1.6)
        ax.yaxis.set_major_formatter(plain)
        ax.yaxis.set_minor_locator(NullLocator())
        ax.tick_params(axis="y", labelsize=7)
        ax.set_ylabel(f"{f}\nms", fontsize=8)
        ax.grid(True, which="major", alpha=0.3)
    present = {p.outcome for p in points}
    handles = [Line2D([], [], ls="", marker="o", color=c, label=o) for o, c in OUTCOME_COLOURS.items() if o in present]
    axes[0, 0].legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7, frameon=False)
    axes[-1, 0].set_xlabel("time since start (s)")
    axes[-1, 0].set_xlim(0, max(d.end_time, 1e-3))
    fig.subplots_adjust(hspace=0.08)
    return to_data_uri(fig)


def throughput_chart(d: HistoryDigest, max_bins: int = 400) -> str | None:
    """Completions per second by outcome, rebinned so long runs keep at most max_bins bars."""
    if not d.throughput:
        return None
    last = max(d.throughput)
    width = max(1, -(-(last + 1) // max_bins))
    bins = range(0, last + 1, width)
    fig, ax = plt.subplots(figsize=(WIDTH_IN, 2.6))
    shade_faults(ax, d.faults.intervals, d.end_time)
    for outcome, colour in OUTCOME_COLOURS.items():
        ys = [sum(d.throughput.get(s, {}).get(outcome, 0) for s in range(b, b + width)) / width for b in bins]
        if any(ys):
            ax.step([b for b in bins], ys, where="post", color=colour, label=outcome, lw=1.3, zorder=3)
    ax.set_xlabel("time since start (s)")
    ax.set_ylabel("completions / s")
    ax.set_ylim(bottom=0)
    ax.set_xlim(0, max(d.end_time, 1e-3))
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7, frameon=False)
    return to_data_uri(fig)


def height_chart(d: HistoryDigest) -> str | None:
    """Block height each OSN had delivered over time, one step line per OSN and channel."""
    if not d.heights:
        return None
    fig, ax = plt.subplots(figsize=(WIDTH_IN, 2.6))
    shade_faults(ax, d.faults.intervals, d.end_time)
    for (osn, channel), sample in sorted(d.heights.items()):
        xs = [t for t, _ in sample.items]
        ys = [h for _, h in sample.items]
        label = osn if len({c for _, c in d.heights}) == 1 else f"{osn} {channel}"
        ax.step(xs, ys, where="post", lw=1.5, label=label, marker=".", zorder=3)
    ax.set_xlabel("time since start (s)")
    ax.set_ylabel("block height")
    ax.set_xlim(0, max(d.end_time, 1e-3))
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7, frameon=False)
    return to_data_uri(fig)
