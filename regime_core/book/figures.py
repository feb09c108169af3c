"""Figures of the claim notebooks (Matplotlib; the caller picks the backend) and the tables the
notebooks print *from a record* (so every number shown was read back from ``record.json``).

Plot functions take a result object and return a Matplotlib ``Figure``; they do not save or show
(the notebook passes the figure to :func:`regime_core.runner.records.save_figure`).
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from regime_core.runner.records import format_number

ARM_COLORS: dict[str, str] = {
    "q": "#4c72b0",
    "bridge": "#dd8452",
    "union": "#55a868",
    "knockout": "#c44e52",
    "entity": "#8172b3",
}


def _pyplot() -> Any:
    import matplotlib.pyplot as plt

    return plt


# --------------------------------------------------------------------------------------------
# Notebook 01
# --------------------------------------------------------------------------------------------


def plot_regime_shares(shares: pd.DataFrame) -> Any:
    """Stacked bars: the share of each regime per dataset × native type."""
    plt = _pyplot()
    wide = shares.pivot_table(
        index=["dataset", "native_type"], columns="regime", values="share", aggfunc="first"
    ).fillna(0.0)
    regimes = [r for r in ("Q-dominant", "B-dominant", "neither") if r in wide.columns]
    colors = {"Q-dominant": "#4c72b0", "B-dominant": "#55a868", "neither": "#bbbbbb"}
    fig, ax = plt.subplots(figsize=(max(6.0, 0.7 * len(wide)), 3.8))
    bottom = np.zeros(len(wide))
    labels = [f"{d}\n{t}" for d, t in wide.index]
    for regime in regimes:
        values = wide[regime].to_numpy()
        ax.bar(labels, values, bottom=bottom, label=regime, color=colors[regime])
        bottom += values
    ax.set_ylabel("share of questions")
    ax.set_ylim(0, 1)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    ax.tick_params(axis="x", labelsize=7)
    fig.tight_layout()
    return fig


# --------------------------------------------------------------------------------------------
# T1
# --------------------------------------------------------------------------------------------


def plot_t1_scatter(result: Any, max_columns: int = 4) -> Any:
    """AUC against margin, one panel per cell, with the fitted probit curve where fitted."""
    plt = _pyplot()
    cells = result.cells
    n = len(cells)
    columns = min(max_columns, max(1, n))
    rows = math.ceil(n / columns)
    fig, axes = plt.subplots(
        rows, columns, figsize=(3.0 * columns, 2.6 * rows), squeeze=False, sharey=True
    )
    points = result.points
    for ax, cell in zip(axes.ravel(), cells.itertuples(index=False), strict=False):
        part = points[
            (points["encoder"] == cell.encoder)
            & (points["dataset"] == cell.dataset)
            & (points["native_type"] == cell.native_type)
        ]
        ax.scatter(part["margin"], part["auc"], s=6, alpha=0.4, color="#4c72b0")
        if cell.fitted:
            grid = np.linspace(part["margin"].min(), part["margin"].max(), 200)
            from regime_core.experiments.t1_auc_margin import probit_curve

            ax.plot(grid, probit_curve(grid, cell.scale_probit), color="#c44e52", lw=1.5)
            title = f"{format_number(cell.r2_probit, 'r2')}, n={cell.n}"
        else:
            title = f"not fitted (n={cell.n})"
        ax.set_title(f"{cell.encoder} · {cell.dataset}\n{cell.native_type}: {title}", fontsize=8)
        ax.tick_params(labelsize=7)
    for ax in axes.ravel()[n:]:
        ax.set_visible(False)
    for ax in axes[:, 0]:
        ax.set_ylabel("per-query AUC")
    for ax in axes[-1, :]:
        ax.set_xlabel(result.config.margin)
    fig.tight_layout()
    return fig


def plot_t1_r2(result: Any) -> Any:
    """R² of each fitted cell with its bootstrap CI, and the paper's 0.90 line."""
    plt = _pyplot()
    fitted = result.fitted.reset_index(drop=True)
    fig, ax = plt.subplots(figsize=(7.0, 0.35 * max(4, len(fitted)) + 1.0))
    labels = [f"{r.encoder} · {r.dataset} · {r.native_type}" for r in fitted.itertuples()]
    y = np.arange(len(fitted))
    for offset, fit, color in ((-0.15, "probit", "#c44e52"), (0.15, "logistic", "#8172b3")):
        r2 = fitted[f"r2_{fit}"].to_numpy()
        lo = fitted[f"r2_{fit}_lo"].to_numpy()
        hi = fitted[f"r2_{fit}_hi"].to_numpy()
        ax.errorbar(r2, y + offset, xerr=[r2 - lo, hi - r2], fmt="o", ms=4, color=color, label=fit)
    ax.axvline(result.config.r2_threshold, color="grey", ls="--", lw=1, label="paper's bar")
    ax.set_yticks(y, labels, fontsize=7)
    ax.set_xlabel("R² (bootstrap CI)")
    ax.invert_yaxis()
    ax.legend(frameon=False, fontsize=7, loc="lower left")
    fig.tight_layout()
    return fig


def t1_table(numbers: Mapping[str, Any]) -> pd.DataFrame:
    """T1's per-cell table built from a record's numbers."""
    rows = []
    for encoder, datasets in numbers["cells"].items():
        for dataset, types in datasets.items():
            for native_type, cell in types.items():
                row = {"encoder": encoder, "dataset": dataset, "type": native_type, "n": cell["n"]}
                if cell["fitted"]:
                    for fit in ("probit", "logistic"):
                        row[f"R² {fit} [CI]"] = (
                            f"{format_number(cell[f'r2_{fit}'], 'frac', 2)} "
                            f"[{format_number(cell[f'r2_{fit}_lo'], 'frac', 2)}, "
                            f"{format_number(cell[f'r2_{fit}_hi'], 'frac', 2)}]"
                        )
                    row["σ (probit)"] = format_number(cell["scale_probit"], "frac", 3)
                    rho = cell.get("spearman_rho")
                    row["Spearman ρ"] = "—" if rho is None else format_number(rho, "frac", 2)
                else:
                    row["R² probit [CI]"] = f"not fitted: {cell['reason']}"
                rows.append(row)
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------
# T2
# --------------------------------------------------------------------------------------------


def plot_t2_hits(result: Any, dataset: str = "all") -> Any:
    """hit@k of q, bridge and union per (P1, P2) cell, one panel per encoder."""
    plt = _pyplot()
    cells = result.cells[result.cells["dataset"] == dataset]
    encoders = sorted(cells["encoder"].unique())
    fig, axes = plt.subplots(
        1, len(encoders), figsize=(4.2 * len(encoders), 3.4), squeeze=False, sharey=True
    )
    arms = ("q", "bridge", "union")
    order = ["P1+P2+", "P1+P2-", "P1-P2+", "P1-P2-"]
    for ax, encoder in zip(axes[0], encoders, strict=True):
        part = cells[cells["encoder"] == encoder].set_index("cell")
        present = [c for c in order if c in part.index]
        x = np.arange(len(present))
        for i, arm in enumerate(arms):
            ax.bar(
                x + (i - 1) * 0.27,
                part.loc[present, f"hit_{arm}"],
                width=0.27,
                label=arm,
                color=ARM_COLORS[arm],
            )
        ax.set_xticks(
            x, [f"{c}\n{part.loc[c, 'regime']}\nn={part.loc[c, 'n']}" for c in present], fontsize=7
        )
        ax.set_title(f"{encoder} ({dataset})", fontsize=9)
        ax.set_ylim(0, 1)
    axes[0, 0].set_ylabel(f"hit@{result.config.k}")
    axes[0, -1].legend(frameon=False, fontsize=7, loc="upper left", bbox_to_anchor=(1, 1))
    fig.tight_layout()
    return fig


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
) -> Any:
    """A forest plot of paired differences (in points) with their CIs.

    With ``p`` (a p-value column), markers say the direction the test supports: filled red
    "above zero" (Δ > 0, p < ``level``), filled blue "below zero" (Δ < 0, p < ``level``),
    hollow otherwise. With only ``significant`` (a boolean column meaning "above zero"), the
    blue state is not drawn."""
    plt = _pyplot()
    frame = frame.reset_index(drop=True)
    fig, ax = plt.subplots(figsize=(7.0, 0.3 * max(4, len(frame)) + 1.0))
    y = np.arange(len(frame))
    d = 100 * frame[diff].to_numpy()
    err = [d - 100 * frame[lo].to_numpy(), 100 * frame[hi].to_numpy() - d]
    ax.errorbar(d, y, xerr=err, fmt="none", ecolor="#555555", lw=1)
    if p is not None:
        tested = frame[p].to_numpy(dtype=float) < level
        above, below = tested & (d > 0), tested & (d < 0)
    else:
        above = (
            frame[significant].to_numpy(dtype=bool) if significant else np.ones(len(frame), bool)
        )
        below = np.zeros(len(frame), bool)
    neither = ~(above | below)
    where = f"p < {level:g}"
    ax.scatter(d[above], y[above], color="#c44e52", zorder=3, s=18, label=f"above zero ({where})")
    if below.any():
        ax.scatter(
            d[below], y[below], color="#4c72b0", zorder=3, s=18, label=f"below zero ({where})"
        )
    ax.scatter(
        d[neither], y[neither], facecolor="white", edgecolor="#555555", zorder=3, s=18,
        label="neither",
    )  # fmt: skip
    if band is not None:
        ax.axvspan(100 * band[0], 100 * band[1], color="#dddddd", zorder=0, label="paper's range")
    ax.axvline(0, color="grey", lw=1)
    labels = [" · ".join(str(getattr(r, c)) for c in label_columns) for r in frame.itertuples()]
    ax.set_yticks(y, labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("difference (points)")
    ax.set_title(title, fontsize=9)
    ax.legend(frameon=False, fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    return fig


def t2_table(numbers: Mapping[str, Any], comparison: str = "union_vs_q") -> pd.DataFrame:
    """T2's per-cell table built from a record's numbers."""
    rows = []
    for encoder, datasets in numbers["cells"].items():
        for dataset, cells in datasets.items():
            for cell, entry in cells.items():
                c = entry[comparison]
                rows.append(
                    {
                        "encoder": encoder,
                        "dataset": dataset,
                        "cell": cell,
                        "regime": entry["regime"],
                        "n": entry["n"],
                        "hit q": format_number(entry["hit_q"], "pct"),
                        "hit bridge": format_number(entry["hit_bridge"], "pct"),
                        "hit union": format_number(entry["hit_union"], "pct"),
                        f"Δ {comparison} [CI]": (
                            f"{format_number(c['diff'], 'pp')} "
                            f"[{format_number(c['ci_lo'], 'pp')}, "
                            f"{format_number(c['ci_hi'], 'pp')}]"
                        ),
                        "Holm p": format_number(c["p_holm"], "p"),
                        "significant": "yes" if c["significant"] else "no",
                    }
                )
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------
# T3
# --------------------------------------------------------------------------------------------


def t3_table(numbers: Mapping[str, Any]) -> pd.DataFrame:
    """T3's comparisons table built from a record's numbers."""
    rows = []
    for comparison, encoders in numbers["comparisons"].items():
        for encoder, datasets in encoders.items():
            for dataset, entry in datasets.items():
                rows.append(
                    {
                        "comparison": comparison,
                        "encoder": encoder,
                        "dataset": dataset,
                        "n": entry["n"],
                        "hit a": format_number(entry["hit_a"], "pct"),
                        "hit b": format_number(entry["hit_b"], "pct"),
                        "drop [CI]": (
                            f"{format_number(entry['drop'], 'pp')} "
                            f"[{format_number(entry['ci_lo'], 'pp')}, "
                            f"{format_number(entry['ci_hi'], 'pp')}]"
                        ),
                        "Holm p": format_number(entry["p_holm"], "p"),
                        "in paper's range": "yes" if entry["in_paper_range"] else "no",
                    }
                )
    return pd.DataFrame(rows)


def nested_counts_table(
    numbers: Mapping[str, Any], index_name: str = "dataset", column_name: str = "value"
) -> pd.DataFrame:
    """``{dataset: {value: count}}`` as a table (missing combinations shown as 0)."""
    frame = pd.DataFrame(numbers).fillna(0).astype(int).T
    frame.index.name = index_name
    frame.columns.name = column_name
    return frame


# --------------------------------------------------------------------------------------------
# Robustness (specification curves)
# --------------------------------------------------------------------------------------------

#: Colour of each verdict in the specification curves (colour-blind-safe, Okabe-Ito).
VERDICT_COLORS: dict[str, str] = {
    "reproduced": "#009E73",
    "direction only": "#E69F00",
    "smaller than reported": "#56B4E9",
    "larger than reported": "#0072B2",
    "not reproduced": "#D55E00",
    "degenerate": "#999999",
    "not judged": "#cccccc",
}


def plot_specification_curve(
    rows: pd.DataFrame, knobs: Mapping[str, Any], *, title: str, estimate_label: str
) -> Any:
    """A specification curve: every reading's estimate (with its CI where it has one) sorted,
    coloured by verdict, the primary reading ringed; below, which knob value each reading uses.

    ``rows`` are one claim's rows of :class:`regime_core.experiments.robustness.RobustnessResult`
    ``.table``; ``knobs`` maps each knob to its values (rows of the lower panel)."""
    plt = _pyplot()
    data = rows.copy()
    data["_order"] = data["estimate"].fillna(-np.inf)
    data = data.sort_values(["_order", "verdict"], kind="stable").reset_index(drop=True)
    knob_rows = [(k, str(v)) for k, values in knobs.items() for v in values]
    height = 2.6 + 0.22 * len(knob_rows)
    fig, (top, bottom) = plt.subplots(
        2,
        1,
        # wide enough to separate readings, never wider than a page can show legibly
        figsize=(min(11.0, max(6.0, 0.16 * len(data) + 2.5)), height),
        sharex=True,
        gridspec_kw={"height_ratios": [2.4, 0.22 * len(knob_rows) + 0.2]},
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
        size = 18 if len(data) <= 60 else 9
        top.scatter(idx, part["estimate"], color=color, s=size, zorder=3, label=str(verdict))
    primary = data[data["primary"]]
    if len(primary):
        top.scatter(
            primary.index,
            primary["estimate"],
            s=90,
            facecolors="none",
            edgecolors="black",
            linewidths=1.4,
            zorder=4,
            label="primary reading",
        )
    if data["estimate"].notna().any() and "CI" in estimate_label:
        top.axhline(0.0, color="#555555", lw=0.8, ls="--")
    top.set_ylabel(textwrap.fill(estimate_label, 26), fontsize=9)
    top.set_title(title, fontsize=10)
    top.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    for j, (knob, value) in enumerate(knob_rows):
        on = data[knob].astype(str) == value if knob in data else pd.Series(False, index=data.index)
        bottom.scatter(
            x[on.to_numpy()], np.full(int(on.sum()), j), s=10 if len(data) <= 60 else 4, c="#333333"
        )
    bottom.set_yticks(range(len(knob_rows)))
    bottom.set_yticklabels([f"{k}: {v}" for k, v in knob_rows], fontsize=7)
    bottom.set_ylim(len(knob_rows) - 0.5, -0.5)
    bottom.set_xlabel("readings, sorted by estimate", fontsize=9)
    bottom.set_xticks([])
    # the knob labels are long: keep the estimate's label clear of them, inside the figure
    fig.align_ylabels([top, bottom])
    fig.tight_layout()
    return fig


def robustness_table(numbers: Mapping[str, Any]) -> pd.DataFrame:
    """One row per claim from a robustness record's numbers: readings, holding, share, the most
    sensitive knob and the primary reading's verdict."""
    rows = []
    for claim_id, s in numbers["claims"].items():
        rows.append(
            {
                "claim": claim_id,
                "primary verdict": s["primary_verdict"],
                "readings": int(s["readings"]),
                "holding": int(s["holding"]),
                "share holding": format_number(s["share"], "pct"),
                "most sensitive knob": str(s["most_sensitive_knob"]).replace("_", " "),
            }
        )
    return pd.DataFrame(rows).set_index("claim")
