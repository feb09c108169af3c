"""Every figure of the book: one plotting module, one theme, a caption per figure.

A plot function takes a result object (or a table) and returns a :class:`Figure`: the Matplotlib
figure, the file name it is saved under, and a caption that says what it shows. Notebooks hold no
plotting code; they call a function here, save the figure into their record's directory with
:meth:`Figure.save` and show it with :func:`show`, which displays the image and its caption in
the notebook whatever the Matplotlib backend (the book's build sets ``MPLBACKEND=Agg``, under
which ``plt.show()`` displays nothing).

The theme (:func:`use_theme`, applied by every plot function) is seaborn's ``whitegrid`` with
its colour-blind-safe ``colorblind`` palette and fonts sized to stay legible when a 7.5-inch
figure is scaled into the book's column at 1366 px. Labels come from
:mod:`regime_core.book.names`; rates are drawn on axes that start at 0, differences around a
marked zero line, and legends sit outside the data.

:func:`quiet` silences the progress bars and the notebook-widget warning of the libraries a
package call may load (tqdm, transformers, huggingface_hub), so that executed pages hold results
only; it leaves every other warning alone.
"""

from __future__ import annotations

import contextlib
import io
import math
import os
import sys
import textwrap
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from regime_core import config
from regime_core.book import names
from regime_core.book.tables import (  # noqa: F401  (re-exported: the tables moved to tables.py)
    nested_counts_table,
    robustness_table,
    t1_table,
    t2_table,
    t3_table,
)

# --------------------------------------------------------------------------------------------
# Theme and colours
# --------------------------------------------------------------------------------------------

#: seaborn's "colorblind" palette (Okabe-Ito-like), spelled out so colours never depend on state.
PALETTE: tuple[str, ...] = (
    "#0173B2",  # blue
    "#DE8F05",  # orange
    "#029E73",  # green
    "#D55E00",  # vermilion
    "#CC78BC",  # purple
    "#CA9161",  # brown
    "#FBAFE4",  # pink
    "#949494",  # grey
    "#ECE133",  # yellow
    "#56B4E9",  # sky blue
)

ARM_COLORS: dict[str, str] = {
    "q": PALETTE[0],
    "bridge": PALETTE[1],
    "union": PALETTE[2],
    "knockout": PALETTE[3],
    "entity": PALETTE[4],
    "routed": PALETTE[9],
    "router": PALETTE[9],
    "oracle": PALETTE[7],
    "soft": PALETTE[5],
}

REGIME_COLORS: dict[str, str] = {
    "Q-dominant": PALETTE[0],
    "B-dominant": PALETTE[2],
    "neither": PALETTE[7],
}

#: Colour of each verdict in the specification curves.
VERDICT_COLORS: dict[str, str] = {
    "reproduced": PALETTE[2],
    "direction only": PALETTE[1],
    "smaller than reported": PALETTE[9],
    "larger than reported": PALETTE[0],
    "not reproduced": PALETTE[3],
    "degenerate": PALETTE[7],
    "not judged": "#cccccc",
}

#: Font sizes in points; a 7.5-inch figure at 150 dpi shown in an 800-px column draws 10 pt
#: as about 15 px.
FONT_SIZES: dict[str, float] = {
    "font.size": 11,
    "axes.titlesize": 12,
    "axes.labelsize": 11,
    "xtick.labelsize": 10,
    "ytick.labelsize": 10,
    "legend.fontsize": 10,
    "legend.title_fontsize": 10,
    "figure.titlesize": 13,
}

#: The width of a full-column figure, in inches.
WIDTH = 7.5

_THEMED = False


def use_theme(*, force: bool = False) -> None:
    """Apply the book's theme (seaborn ``whitegrid``, the ``colorblind`` palette, the font sizes
    of :data:`FONT_SIZES`) to Matplotlib's global settings; applied once, later calls are free."""
    global _THEMED
    if _THEMED and not force:
        return
    import seaborn as sns

    sns.set_theme(
        context="notebook",
        style="whitegrid",
        palette=list(PALETTE),
        rc={
            **FONT_SIZES,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "axes.titleweight": "regular",
            "figure.dpi": 100,
            "savefig.dpi": 150,
            "legend.frameon": False,
            "grid.linewidth": 0.6,
            "svg.hashsalt": "regime",
        },
    )
    _THEMED = True


def _pyplot() -> Any:
    import matplotlib.pyplot as plt

    use_theme()
    return plt


# --------------------------------------------------------------------------------------------
# The figure object, saving and showing
# --------------------------------------------------------------------------------------------


@dataclass
class Figure:
    """A Matplotlib figure with the file name it is saved under and a caption saying what it
    shows. Attributes of the Matplotlib figure (``savefig``, ``axes``...) are reachable on it,
    so code written for a bare Matplotlib figure keeps working."""

    figure: Any
    name: str
    caption: str

    def __getattr__(self, attribute: str) -> Any:
        if attribute == "figure":  # not yet set (e.g. during unpickling)
            raise AttributeError(attribute)
        return getattr(self.figure, attribute)

    def save(self, out_dir: Path | str) -> Path:
        """Save as ``<out_dir>/<name>.png`` with deterministic bytes
        (:func:`regime_core.runner.records.save_figure`); returns the path for the record."""
        from regime_core.runner.records import save_figure

        return save_figure(self.figure, out_dir, self.name)

    def png(self) -> bytes:
        """The figure as PNG bytes (the resolution of the saved file)."""
        from regime_core.runner.records import FIGURE_DPI

        buffer = io.BytesIO()
        self.figure.savefig(
            buffer, format="png", dpi=FIGURE_DPI, bbox_inches="tight", metadata={"Software": None}
        )
        return buffer.getvalue()

    def _repr_png_(self) -> bytes:
        return self.png()

    def close(self) -> None:
        import matplotlib.pyplot as plt

        plt.close(self.figure)


def show(fig: Figure, *, caption: bool = True) -> None:
    """Display ``fig`` in the notebook (the PNG, then its caption) and close it.

    It works under any backend, ``Agg`` included: the image is rendered to PNG bytes and
    displayed as an image, not through ``plt.show()``."""
    from IPython.display import Image, Markdown, display

    display(Image(data=fig.png()))
    if caption and fig.caption:
        display(Markdown(f"*Figure: {fig.caption}*"))
    fig.close()


def save_and_show(fig: Figure, out_dir: Path | str, saved: list[Path] | None = None) -> None:
    """:meth:`Figure.save` into ``out_dir``, append the path to ``saved`` (the record's figure
    list) when given, then :func:`show`. Returns nothing, so a notebook cell ending with it
    prints no path."""
    path = fig.save(out_dir)
    if saved is not None:
        saved.append(path)
    show(fig)


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Silence progress bars (tqdm, transformers' weight-loading bar, huggingface_hub) and tqdm's
    "IProgress not found" notebook warning while the block runs.

    Only these are silenced: they report progress, not problems. Every other warning still
    shows (and the notebooks that turn runtime warnings into errors keep doing so). Bars of a
    library already imported are switched back on afterwards; a library first imported inside
    the block reads the environment then, and keeps its bars off in this process (a notebook
    kernel, where they would only clutter the page).
    """
    keys = ("TQDM_DISABLE", "HF_HUB_DISABLE_PROGRESS_BARS")
    saved_env = {key: os.environ.get(key) for key in keys}
    for key in keys:
        os.environ[key] = "1"
    undo: list[Any] = []
    hub = sys.modules.get("huggingface_hub.utils")
    if hub is not None and not hub.are_progress_bars_disabled():
        hub.disable_progress_bars()
        undo.append(hub.enable_progress_bars)
    hf_logging = sys.modules.get("transformers.utils.logging")
    if hf_logging is not None and hf_logging.is_progress_bar_enabled():
        hf_logging.disable_progress_bar()
        undo.append(hf_logging.enable_progress_bar)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r"IProgress not found")
            yield
    finally:
        for action in undo:
            action()
        for key, value in saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


# --------------------------------------------------------------------------------------------
# Shared pieces
# --------------------------------------------------------------------------------------------


def _percent_axis(ax: Any, axis: str = "y", top: float = 1.0) -> None:
    """A rate axis from 0 to ``top`` labelled in percent."""
    from matplotlib.ticker import PercentFormatter

    if axis == "y":
        ax.set_ylim(0, top)
        ax.yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
    else:
        ax.set_xlim(0, top)
        ax.xaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))


def _legend_above(
    fig: Any, handles: Sequence[Any], labels: Sequence[str], ncols: int, *, below: bool = False
) -> None:
    """The figure's legend outside the axes, read row by row: above them, or below when a title
    takes the top."""
    ncols = max(1, min(ncols, len(handles)))
    rows = math.ceil(len(handles) / ncols)
    # Matplotlib fills a legend column by column; order the entries so that it reads by rows.
    grid = [list(range(r * ncols, min((r + 1) * ncols, len(handles)))) for r in range(rows)]
    order = [row[c] for c in range(ncols) for row in grid if c < len(row)]
    where = "outside lower center" if below else "outside upper center"
    fig.legend(
        [handles[i] for i in order],
        [labels[i] for i in order],
        loc=where,
        ncols=ncols,
        frameon=False,
    )


def _wrap(text: str, width: int) -> str:
    return "\n".join(textwrap.wrap(text, width)) or text


def _hit(k: int) -> str:
    return names.metric(f"hit@{k}")


# --------------------------------------------------------------------------------------------
# The data chapter
# --------------------------------------------------------------------------------------------


def regime_shares(shares: pd.DataFrame) -> Figure:
    """Horizontal stacked bars: the share of each regime per dataset and native question type."""
    plt = _pyplot()
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
    fig, ax = plt.subplots(figsize=(WIDTH, 0.42 * len(wide) + 1.4), layout="constrained")
    y = np.arange(len(wide))
    left = np.zeros(len(wide))
    handles = []
    for regime in regimes:
        values = wide[regime].to_numpy()
        handles.append(
            ax.barh(y, values, left=left, color=REGIME_COLORS[regime], height=0.7, label=regime)
        )
        left += values
    ax.set_yticks(
        y, [f"{names.dataset(d)} · {'all types' if t == 'all' else t}" for d, t in wide.index]
    )
    ax.invert_yaxis()
    _percent_axis(ax, "x")
    ax.set_xlabel("share of questions")
    ax.grid(axis="y", visible=False)
    _legend_above(fig, handles, [names.regime(r) for r in regimes], len(regimes))
    return Figure(
        fig,
        "regime_shares",
        "Share of Q-dominant, B-dominant and neither questions per dataset and native question "
        "type ('all types' = the dataset's questions used in this run).",
    )


# --------------------------------------------------------------------------------------------
# T1
# --------------------------------------------------------------------------------------------


def _cell_label(encoder: str, dataset: str, native_type: str | None = None) -> str:
    parts = [names.encoder(encoder), names.dataset(dataset)]
    if native_type is not None:
        parts.append("all types" if native_type == "all" else str(native_type))
    return " · ".join(parts)


def t1_scatter(result: Any, max_columns: int = 3) -> Figure:
    """AUC against margin, one panel per cell, with the fitted probit curve where fitted."""
    from regime_core.experiments.t1_auc_margin import probit_curve

    plt = _pyplot()
    cells = result.cells
    n = len(cells)
    columns = min(max_columns, max(1, n))
    rows = math.ceil(n / columns)
    fig, axes = plt.subplots(
        rows,
        columns,
        figsize=(WIDTH, 2.3 * rows + 0.6),
        squeeze=False,
        sharey=True,
        layout="constrained",
    )
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
        kind = "all types" if cell.native_type == "all" else str(cell.native_type)
        ax.set_title(
            f"{names.encoder(cell.encoder)} · {names.dataset(cell.dataset)}\n{kind} · {status}",
            fontsize=9.5,
        )
        ax.tick_params(labelsize=9)
        ax.set_ylim(0, 1.02)
    for ax in axes.ravel()[n:]:
        ax.set_visible(False)
    fig.supylabel(f"per-query {names.metric('auc')}", fontsize=11)
    margin_name = {"margin": "cosine margin", "std_margin": "standardised cosine margin"}
    fig.supxlabel(margin_name.get(result.config.margin, result.config.margin), fontsize=11)
    return Figure(
        fig,
        "t1_auc_vs_margin",
        "Per-query AUC of the question-only query against its cosine margin (target cosine minus "
        "the mean distractor cosine), one panel per encoder, dataset and question type; the "
        "curve is the fitted probit curve AUC = Φ(margin / σ) where the cell has enough queries "
        "to be fitted.",
    )


def t1_r2(result: Any) -> Figure:
    """R² of each fitted cell with its bootstrap CI, and the paper's 0.90 line."""
    plt = _pyplot()
    fitted = result.fitted.reset_index(drop=True)
    fig, ax = plt.subplots(figsize=(WIDTH, 0.36 * max(4, len(fitted)) + 1.6), layout="constrained")
    labels = [_cell_label(r.encoder, r.dataset, r.native_type) for r in fitted.itertuples()]
    y = np.arange(len(fitted))
    floor = -0.5
    handles = []
    clipped = False
    for offset, fit, color in ((-0.16, "probit", PALETTE[3]), (0.16, "logistic", PALETTE[4])):
        r2 = fitted[f"r2_{fit}"].to_numpy(dtype=float)
        lo = fitted[f"r2_{fit}_lo"].to_numpy(dtype=float)
        hi = fitted[f"r2_{fit}_hi"].to_numpy(dtype=float)
        clipped = clipped or bool((lo < floor).any())
        lo_shown = np.maximum(lo, floor)
        handles.append(
            ax.errorbar(
                np.maximum(r2, floor),
                y + offset,
                xerr=[
                    np.maximum(r2, floor) - lo_shown,
                    np.maximum(hi, floor) - np.maximum(r2, floor),
                ],
                fmt="o",
                ms=5,
                color=color,
                lw=1.3,
                label=f"{fit} fit",
            )
        )
        for yy in (y + offset)[lo < floor]:
            ax.plot([floor], [yy], marker="<", color=color, ms=6)
    line = ax.axvline(result.config.r2_threshold, color="#555555", ls="--", lw=1.2)
    ax.set_yticks(y, labels)
    ax.invert_yaxis()
    ax.set_xlim(floor - 0.05, 1.02)
    ax.set_xlabel("R² with 95% bootstrap CI")
    ax.grid(axis="y", visible=False)
    _legend_above(
        fig,
        [*handles, line],
        ["probit fit", "logistic fit", f"paper's bar (R² ≥ {result.config.r2_threshold:.2f})"],
        3,
    )
    clip_note = f" CIs reaching below {floor} are cut at the left edge (arrow)." if clipped else ""
    return Figure(
        fig,
        "t1_r2_by_cell",
        "R² of the probit and logistic fits of AUC on the margin in each fitted cell (encoder, "
        "dataset, question type), with 95% bootstrap CIs; the dashed line is the paper's bar."
        + clip_note,
    )


# --------------------------------------------------------------------------------------------
# T2
# --------------------------------------------------------------------------------------------

_CELL_ORDER: tuple[str, ...] = ("P1-P2+", "P1+P2+", "P1+P2-", "P1-P2-")


def t2_hits(result: Any, dataset: str = "all") -> Figure:
    """hit@k of q, bridge and union per (P1, P2) cell, one panel per encoder."""
    plt = _pyplot()
    cells = result.cells[result.cells["dataset"] == dataset]
    encoders = list(dict.fromkeys(cells["encoder"]))
    fig, axes = plt.subplots(
        1,
        len(encoders),
        figsize=(WIDTH, 3.6),
        squeeze=False,
        sharey=True,
        layout="constrained",
    )
    arms = ("q", "bridge", "union")
    handles: list[Any] = []
    for ax, encoder in zip(axes[0], encoders, strict=True):
        part = cells[cells["encoder"] == encoder].set_index("cell")
        present = [c for c in _CELL_ORDER if c in part.index]
        x = np.arange(len(present))
        handles = []
        for i, arm in enumerate(arms):
            handles.append(
                ax.bar(
                    x + (i - 1) * 0.27,
                    part.loc[present, f"hit_{arm}"],
                    width=0.27,
                    color=ARM_COLORS[arm],
                )
            )
        ax.set_xticks(
            x,
            [
                f"{names.cell(c)}\n{names.regime(part.loc[c, 'regime'])}\nn = {part.loc[c, 'n']}"
                for c in present
            ],
            fontsize=9,
        )
        ax.set_title(names.encoder(encoder))
        ax.grid(axis="x", visible=False)
        _percent_axis(ax)
    axes[0, 0].set_ylabel(_hit(result.config.k))
    _legend_above(fig, handles, [names.arm(a) for a in arms], 3)
    where = "all datasets pooled" if dataset == "all" else names.dataset(dataset)
    return Figure(
        fig,
        "t2_hits_by_cell",
        f"{_hit(result.config.k)} of the hop-2 passage for the question alone (q), the whole "
        f"bridge passage and union (q + α·B_rel) in each (P1, P2) cell, {where}, one panel per "
        "encoder.",
    )


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
    band: tuple[float, float] | None = None,
    xlabel: str = "difference (percentage points)",
) -> Any:
    """A forest plot of paired differences (drawn in points) with their CIs; returns the
    Matplotlib figure (callers wrap it in a :class:`Figure` with their caption).

    With ``p``, a filled marker means p < ``level`` in either direction, a hollow one that the
    difference is not significant. ``colors`` (one per row) colour the markers, with
    ``color_labels`` (colour → legend text). ``panels`` (one value per row) split the rows into
    side-by-side panels sharing the row labels."""
    plt = _pyplot()
    from matplotlib.lines import Line2D

    frame = frame.reset_index(drop=True)
    panel_values = list(dict.fromkeys(panels)) if panels is not None else [None]
    panel_of = np.asarray(panels) if panels is not None else np.full(len(frame), None)
    row_labels = list(dict.fromkeys(labels))
    height = 0.34 * max(4, len(row_labels)) + 1.7
    fig, axes = plt.subplots(
        1,
        len(panel_values),
        figsize=(WIDTH, height),
        squeeze=False,
        sharey=True,
        sharex=True,
        layout="constrained",
    )
    row_colors = list(colors) if colors is not None else [PALETTE[0]] * len(frame)
    significant = (
        frame[p].to_numpy(dtype=float) < level if p is not None else np.zeros(len(frame), bool)
    )
    position = {label: i for i, label in enumerate(row_labels)}
    for ax, panel in zip(axes[0], panel_values, strict=True):
        if band is not None:
            ax.axvspan(100 * band[0], 100 * band[1], color="#e6e6e6", zorder=0)
        ax.axvline(0, color="#333333", lw=1.1, zorder=1)
        for i in np.flatnonzero(panel_of == panel) if panels is not None else range(len(frame)):
            row = frame.iloc[i]
            yy = position[labels[i]]
            d = 100 * float(row[diff])
            ax.plot(
                [100 * float(row[lo]), 100 * float(row[hi])],
                [yy, yy],
                color="#555555",
                lw=1.2,
                zorder=2,
            )
            color = row_colors[i]
            ax.scatter(
                [d],
                [yy],
                s=42,
                zorder=3,
                edgecolors=color,
                linewidths=1.6,
                facecolors=color if significant[i] else "white",
            )
        if panel is not None:
            ax.set_title(str(panel))
        ax.set_xlabel(xlabel)
        ax.grid(axis="y", visible=False)
    axes[0, 0].set_yticks(range(len(row_labels)), row_labels)
    axes[0, 0].set_ylim(len(row_labels) - 0.5, -0.5)
    handles, texts = [], []
    for color, text in (color_labels or {}).items():
        handles.append(Line2D([], [], marker="o", ls="", color=color, ms=7))
        texts.append(text)
    if p is not None:
        handles += [
            Line2D([], [], marker="o", ls="", color="#555555", ms=7),
            Line2D([], [], marker="o", ls="", markerfacecolor="white", color="#555555", ms=7),
        ]
        texts += [f"p < {level:g} (either direction)", "not significant"]
    if band is not None:
        from matplotlib.patches import Patch

        handles.append(Patch(color="#e6e6e6"))
        texts.append("paper's range")
    if handles:
        _legend_above(fig, handles, texts, min(len(handles), 3))
    return fig


def t2_deltas(result: Any, comparison: str = "union_vs_q") -> Figure:
    """Δ of one T2 comparison per dataset and (P1, P2) cell, a panel per encoder, markers
    coloured by regime and filled where Holm p < the significance level (either direction)."""
    cfg = result.config
    cells = result.cells.copy()
    cells["_cell_order"] = cells["cell"].map({c: i for i, c in enumerate(_CELL_ORDER)})
    datasets = [d for d in dict.fromkeys(cells["dataset"]) if d != "all"] + ["all"]
    cells["_ds_order"] = cells["dataset"].map({d: i for i, d in enumerate(datasets)})
    cells = cells.sort_values(["_ds_order", "_cell_order"], kind="stable")
    labels = [f"{names.dataset(r.dataset)} · {names.cell(r.cell)}" for r in cells.itertuples()]
    fig = forest(
        cells,
        labels=labels,
        diff=f"{comparison}_diff",
        lo=f"{comparison}_ci_lo",
        hi=f"{comparison}_ci_hi",
        p=f"{comparison}_p_holm",
        level=cfg.significance,
        colors=[REGIME_COLORS[r] for r in cells["regime"]],
        color_labels={REGIME_COLORS[r]: r for r in REGIME_COLORS},
        panels=[names.encoder(e) for e in cells["encoder"]],
        xlabel=f"Δ {_hit(cfg.k)}, {names.comparison(comparison)} (pp)",
    )
    tests = len(result.cells) * 2
    return Figure(
        fig,
        f"t2_delta_{comparison}",
        f"Paired difference {names.comparison(comparison)} in {_hit(cfg.k)}, in percentage "
        "points, per dataset and (P1, P2) cell (pooled = all datasets whose predicates are "
        f"informative), one panel per encoder; bars are 95% bootstrap CIs. A filled marker "
        f"means significant in either direction: Holm-adjusted exact McNemar p < "
        f"{cfg.significance:g} over all {tests} tests of the notebook; hollow, not significant. "
        "The CIs are not adjusted for the multiple tests while p is, so a CI can exclude zero "
        "where the marker is hollow.",
    )


def regime_deltas(
    table: pd.DataFrame,
    cfg: Any,
    *,
    a: str = "union",
    b: str = "q",
) -> pd.DataFrame:
    """Δ(a − b) of hit@k per (encoder, dataset, regime) with a paired bootstrap CI; pure.

    ``table`` is T2's outcome table (``Outcomes.table``); questions are paired exactly as T2
    pairs them (those with every T2 arm), Q-dominant pools T2's two P1 cells. The CI is the
    paired percentile bootstrap of :func:`regime_core.stats.compare_paired` with the run's
    resamples, confidence and seed (unadjusted, like T2's)."""
    from regime_core.experiments.common import arm_matrix
    from regime_core.experiments.t2_regime_decomposition import T2_ARMS
    from regime_core.stats import compare_paired

    wide = arm_matrix(table, f"hit@{cfg.k}", T2_ARMS)
    rows = []
    for (encoder, dataset, regime), group in wide.groupby(
        ["encoder", "dataset", "regime"], sort=False
    ):
        c = compare_paired(
            group[a].to_numpy(dtype=np.float64),
            group[b].to_numpy(dtype=np.float64),
            test="mcnemar",
            resamples=cfg.bootstrap_resamples,
            confidence=cfg.confidence,
            seed=cfg.seed,
            label_a=a,
            label_b=b,
        )
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
    plt = _pyplot()
    from matplotlib.lines import Line2D

    encoders = list(dict.fromkeys(deltas["encoder"]))
    datasets = [d for d in config_datasets() if d in set(deltas["dataset"])]
    datasets += [d for d in dict.fromkeys(deltas["dataset"]) if d not in datasets]
    regimes = [r for r in REGIME_COLORS if r in set(deltas["regime"])]
    fig, axes = plt.subplots(
        1,
        len(encoders),
        figsize=(WIDTH, 0.9 * len(datasets) + 1.9),
        squeeze=False,
        sharey=True,
        sharex=True,
        layout="constrained",
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
                fontsize=9,
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
        "(percentage points) on each dataset, split by regime, with 95% paired bootstrap CIs "
        "(unadjusted); one panel per encoder, n = questions in the regime.",
    )


def config_datasets() -> tuple[str, ...]:
    """The prepared datasets in the book's order."""
    from regime_core.data.prepare import PREPARED_DATASETS

    return PREPARED_DATASETS


# --------------------------------------------------------------------------------------------
# T3
# --------------------------------------------------------------------------------------------


def t3_drops(result: Any, comparison: str = "union_vs_knockout") -> Figure:
    """The drop hit@k(union) − hit@k(other arm) on the subset, per encoder and dataset, with
    the paper's range for the knockout."""
    from regime_core.experiments.t3_brel_knockout import PAPER_DROP_HIGH, PAPER_DROP_LOW

    cfg = result.config
    part = result.comparisons[result.comparisons["comparison"] == comparison].copy()
    datasets = [d for d in dict.fromkeys(part["dataset"]) if d != "all"] + ["all"]
    part["_order"] = part["dataset"].map({d: i for i, d in enumerate(datasets)})
    part = part.sort_values("_order", kind="stable")
    p_column = "p_holm" if "p_holm" in part.columns else None
    knockout = comparison == "union_vs_knockout"
    fig = forest(
        part,
        labels=[names.dataset(d) for d in part["dataset"]],
        diff="drop",
        lo="ci_lo",
        hi="ci_hi",
        p=p_column,
        level=cfg.significance,
        colors=[ARM_COLORS["knockout" if knockout else "entity"]] * len(part),
        panels=[names.encoder(e) for e in part["encoder"]],
        band=(PAPER_DROP_LOW, PAPER_DROP_HIGH) if knockout else None,
        xlabel=f"{names.comparison(comparison)}, {_hit(cfg.k)} (pp)",
    )
    other = "knockout (the bridge without B_rel)" if knockout else "entity (the hop-2 entity)"
    return Figure(
        fig,
        f"t3_{comparison}",
        f"How much {_hit(cfg.k)} union (q + α·B_rel) gains over {other} on the "
        f"{names.regime(cfg.subset)} questions, in percentage points, per dataset (pooled = all), "
        "one panel per encoder; bars are 95% bootstrap CIs (unadjusted), a filled marker means "
        f"Holm-adjusted McNemar p < {cfg.significance:g} in either direction"
        + ("; the grey band is the paper's range." if knockout else "."),
    )


# --------------------------------------------------------------------------------------------
# The router
# --------------------------------------------------------------------------------------------

_POLICIES: tuple[str, ...] = ("q", "union", "routed", "oracle")


def _policy_bars(
    ax: Any, groups: Sequence[str], values: Mapping[str, Sequence[float]]
) -> list[Any]:
    x = np.arange(len(groups))
    width = 0.8 / len(values)
    handles = []
    for i, (policy, ys) in enumerate(values.items()):
        handles.append(
            ax.bar(x + (i - (len(values) - 1) / 2) * width, ys, width, color=ARM_COLORS[policy])
        )
    ax.set_xticks(x, groups)
    ax.grid(axis="x", visible=False)
    _percent_axis(ax)
    return handles


def selector_agreement(agreement: pd.DataFrame) -> Figure:
    """How often the selected B_rel is the gold relation sentence, against two baselines."""
    plt = _pyplot()
    rows = agreement[agreement["relation_source"] == "all"]
    fig, ax = plt.subplots(figsize=(WIDTH, 3.4), layout="constrained")
    x = np.arange(len(rows))
    series = (
        ("selected", "selector", PALETTE[2]),
        ("first_sentence", "first sentence", PALETTE[7]),
        ("chance", "a random sentence", "#cccccc"),
    )
    handles = [
        ax.bar(x + (i - 1) * 0.26, rows[column], 0.26, color=color)
        for i, (column, _label, color) in enumerate(series)
    ]
    ax.set_xticks(x, [names.dataset(d) for d in rows["dataset"]])
    ax.grid(axis="x", visible=False)
    _percent_axis(ax)
    ax.set_ylabel("agreement with gold B_rel")
    _legend_above(fig, handles, [label for _c, label, _k in series], 3)
    return Figure(
        fig,
        "selector_agreement",
        "How often the B_rel the selector picks is the dataset's gold relation sentence, per "
        "dataset, next to always taking the bridge's first sentence and a uniformly random "
        "sentence (items with a gold sentence).",
    )


def router_training(result: Any) -> Figure:
    """Left: hit@k of always-q, always-union, the cross-fitted router and the oracle; right:
    the share of each question type the router sends to union."""
    from regime_core.experiments.router_train import breakdown

    plt = _pyplot()
    k = result.config.k
    fig, (left, right) = plt.subplots(
        1, 2, figsize=(WIDTH, 3.6), layout="constrained", width_ratios=[1.1, 1]
    )
    hits = {p: [float(np.mean(result.outcome.hits[p]))] for p in _POLICIES}
    handles = _policy_bars(left, [names.dataset(result.data.dataset)], hits)
    left.set_ylabel(f"{_hit(k)} of the hop-2 passage")
    left.set_title("policies (5-fold cross-fitted)" if result.config.n_splits == 5 else "policies")
    for handle, policy in zip(handles, _POLICIES, strict=True):
        left.bar_label(handle, labels=[f"{hits[policy][0]:.0%}"], fontsize=9, padding=2)
    by_type = breakdown(result.data, result.outcome, "native_type")
    y = np.arange(len(by_type))
    right.barh(y, by_type["share_union"], color=ARM_COLORS["union"], height=0.6)
    right.set_yticks(
        y, [f"{t}\n(n = {n})" for t, n in zip(by_type["native_type"], by_type["n"], strict=True)]
    )
    right.invert_yaxis()
    _percent_axis(right, "x")
    right.set_xlabel("share routed to union")
    right.set_title("decisions by question type")
    right.grid(axis="y", visible=False)
    _legend_above(fig, handles, [names.arm(p, short=True) for p in _POLICIES], 4)
    return Figure(
        fig,
        "router_training",
        f"Left: {_hit(k)} on {names.dataset(result.data.dataset)} of always-q, always-union, the "
        "router (each question decided by a model that never saw it) and the oracle (the better "
        "of q and union per question). Right: the share of each question type the router sends "
        "to union.",
    )


def router_coefficients(result: Any) -> Figure:
    """The deployment router's standardised coefficients."""
    plt = _pyplot()
    coef = pd.Series(result.coefficients())
    fig, ax = plt.subplots(figsize=(WIDTH, 0.45 * len(coef) + 1.3), layout="constrained")
    y = np.arange(len(coef))
    colors = [ARM_COLORS["union"] if v > 0 else ARM_COLORS["q"] for v in coef]
    ax.barh(y, coef.to_numpy(), color=colors, height=0.6)
    ax.set_yticks(y, [names.feature(f) for f in coef.index])
    ax.invert_yaxis()
    ax.axvline(0, color="#333333", lw=1.1)
    ax.set_xlabel("standardised coefficient (> 0 favours union)")
    ax.grid(axis="y", visible=False)
    return Figure(
        fig,
        "router_coefficients",
        "The deployment router's logistic-regression coefficients on its five standardised "
        "features: green pushes a question towards union, blue towards q.",
    )


def zero_shot_hits(result: Any) -> Figure:
    """hit@k of the four policies on each zero-shot dataset."""
    plt = _pyplot()
    datasets = list(result.outcomes)
    fig, ax = plt.subplots(figsize=(WIDTH, 3.6), layout="constrained")
    values = {p: [float(np.mean(result.outcomes[d].hits[p])) for d in datasets] for p in _POLICIES}
    handles = _policy_bars(ax, [names.dataset(d) for d in datasets], values)
    for handle, policy in zip(handles, _POLICIES, strict=True):
        ax.bar_label(handle, labels=[f"{v:.0%}" for v in values[policy]], fontsize=8.5, padding=2)
    ax.set_ylabel(f"{_hit(result.config.k)} of the hop-2 passage")
    _legend_above(fig, handles, [names.arm(p, short=True) for p in _POLICIES], 4)
    return Figure(
        fig,
        "zero_shot_hits",
        f"{_hit(result.config.k)} of always-q, always-union, the frozen router and the oracle "
        "(the better of q and union per question) on each dataset the router never saw; the "
        "axis starts at 0.",
    )


# --------------------------------------------------------------------------------------------
# Ablations
# --------------------------------------------------------------------------------------------


def alpha_sweep(sweep: pd.DataFrame, *, alpha: float, k: int = config.HEADLINE_K) -> Figure:
    """hit@k of q, union, the router and the oracle against α, one panel per dataset."""
    plt = _pyplot()
    datasets = list(dict.fromkeys(sweep["dataset"]))
    fig, axes = plt.subplots(
        1, len(datasets), figsize=(WIDTH, 3.4), sharey=True, squeeze=False, layout="constrained"
    )
    styles = {"q": ("--", None), "union": ("-", "o"), "routed": ("-", "s"), "oracle": (":", None)}
    handles = []
    for ax, name in zip(axes[0], datasets, strict=True):
        part = sweep[sweep["dataset"] == name].sort_values("alpha")
        handles = []
        for policy, (ls, marker) in styles.items():
            (line,) = ax.plot(
                part["alpha"],
                part[f"hit_{policy}"],
                ls=ls,
                marker=marker,
                ms=5,
                color=ARM_COLORS[policy],
                lw=1.8,
            )
            handles.append(line)
        ax.axvline(alpha, color="#333333", lw=0.8, ls="-")
        ax.set_title(names.dataset(name))
        ax.set_xlabel("α")
        _percent_axis(ax)
    axes[0, 0].set_ylabel(_hit(k))
    _legend_above(fig, handles, [names.arm(p, short=True) for p in styles], 4)
    return Figure(
        fig,
        "alpha_sweep",
        f"{_hit(k)} of always-q, always-union, the router and the oracle as the weight α of "
        f"B_rel in the union query goes from 0 to 1 (labels, router and evaluation all use that "
        f"α; the vertical line marks the paper's α = {alpha:g}), one panel per dataset.",
    )


def leave_one_feature_out(table: pd.DataFrame, *, k: int = config.HEADLINE_K) -> Figure:
    """Δ hit@k (routed − q) of the router without each feature, per dataset."""
    plt = _pyplot()
    wide = table.pivot(index="without", columns="dataset", values="delta")
    order = ["none", *[f for f in dict.fromkeys(table["without"]) if f != "none"]]
    wide = wide.loc[[f for f in order if f in wide.index]]
    datasets = list(dict.fromkeys(table["dataset"]))
    fig, ax = plt.subplots(figsize=(WIDTH, 0.55 * len(wide) + 1.6), layout="constrained")
    y = np.arange(len(wide))
    height = 0.8 / len(datasets)
    handles = [
        ax.barh(
            y + (i - (len(datasets) - 1) / 2) * height,
            100 * wide[d].to_numpy(),
            height,
            color=PALETTE[[0, 1, 2, 4, 5][i % 5]],
        )
        for i, d in enumerate(datasets)
    ]
    ax.set_yticks(y, [names.feature(f) for f in wide.index])
    ax.invert_yaxis()
    ax.axvline(0, color="#333333", lw=1.1)
    ax.set_xlabel(f"Δ {_hit(k)}, routed − q (pp)")
    ax.set_ylabel("feature left out")
    ax.grid(axis="y", visible=False)
    _legend_above(fig, handles, [names.dataset(d) for d in datasets], len(datasets))
    return Figure(
        fig,
        "leave_one_feature_out",
        f"What the router gains over always-q ({_hit(k)}, percentage points) when it is "
        "retrained without one of its five features, per dataset; the first row keeps all five.",
    )


# --------------------------------------------------------------------------------------------
# Robustness (specification curves)
# --------------------------------------------------------------------------------------------


def specification_curve(
    rows: pd.DataFrame,
    knobs: Mapping[str, Any],
    *,
    title: str,
    estimate_label: str,
    name: str | None = None,
) -> Figure:
    """A specification curve: every reading's estimate (with its CI where it has one) sorted,
    coloured by verdict, the primary reading ringed; below, which knob value each reading uses.

    ``rows`` are one claim's rows of :class:`regime_core.experiments.robustness.RobustnessResult`
    ``.table``; ``knobs`` maps each knob to its values (rows of the lower panel)."""
    plt = _pyplot()
    data = rows.copy()
    data["_order"] = data["estimate"].fillna(-np.inf)
    data = data.sort_values(["_order", "verdict"], kind="stable").reset_index(drop=True)
    knob_rows = [(k, str(v)) for k, values in knobs.items() for v in values]
    fig, (top, bottom) = plt.subplots(
        2,
        1,
        figsize=(WIDTH, 3.4 + 0.24 * len(knob_rows)),
        sharex=True,
        gridspec_kw={"height_ratios": [2.6, 0.24 * len(knob_rows) + 0.2]},
        layout="constrained",
    )
    x = np.arange(len(data))
    for verdict, part in data.groupby("verdict", sort=False):
        if part["estimate"].isna().all():
            continue  # degenerate or unjudged readings have no estimate to draw
        color = VERDICT_COLORS.get(str(verdict), "#333333")
        idx = part.index.to_numpy()
        has_ci = part["ci_lo"].notna() & part["ci_hi"].notna()
        if has_ci.any():
            sub = part[has_ci]
            top.vlines(sub.index, sub["ci_lo"], sub["ci_hi"], color=color, lw=1.2, alpha=0.7)
        size = 22 if len(data) <= 60 else 10
        top.scatter(idx, part["estimate"], color=color, s=size, zorder=3, label=str(verdict))
    primary = data[data["primary"]]
    if len(primary):
        top.scatter(
            primary.index,
            primary["estimate"],
            s=110,
            facecolors="none",
            edgecolors="black",
            linewidths=1.5,
            zorder=4,
            label="primary reading",
        )
    if data["estimate"].notna().any() and "CI" in estimate_label:
        top.axhline(0.0, color="#555555", lw=0.9, ls="--")
    top.set_ylabel(_wrap(estimate_label, 24), fontsize=10)
    top.set_title(title)
    top.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False, fontsize=9)
    for j, (knob, value) in enumerate(knob_rows):
        on = data[knob].astype(str) == value if knob in data else pd.Series(False, index=data.index)
        bottom.scatter(
            x[on.to_numpy()],
            np.full(int(on.sum()), j),
            s=12 if len(data) <= 60 else 5,
            c="#333333",
        )
    bottom.set_yticks(range(len(knob_rows)))
    bottom.set_yticklabels([f"{k.replace('_', ' ')}: {v}" for k, v in knob_rows], fontsize=9)
    bottom.set_ylim(len(knob_rows) - 0.5, -0.5)
    bottom.set_xlabel("readings, sorted by estimate")
    bottom.set_xticks([])
    bottom.grid(False)
    fig.align_ylabels([top, bottom])
    axis_note = (
        " The vertical axis does not start at 0."
        if top.get_ylim()[0] > 0 or top.get_ylim()[1] < 0
        else ""
    )
    return Figure(
        fig,
        name or "specification_curve",
        f"{title}: each dot is one reading's estimate ({estimate_label}), coloured by its "
        "verdict, sorted; the ringed dot is our primary reading. The grid below shows which "
        "value of each knob a reading uses." + axis_note,
    )


# --------------------------------------------------------------------------------------------
# Teaching: the toy world and the exercises
# --------------------------------------------------------------------------------------------


def regime_arms(
    summary: pd.DataFrame,
    *,
    title: str = "",
    name: str = "regimes",
    ks: Sequence[int] = (1, config.HEADLINE_K),
) -> Figure:
    """Bars of hit@1 and hit@5 (one panel each) of q and union per regime."""
    plt = _pyplot()
    regimes = [r for r in REGIME_COLORS if r in set(summary["regime"])]
    regimes += [r for r in dict.fromkeys(summary["regime"]) if r not in regimes]
    arms = [a for a in ("q", "union") if a in set(summary["arm"])]
    fig, axes = plt.subplots(
        1, len(ks), figsize=(WIDTH, 3.5), sharey=True, squeeze=False, layout="constrained"
    )
    width = 0.38
    handles: list[Any] = []
    for ax, k in zip(axes[0], ks, strict=True):
        column = f"hit@{k}"
        handles = []
        for j, arm in enumerate(arms):
            rows = summary[summary["arm"] == arm].set_index("regime").reindex(regimes)
            xs = np.arange(len(regimes)) + (j - (len(arms) - 1) / 2) * width
            bars = ax.bar(xs, rows[column].to_numpy(), width, color=ARM_COLORS[arm])
            ax.bar_label(bars, labels=[f"{v:.0%}" for v in rows[column]], fontsize=8.5, padding=2)
            handles.append(bars)
        counts = summary.drop_duplicates("regime").set_index("regime")["n"].reindex(regimes)
        ax.set_xticks(
            np.arange(len(regimes)),
            [f"{names.regime(r)}\nn = {int(n)}" for r, n in zip(regimes, counts, strict=True)],
        )
        ax.set_title(_hit(k))
        ax.grid(axis="x", visible=False)
        _percent_axis(ax, top=1.1)
        ax.set_yticks([0, 0.25, 0.5, 0.75, 1.0])
    axes[0, 0].set_ylabel("share of questions")
    if title:
        fig.suptitle(title)
    _legend_above(fig, handles, [names.arm(a) for a in arms], len(arms), below=bool(title))
    where = f" ({title})" if title else ""
    return Figure(
        fig,
        name,
        f"hit@1 (left) and hit@5 (right) of the question alone (q) and of union (q + α·B_rel) "
        f"per regime{where}: the share of questions whose hop-2 passage ranks first, and in the "
        "top 5.",
    )


def sweep(
    table: pd.DataFrame, knob: str, *, k: int = 1, title: str = "", name: str | None = None
) -> Figure:
    """Lines of hit@k against a knob column, one panel per regime, one line per arm."""
    plt = _pyplot()
    column = f"hit@{k}"
    regimes = [r for r in REGIME_COLORS if r in set(table["regime"])]
    fig, axes = plt.subplots(
        1, len(regimes), figsize=(WIDTH, 3.4), sharey=True, squeeze=False, layout="constrained"
    )
    knob_label = {"distractor_similarity": "distractor similarity", "alpha": "α"}.get(knob, knob)
    handles: list[Any] = []
    arms: list[str] = []
    for ax, regime in zip(axes[0], regimes, strict=True):
        part = table[table["regime"] == regime]
        handles, arms = [], list(dict.fromkeys(part["arm"]))
        for arm in arms:
            rows = part[part["arm"] == arm].sort_values(knob)
            (line,) = ax.plot(
                rows[knob], rows[column], marker="o", ms=5, lw=1.8, color=ARM_COLORS.get(arm)
            )
            handles.append(line)
        ax.set_title(names.regime(regime))
        ax.set_xlabel(knob_label)
        _percent_axis(ax, top=1.05)
    axes[0, 0].set_ylabel(_hit(k))
    if title:
        fig.suptitle(title)
    _legend_above(fig, handles, [names.arm(a) for a in arms], len(arms), below=bool(title))
    shown = " and ".join(names.arm(a) for a in arms)
    return Figure(
        fig,
        name or f"sweep_{knob}",
        f"{_hit(k)} of {shown} as the {knob_label} goes from {table[knob].min():g} to "
        f"{table[knob].max():g}, one panel per regime.",
    )


def knockout_bars(knockout: pd.DataFrame, *, k: int = 1, name: str = "knockout") -> Figure:
    """hit@k of union with B_rel kept and removed (the knockout arm), and of q, per regime."""
    plt = _pyplot()
    column = f"hit@{k}"
    regimes = [r for r in REGIME_COLORS if r in set(knockout["regime"])]
    fig, ax = plt.subplots(figsize=(WIDTH, 3.4), layout="constrained")
    x = np.arange(len(regimes))
    series = (
        ("q", "kept", names.arm("q"), ARM_COLORS["q"]),
        ("union", "kept", "union, B_rel kept", ARM_COLORS["union"]),
        ("union", "removed", "union, B_rel removed (knockout)", ARM_COLORS["knockout"]),
    )
    handles = []
    for i, (arm, kept, _label, color) in enumerate(series):
        part = knockout[(knockout["arm"] == arm) & (knockout["relation_sentence"] == kept)]
        values = part.set_index("regime").reindex(regimes)[column].to_numpy()
        bars = ax.bar(x + (i - 1) * 0.26, values, 0.26, color=color)
        ax.bar_label(bars, labels=[f"{v:.0%}" for v in values], fontsize=8.5, padding=2)
        handles.append(bars)
    ax.set_xticks(x, [names.regime(r) for r in regimes])
    ax.grid(axis="x", visible=False)
    _percent_axis(ax, top=1.1)
    ax.set_yticks([0, 0.25, 0.5, 0.75, 1.0])
    ax.set_ylabel(_hit(k))
    _legend_above(fig, handles, [s[2] for s in series], 3)
    return Figure(
        fig,
        name,
        f"{_hit(k)} per regime of the question alone, of union with the relation sentence, and "
        "of union built from the bridge without it (the knockout arm).",
    )


# --------------------------------------------------------------------------------------------
# The old names, for one release
# --------------------------------------------------------------------------------------------


def plot_regime_shares(shares: pd.DataFrame) -> Figure:
    """Deprecated name of :func:`regime_shares`."""
    return regime_shares(shares)


def plot_t1_scatter(result: Any, max_columns: int = 3) -> Figure:
    """Deprecated name of :func:`t1_scatter`."""
    return t1_scatter(result, max_columns)


def plot_t1_r2(result: Any) -> Figure:
    """Deprecated name of :func:`t1_r2`."""
    return t1_r2(result)


def plot_t2_hits(result: Any, dataset: str = "all") -> Figure:
    """Deprecated name of :func:`t2_hits`."""
    return t2_hits(result, dataset)


def plot_deltas(
    frame: pd.DataFrame,
    *,
    label_columns: tuple[str, ...],
    diff: str,
    lo: str,
    hi: str,
    significant: str | None = None,
    p: str | None = None,
    level: float = 0.05,
    title: str = "",
    band: tuple[float, float] | None = None,
) -> Figure:
    """Deprecated: a forest plot over ``label_columns`` (use :func:`forest`). ``significant``
    is ignored: a marker is filled when ``p`` < ``level`` in either direction."""
    frame = frame.reset_index(drop=True)
    labels = [
        " · ".join(
            names.display(names.VALUE_COLUMNS[c], getattr(r, c))
            if c in names.VALUE_COLUMNS
            else str(getattr(r, c))
            for c in label_columns
        )
        for r in frame.itertuples()
    ]
    fig = forest(frame, labels=labels, diff=diff, lo=lo, hi=hi, p=p, level=level, band=band)
    if title:
        fig.suptitle(title)
    return Figure(fig, "deltas", title or "Paired differences with their 95% CIs.")


def plot_specification_curve(
    rows: pd.DataFrame, knobs: Mapping[str, Any], *, title: str, estimate_label: str
) -> Figure:
    """Deprecated name of :func:`specification_curve`."""
    return specification_curve(rows, knobs, title=title, estimate_label=estimate_label)


def plot_regime_arms(
    summary: pd.DataFrame, *, k: int = config.HEADLINE_K, title: str = ""
) -> Figure:
    """Deprecated: :func:`regime_arms` (both hit@1 and hit@5; ``k`` is ignored)."""
    return regime_arms(summary, title=title)


def plot_sweep(table: pd.DataFrame, knob: str, *, k: int = 1, title: str = "") -> Figure:
    """Deprecated name of :func:`sweep`."""
    return sweep(table, knob, k=k, title=title)
