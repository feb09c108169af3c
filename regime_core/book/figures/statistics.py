"""The statistics section's figure: how often the intervals of a paired difference cover it."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from regime_core import coverage
from regime_core.book.figures import (
    PALETTE,
    Figure,
    _legend_above,
    _percent_axis,
    _subplots,
    colour_word,
)

#: How each interval of :data:`regime_core.coverage.METHODS` is named and drawn: label, colour,
#: marker.
COVERAGE_STYLES: dict[str, tuple[str, str, str]] = {
    "conditional_exact": ("first: conditional exact", PALETTE[3], "o"),
    "score_cc": ("old: score, continuity-corrected", PALETTE[0], "s"),
    "score": ("new: score, uncorrected", PALETTE[5], "^"),
    "bonett_price": ("Bonett–Price", PALETTE[4], "v"),
    "newcombe": ("Newcombe (method 10)", PALETTE[6], "D"),
}


def interval_coverage(
    table: pd.DataFrame,
    *,
    methods: tuple[str, ...] = ("score_cc", "score"),
    name: str = "interval_coverage",
    confidence: float = 0.95,
) -> Figure:
    """Coverage of the true difference against the expected number of discordant questions
    (``n·ψ``, log scale), one panel per asymmetry, one marker per grid point and method, from a
    table of :func:`regime_core.coverage.coverage_grid` (column ``coverage``). Points with fewer
    expected discordant questions than :data:`~regime_core.coverage.MIN_EXPECTED_DISCORDANT`
    are drawn hollow (not judged); the nominal level is a grey line, the floor a dashed one. The
    last panel gives each method's mean (filled) and minimum (hollow) coverage over the judged
    points (:func:`regime_core.coverage.coverage_summary`)."""
    asymmetries = sorted(set(table["asymmetry"]))
    ncols = 3
    nrows = int(np.ceil((len(asymmetries) + 1) / ncols))  # and the panel of mean and minimum
    # not shared: the last panel (mean and minimum per method) has axes of its own
    fig, axes = _subplots(2.6 * nrows + 0.6, nrows, ncols, squeeze=False)
    x_range = (table["expected_discordant"].min() / 1.5, table["expected_discordant"].max() * 1.5)
    shown = table[table["method"].isin(methods)]["coverage"]
    # the lowest coverage drawn sets the axis: a few points around 95%, or down to 0 for an
    # interval that covers far less (the first one)
    bottom = max(0.0, min(0.9, float(np.floor((shown.min() - 0.01) * 50) / 50)))
    ticks_y = [t for t in (0.0, 0.25, 0.5, 0.75, 0.9, 0.95, 1.0) if t >= bottom]
    floor = coverage.COVERAGE_FLOOR
    handles: list[Any] = []
    labels: list[str] = []
    flat = axes.ravel()
    for ax, a in zip(flat, asymmetries, strict=False):
        rows = table[table["asymmetry"] == a]
        judged = rows["expected_discordant"] >= coverage.MIN_EXPECTED_DISCORDANT * (1 - 1e-9)
        handles, labels = [], []
        for method in methods:
            label, colour, marker = COVERAGE_STYLES[method]
            mine = rows["method"] == method
            x, y = rows["expected_discordant"], rows["coverage"]
            (full,) = ax.plot(
                x[mine & judged], y[mine & judged], marker, color=colour, markersize=5, alpha=0.85
            )
            ax.plot(
                x[mine & ~judged],
                y[mine & ~judged],
                marker,
                markerfacecolor="none",
                markeredgecolor=colour,
                markersize=5,
            )
            handles.append(full)
            labels.append(label)
        ax.axhline(confidence, color=PALETTE[7], linewidth=1.0)
        ax.axhline(floor, color="black", linewidth=1.0, linestyle="--")
        ax.set_xscale("log")
        ax.set_xlim(*x_range)
        ax.set_title("all one way" if a == 1.0 else f"asymmetry {a:g}")
        _percent_axis(ax, top=1.005)
        ax.set_ylim(bottom, 1.005)
        ax.set_yticks(ticks_y)
    summary = coverage.coverage_summary(table)
    spare = flat[len(asymmetries) :]
    for ax in spare[1:]:
        ax.set_visible(False)
    if len(spare):
        ax = spare[0]
        for i, method in enumerate(methods):
            label, colour, marker = COVERAGE_STYLES[method]
            row = summary[summary["method"] == method].iloc[0]
            ax.plot([i], [row["mean"]], marker, color=colour, markersize=7)
            ax.plot([i], [row["minimum"]], marker, markerfacecolor="none", markeredgecolor=colour,
                    markersize=7)  # fmt: skip
            ax.annotate(f"{row['mean']:.1%}", (i, row["mean"]), xytext=(6, 0),
                        textcoords="offset points", va="center", fontsize=11)  # fmt: skip
            ax.annotate(f"{row['minimum']:.1%}", (i, row["minimum"]), xytext=(6, 0),
                        textcoords="offset points", va="center", fontsize=11)  # fmt: skip
        ax.axhline(confidence, color=PALETTE[7], linewidth=1.0)
        ax.set_xscale("linear")
        ax.set_xlim(-0.5, len(methods) - 0.2)
        ax.set_xticks(range(len(methods)), [COVERAGE_STYLES[m][0].split(":")[0] for m in methods])
        _percent_axis(ax, top=1.005)
        low = float(summary[summary["method"].isin(methods)]["minimum"].min())
        ax.set_ylim(max(0.0, min(0.9, np.floor((low - 0.01) * 50) / 50)), 1.005)
        ax.set_title("mean ● minimum ○")
    ticks = [1, 10, 100]
    for ax in flat[: len(asymmetries)]:
        ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
        ax.xaxis.set_minor_formatter("")
    for ax in flat[len(asymmetries) - ncols : len(asymmetries)]:  # the lowest panel of a column
        ax.xaxis.set_tick_params(labelbottom=True)
    for ax in axes[:, 0]:
        ax.set_ylabel("coverage")
    fig.supxlabel("expected discordant questions, n·ψ", fontsize=11)
    _legend_above(fig, handles, labels, 2)
    shown = ", ".join(
        f"{COVERAGE_STYLES[m][0]} ({colour_word(COVERAGE_STYLES[m][1])})" for m in methods
    )
    caption = (
        f"How often each interval holds the true difference of hit rates, computed exactly over "
        f"the grid of regime_core.coverage: {shown}. One marker per number of questions n and "
        f"share of discordant questions ψ, placed at n·ψ (log scale); one panel per asymmetry "
        f"(arm a wins a share (1 + a)/2 of the discordant questions). The grey line is the "
        f"nominal {confidence:.0%}, the dashed line the {floor:.0%} floor; hollow markers expect "
        f"fewer than {coverage.MIN_EXPECTED_DISCORDANT:g} discordant question and are not judged. "
        f"The last panel gives each interval's mean coverage (filled) and minimum (hollow) over "
        f"the judged points."
    )
    alt = (
        "Coverage of the true difference by the old and the new interval against the expected "
        "number of discordant questions, one panel per asymmetry, with the nominal level and "
        "the floor drawn across, and a panel of each interval's mean and minimum coverage."
    )
    return Figure(fig, name, caption, alt)
