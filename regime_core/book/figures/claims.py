"""The figures of the claims: the data chapter, T1, T2 (forest plots) and T3."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from regime_core import config
from regime_core.book import names
from regime_core.book.figures import (
    ARM_COLORS,
    PALETTE,
    REGIME_COLORS,
    SMALLEST_TEXT,
    Figure,
    _bar_rows,
    _grouped_bars,
    _hit,
    _legend_above,
    _percent_axis,
    _subplots,
    _wrap,
    colour_word,
)
from regime_core.book.tables.claims import T2_CELL_ORDER


def _regime_colours(regimes: Iterable[str]) -> str:
    """The regimes' colours as a caption names them: ``"blue Q-dominant, green B-dominant"``."""
    return ", ".join(f"{colour_word(REGIME_COLORS[r])} {names.regime(r)}" for r in regimes)


def _pooled_last(datasets: pd.Series) -> pd.Series:
    """Each dataset's rank: in order of appearance, the pooled level (``"all"``) last."""
    order = [d for d in dict.fromkeys(datasets) if d != "all"] + ["all"]
    return datasets.map({d: i for i, d in enumerate(order)})


def _shapes(encoders: Iterable[str]) -> str:
    """The marker shape of each series of :func:`forest` in words: ``"circles MiniLM-L6 and
    squares TF-IDF"``."""
    words = ("circles", "squares", "diamonds")
    return " and ".join(f"{word} {e}" for word, e in zip(words, encoders, strict=False))


# --- the data chapter ----------------------------------------------------------------------------


def regime_shares(shares: pd.DataFrame) -> Figure:
    """Horizontal stacked bars: the share of each regime per dataset and native question type."""
    wide = shares.pivot_table(
        index=["dataset", "native_type"], columns="regime", values="share", aggfunc="first"
    ).fillna(0.0)
    datasets = list(dict.fromkeys(shares["dataset"]))
    order = [
        (d, t)
        for d in datasets
        for t in sorted(wide.loc[d].index, key=lambda t: (t != "all", t))
        if (d, t) in wide.index
    ]
    wide = wide.loc[order]
    regimes = [r for r in REGIME_COLORS if r in wide.columns]
    fig, ax = _subplots(0.42 * len(wide) + 1.4)
    y = np.arange(len(wide))
    left = np.zeros(len(wide))
    handles = []
    for regime in regimes:
        values = wide[regime].to_numpy()
        handles.append(
            ax.barh(y, values, left=left, color=REGIME_COLORS[regime], height=0.7, label=regime)
        )
        left += values
    _bar_rows(
        ax, y, [f"{names.dataset(d)} · {'all types' if t == 'all' else t}" for d, t in wide.index]
    )
    _percent_axis(ax, "x")
    ax.set_xlabel("share of questions")
    _legend_above(fig, handles, [names.regime(r) for r in regimes], len(regimes))
    return Figure(
        fig,
        "regime_shares",
        f"Share of each regime ({_regime_colours(regimes)}) among the questions of each dataset "
        "and native question type ('all types' = the dataset's questions used in this run).",
        alt="Stacked horizontal bars: for each dataset and question type, the share of "
        "Q-dominant, B-dominant and neither questions.",
    )


# --- T1 ------------------------------------------------------------------------------------------


def _cell_label(encoder: str, dataset: str, native_type: str, *, line: str = " · ") -> str:
    """``"MiniLM-L6 · HotpotQA · all types"`` (``line`` between the datasets and the type)."""
    kind = "all types" if native_type == "all" else str(native_type)
    return f"{names.encoder(encoder)} · {names.dataset(dataset)}{line}{kind}"


def t1_scatter(result: Any, max_columns: int = 2) -> Figure:
    """AUC against margin, one panel per cell, with the fitted probit curve where fitted."""
    from regime_core.experiments.t1_auc_margin import probit_curve

    cells = result.cells
    n = len(cells)
    columns = min(max_columns, max(1, n))
    rows = math.ceil(n / columns)
    fig, axes = _subplots(2.5 * rows + 0.7, rows, columns, squeeze=False, sharey=True)
    points = result.points
    for ax, cell in zip(axes.ravel(), cells.itertuples(index=False), strict=False):
        part = points[
            (points["encoder"] == cell.encoder)
            & (points["dataset"] == cell.dataset)
            & (points["native_type"] == cell.native_type)
        ]
        ax.scatter(part["margin"], part["auc"], s=8, alpha=0.45, color=PALETTE[0], linewidths=0)
        if cell.fitted:
            grid = np.linspace(part["margin"].min(), part["margin"].max(), 200)
            ax.plot(grid, probit_curve(grid, cell.scale_probit), color=PALETTE[3], lw=1.6)
            status = f"R² {cell.r2_probit:.2f}, n = {cell.n}"
        else:
            status = f"not fitted, n = {cell.n}"
        label = _cell_label(cell.encoder, cell.dataset, cell.native_type, line="\n")
        ax.set_title(f"{label} · {status}", fontsize=SMALLEST_TEXT)
        ax.tick_params(labelsize=SMALLEST_TEXT)
        ax.set_ylim(0, 1.02)
    for ax in axes.ravel()[n:]:
        ax.set_visible(False)
    fig.supylabel(f"per-query {names.display('metric', 'auc')}", fontsize=11)
    margin_name = {"margin": "cosine margin", "std_margin": "standardised cosine margin"}
    fig.supxlabel(margin_name.get(result.config.margin, result.config.margin), fontsize=11)
    return Figure(
        fig,
        "t1_auc_vs_margin",
        "Per-query AUC of the question-only query (blue dots, one per question) against its "
        "cosine margin (target cosine minus the mean distractor cosine), one panel per encoder, "
        "dataset and question type; the vermilion curve is the fitted probit curve "
        "AUC = Φ(margin / σ) where the cell has enough queries to be fitted.",
        alt="Scatter plots, one per encoder, dataset and question type: per-question AUC rising "
        "with the cosine margin, with the fitted probit curve.",
    )


def r2_axis_floor(values: Iterable[float], threshold: float, *, pad: float = 0.04) -> float:
    """The left edge of an R² axis: a little below the lowest fit and the threshold, so that
    both are in view; confidence intervals reaching further are cut there (and marked). Pure.

    >>> r2_axis_floor([0.78, 0.98], 0.9)
    0.74
    """
    finite = [float(v) for v in values if np.isfinite(v)]
    low = min([*finite, threshold])
    return round(max(-1.0, low - pad), 2)


def t1_r2(result: Any) -> Figure:
    """R² of each fitted cell with its bootstrap CI, and the paper's threshold, on an axis that
    frames the fits and the threshold (CIs that reach further left are cut, with an arrow)."""
    fitted = result.fitted.reset_index(drop=True)
    threshold = float(result.config.r2_threshold)
    fig, ax = _subplots(0.42 * max(4, len(fitted)) + 1.6)
    labels = [_cell_label(r.encoder, r.dataset, r.native_type) for r in fitted.itertuples()]
    y = np.arange(len(fitted))
    fits = (("probit", PALETTE[3], "o"), ("logistic", PALETTE[4], "s"))
    points = np.concatenate([fitted[f"r2_{fit}"].to_numpy(dtype=float) for fit, _, _ in fits])
    floor = r2_axis_floor(points, threshold)
    handles = []
    clipped = False
    for offset, (fit, color, marker) in zip((-0.17, 0.17), fits, strict=True):
        r2 = fitted[f"r2_{fit}"].to_numpy(dtype=float)
        lo = fitted[f"r2_{fit}_lo"].to_numpy(dtype=float)
        hi = fitted[f"r2_{fit}_hi"].to_numpy(dtype=float)
        cut = lo < floor
        clipped = clipped or bool(cut.any())
        shown = np.maximum(r2, floor)
        handles.append(
            ax.errorbar(
                shown,
                y + offset,
                xerr=[shown - np.maximum(lo, floor), np.maximum(hi, floor) - shown],
                fmt=marker,
                ms=5.5,
                color=color,
                lw=1.3,
            )
        )
        for yy in (y + offset)[cut]:
            ax.plot([floor], [yy], marker="<", color=color, ms=7, clip_on=False)
    line = ax.axvline(threshold, color="#555555", ls="--", lw=1.3)
    _bar_rows(ax, y, labels)
    ax.set_xlim(floor, 1.0)
    ax.set_xlabel("R² with 95% bootstrap CI")
    _legend_above(
        fig,
        [*handles, line],
        ["probit fit", "logistic fit", f"paper's bar, R² = {threshold:.2f}"],
        3,
    )
    clip_note = (
        f" Intervals reaching below {floor:g} are cut at the left edge (arrow)." if clipped else ""
    )
    return Figure(
        fig,
        "t1_r2_by_cell",
        "R² of the probit (vermilion circles) and logistic (purple squares) fits of AUC on the "
        "margin in each fitted cell (encoder, dataset, question type), with 95% bootstrap "
        f"intervals; the dashed grey line is the paper's bar, R² = {threshold:.2f}; a cell "
        "passes when its probit point lies right of it. The axis starts at "
        f"{floor:g}, not 0, so that every point and the bar are in view." + clip_note,
        alt=f"Dot plot: R² of the probit and logistic fits per cell, between {floor:g} and 1, "
        f"with intervals and a dashed line at the paper's bar of {threshold:.2f}.",
    )


# --- T2 ------------------------------------------------------------------------------------------


def t2_hits(result: Any, dataset: str = "all") -> Figure:
    """hit@k of q, bridge and union per (P1, P2) cell, one panel per encoder."""
    cells = result.cells[result.cells["dataset"] == dataset]
    encoders = list(dict.fromkeys(cells["encoder"]))
    fig, axes = _subplots(2.9 * len(encoders) + 0.8, len(encoders), squeeze=False, sharex=True)
    arms = ("q", "bridge", "union")
    handles: list[Any] = []
    for ax, encoder in zip(axes[:, 0], encoders, strict=True):
        part = cells[cells["encoder"] == encoder].set_index("cell")
        present = [c for c in T2_CELL_ORDER if c in part.index]
        x = np.arange(len(present))
        series = [(part.loc[present, f"hit_{arm}"], ARM_COLORS[arm]) for arm in arms]
        handles = _grouped_bars(ax, x, series, 0.27)
        ax.set_xticks(
            x,
            [
                f"{_wrap(names.display('cell', c), 14)}\n"
                f"({names.regime(part.loc[c, 'regime'])}, n = {part.loc[c, 'n']})"
                for c in present
            ],
        )
        ax.set_title(names.encoder(encoder))
        ax.set_ylabel(_hit(result.config.k))
        ax.grid(axis="x", visible=False)
        _percent_axis(ax)
    _legend_above(fig, handles, [names.arm(a) for a in arms], 3)
    where = "all datasets pooled" if dataset == "all" else names.dataset(dataset)
    colours = ", ".join(f"{colour_word(ARM_COLORS[a])} {names.arm(a, short=True)}" for a in arms)
    return Figure(
        fig,
        "t2_hits_by_cell",
        f"{_hit(result.config.k)} of the hop-2 passage for the question alone (q), the whole "
        f"bridge passage and union (q + α·B_rel) ({colours}), by who names the hop-2 entity: "
        f"the question (P1), the bridge (P2), both or neither; {where}, one panel per encoder.",
        alt=f"Bar charts, one per encoder: {_hit(result.config.k)} of q, bridge and union for "
        "each combination of the question and the bridge naming the hop-2 entity.",
    )


#: Marker of each series of a forest plot (an encoder), in order.
SERIES_MARKERS: tuple[str, ...] = ("o", "s", "D", "^")


def forest(
    frame: pd.DataFrame,
    *,
    labels: Sequence[str],
    diff: str,
    lo: str,
    hi: str,
    p: str | None = None,
    level: float = 0.05,
    colors: Sequence[str] | None = None,
    color_labels: Mapping[str, str] | None = None,
    panels: Sequence[str] | None = None,
    series: Sequence[str] | None = None,
    band: tuple[float, float] | None = None,
    xlabel: str = "difference (percentage points)",
) -> Any:
    """A forest plot of paired differences (drawn in points) with their CIs; returns the
    Matplotlib figure (callers wrap it in a :class:`Figure` with their caption).

    With ``p``, a filled marker means p < ``level`` in either direction, a hollow one that the
    difference is not significant. ``colors`` (one per row) colour the markers, with
    ``color_labels`` (colour → legend text). ``series`` (one value per row, e.g. the encoder)
    draws each series with its own marker shape (:data:`SERIES_MARKERS`), side by side on a
    label's line; ``panels`` (one value per row) stacks the rows into panels one above the
    other, sharing the axis (a phone shows them at the full width)."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    frame = frame.reset_index(drop=True)
    panel_values = list(dict.fromkeys(panels)) if panels is not None else [None]
    panel_of = np.asarray(panels if panels is not None else [None] * len(frame), dtype=object)
    series_values = list(dict.fromkeys(series)) if series is not None else [None]
    series_of = list(series) if series is not None else [None] * len(frame)
    offsets = {
        s: (i - (len(series_values) - 1) / 2) * (0.5 / max(1, len(series_values)))
        for i, s in enumerate(series_values)
    }
    markers = {s: SERIES_MARKERS[i % len(SERIES_MARKERS)] for i, s in enumerate(series_values)}
    row_counts = [
        len(dict.fromkeys(lab for lab, pan in zip(labels, panel_of, strict=True) if pan == panel))
        for panel in panel_values
    ]
    heights = [0.36 * max(2, n) + 0.5 for n in row_counts]
    fig, axes = _subplots(
        sum(heights) + 1.3,
        len(panel_values),
        squeeze=False,
        sharex=True,
        gridspec_kw={"height_ratios": heights},
    )
    row_colors = list(colors) if colors is not None else [PALETTE[0]] * len(frame)
    significant = (
        frame[p].to_numpy(dtype=float) < level if p is not None else np.ones(len(frame), bool)
    )
    for ax, panel in zip(axes[:, 0], panel_values, strict=True):
        mine = [i for i in range(len(frame)) if panel_of[i] == panel]
        row_labels = list(dict.fromkeys(labels[i] for i in mine))
        position = {label: j for j, label in enumerate(row_labels)}
        if band is not None:
            ax.axvspan(100 * band[0], 100 * band[1], color="#e6e6e6", zorder=0)
        ax.axvline(0, color="#333333", lw=1.1, zorder=1)
        for i in mine:
            row = frame.iloc[i]
            yy = position[labels[i]] + offsets[series_of[i]]
            ax.plot(
                [100 * float(row[lo]), 100 * float(row[hi])],
                [yy, yy],
                color="#555555",
                lw=1.2,
                zorder=2,
            )
            color = row_colors[i]
            ax.scatter(
                [100 * float(row[diff])],
                [yy],
                s=40,
                marker=markers[series_of[i]],
                zorder=3,
                edgecolors=color,
                linewidths=1.6,
                facecolors=color if significant[i] else "white",
            )
        ax.set_yticks(range(len(row_labels)), row_labels)
        ax.set_ylim(len(row_labels) - 0.5, -0.5)
        if panel is not None:
            ax.set_title(str(panel), loc="left")
        ax.grid(axis="y", visible=False)
    axes[-1, 0].set_xlabel(xlabel)

    def key(marker: str = "o", **style: Any) -> Any:
        return Line2D([], [], marker=marker, ls="", ms=7, **style)

    legend: list[tuple[Any, str]] = [
        (key(color=c), text) for c, text in (color_labels or {}).items()
    ]
    if series is not None:
        grey = {"markerfacecolor": "#bbbbbb", "markeredgecolor": "#333333"}
        legend += [(key(markers[value], **grey), str(value)) for value in series_values]
    if p is not None:
        legend += [
            (key(color="#555555"), f"p < {level:g}"),
            (key(markerfacecolor="white", color="#555555"), "not significant"),
        ]
    if band is not None:
        legend.append((Patch(color="#e6e6e6"), "paper's range"))
    if legend:
        handles, texts = zip(*legend, strict=True)
        _legend_above(fig, handles, texts, min(len(legend), 3))
    return fig


def t2_deltas(result: Any, comparison: str = "union_vs_q") -> Figure:
    """Δ of one T2 comparison per (P1, P2) cell, a panel per dataset (pooled last), the encoders
    side by side by marker shape, markers coloured by regime and filled where Holm p < the
    significance level (either direction)."""
    cfg = result.config
    cells = result.cells.assign(
        _ds_order=_pooled_last(result.cells["dataset"]),
        _cell_order=result.cells["cell"].map({c: i for i, c in enumerate(T2_CELL_ORDER)}),
    ).sort_values(["_ds_order", "_cell_order"], kind="stable")
    regimes = [r for r in REGIME_COLORS if r in set(cells["regime"])]
    fig = forest(
        cells,
        labels=[names.display("cell", c) for c in cells["cell"]],
        diff=f"{comparison}_diff",
        lo=f"{comparison}_ci_lo",
        hi=f"{comparison}_ci_hi",
        p=f"{comparison}_p_holm",
        level=cfg.significance,
        colors=[REGIME_COLORS[r] for r in cells["regime"]],
        color_labels={REGIME_COLORS[r]: names.regime(r) for r in regimes},
        panels=[names.dataset(d) for d in cells["dataset"]],
        series=[names.encoder(e) for e in cells["encoder"]],
        xlabel=f"Δ {_hit(cfg.k)}, {names.comparison(comparison)} (percentage points)",
    )
    tests = len(result.cells) * 2
    shapes = _shapes(dict.fromkeys(names.encoder(e) for e in cells["encoder"]))
    return Figure(
        fig,
        f"t2_delta_{comparison}",
        f"Paired difference {names.comparison(comparison)} in {_hit(cfg.k)}, in percentage "
        "points, in each cell of who names the hop-2 entity (the question, the bridge, both or "
        "neither), one panel per dataset and the pooled level last (the datasets whose "
        "predicates are informative); "
        f"{shapes}; the colour is the cell's regime ({_regime_colours(regimes)}). Grey bars are "
        f"McNemar intervals, Holm-adjusted over all {tests} tests of the notebook, as p is: a "
        f"filled marker (Holm p < {cfg.significance:g}, either direction) is exactly one whose "
        "interval excludes zero; a hollow one's holds zero.",
        alt=f"Forest plot: {names.comparison(comparison)} in {_hit(cfg.k)} per cell of who "
        "names the hop-2 entity, one panel per dataset and pooled, both encoders, with "
        "intervals around a zero line.",
    )


def regime_deltas(
    table: pd.DataFrame,
    cfg: Any,
    *,
    a: str = "union",
    b: str = "q",
) -> pd.DataFrame:
    """Δ(a − b) of hit@k per (encoder, dataset, regime) with a score interval; pure.

    ``table`` is T2's outcome table (``Outcomes.table``); questions are paired exactly as T2
    pairs them (those with every T2 arm), Q-dominant pools T2's two P1 cells. The CI is the
    score interval of :func:`regime_core.stats.compare_paired` at the run's confidence
    (not adjusted: the figure makes no claim of its own)."""
    from regime_core.experiments.common import compare_arms
    from regime_core.experiments.outcomes import arm_matrix
    from regime_core.experiments.t2_regime_decomposition import T2_ARMS

    wide = arm_matrix(table, f"hit@{cfg.k}", T2_ARMS)
    rows = []
    for (encoder, dataset, regime), group in wide.groupby(
        ["encoder", "dataset", "regime"], sort=False
    ):
        c = compare_arms(group, a, b, cfg)
        rows.append(
            {
                "encoder": encoder,
                "dataset": dataset,
                "regime": regime,
                "n": len(group),
                "diff": c.diff,
                "ci_lo": c.ci_lo,
                "ci_hi": c.ci_hi,
            }
        )
    return pd.DataFrame(rows)


def key_union_vs_q(deltas: pd.DataFrame, *, k: int = config.HEADLINE_K) -> Figure:
    """The book's key figure: union − q in hit@k, in points, by regime for each dataset, one
    panel per encoder (``deltas`` from :func:`regime_deltas`)."""
    from matplotlib.lines import Line2D

    from regime_core.data.prepared import PREPARED_DATASETS

    encoders = list(dict.fromkeys(deltas["encoder"]))
    datasets = [d for d in PREPARED_DATASETS if d in set(deltas["dataset"])]
    datasets += [d for d in dict.fromkeys(deltas["dataset"]) if d not in datasets]
    regimes = [r for r in REGIME_COLORS if r in set(deltas["regime"])]
    fig, axes = _subplots(
        0.9 * len(datasets) + 1.9, 1, len(encoders), squeeze=False, sharey=True, sharex=True
    )
    offsets = {r: (i - (len(regimes) - 1) / 2) * 0.24 for i, r in enumerate(regimes)}
    for ax, encoder in zip(axes[0], encoders, strict=True):
        ax.axvline(0, color="#333333", lw=1.1)
        part = deltas[deltas["encoder"] == encoder]
        for row in part.itertuples(index=False):
            if row.dataset not in datasets:
                continue
            yy = datasets.index(row.dataset) + offsets[row.regime]
            color = REGIME_COLORS[row.regime]
            ax.plot([100 * row.ci_lo, 100 * row.ci_hi], [yy, yy], color=color, lw=2)
            ax.plot([100 * row.diff], [yy], "o", color=color, ms=7)
            ax.annotate(
                f"n = {row.n}",
                (100 * max(row.ci_hi, row.diff), yy),
                xytext=(9, 0),
                textcoords="offset points",
                va="center",
                fontsize=SMALLEST_TEXT,
                color="#555555",
            )
        ax.set_title(names.encoder(encoder))
        ax.set_xlabel(f"union − q, {_hit(k)} (pp)")
        ax.grid(axis="y", visible=False)
    axes[0, 0].set_yticks(range(len(datasets)), [names.dataset(d) for d in datasets])
    axes[0, 0].set_ylim(len(datasets) - 0.5, -0.5)
    handles = [Line2D([], [], color=REGIME_COLORS[r], marker="o", lw=2) for r in regimes]
    _legend_above(fig, handles, [names.regime(r) for r in regimes], len(regimes))
    return Figure(
        fig,
        "key_union_vs_q",
        f"What adding the bridge's relation sentence to the query does: union − q in {_hit(k)} "
        f"(percentage points) on each dataset, split by regime ({_regime_colours(regimes)}), "
        "with 95% score intervals (not adjusted for multiple tests); one panel per encoder, "
        "n = questions in the regime.",
        alt=f"Dot plot: union minus q in {_hit(k)} per dataset and regime, one panel per "
        "encoder, with intervals around a zero line.",
    )


# --- T3 ------------------------------------------------------------------------------------------


def t3_drops(result: Any, comparison: str = "union_vs_knockout") -> Figure:
    """The drop hit@k(union) − hit@k(other arm) on the subset, per dataset, the encoders side
    by side by marker shape, with the paper's range for the knockout."""
    from regime_core.experiments.t3_brel_knockout import PAPER_DROP_HIGH, PAPER_DROP_LOW

    cfg = result.config
    part = result.comparisons[result.comparisons["comparison"] == comparison]
    part = part.assign(_order=_pooled_last(part["dataset"])).sort_values("_order", kind="stable")
    p_column = "p_holm" if "p_holm" in part.columns else None
    knockout = comparison == "union_vs_knockout"
    colour = ARM_COLORS["knockout" if knockout else "entity"]
    fig = forest(
        part,
        labels=[names.dataset(d) for d in part["dataset"]],
        diff="drop",
        lo="ci_lo",
        hi="ci_hi",
        p=p_column,
        level=cfg.significance,
        colors=[colour] * len(part),
        series=[names.encoder(e) for e in part["encoder"]],
        band=(PAPER_DROP_LOW, PAPER_DROP_HIGH) if knockout else None,
        xlabel=f"{names.comparison(comparison)}, {_hit(cfg.k)} (percentage points)",
    )
    other = "knockout (the bridge without B_rel)" if knockout else "entity (the hop-2 entity)"
    shapes = _shapes(dict.fromkeys(names.encoder(e) for e in part["encoder"]))
    filled = (
        f"; a filled marker means Holm-adjusted McNemar p < {cfg.significance:g} in either "
        "direction, a hollow one not"
        if p_column
        else ""
    )
    return Figure(
        fig,
        f"t3_{comparison}",
        f"How much {_hit(cfg.k)} union (q + α·B_rel) gains over {other} on the "
        f"{names.regime(cfg.subset)} questions, in percentage points, per dataset (pooled = "
        f"all), {colour_word(colour)} markers: {shapes}; grey bars are score intervals, "
        "Holm-adjusted over every test of the notebook as p is"
        + filled
        + ("; the light grey band is the paper's range." if knockout else "."),
        alt=f"Forest plot: {names.comparison(comparison)} in {_hit(cfg.k)} per dataset and "
        "encoder, with intervals" + (" and the paper's range as a band." if knockout else "."),
    )
