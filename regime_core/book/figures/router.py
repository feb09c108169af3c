"""The router's figures: training, zero-shot transfer, ablations and robustness
(specification curves)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from regime_core import config
from regime_core.book import names
from regime_core.book.figures import (
    ARM_COLORS,
    PALETTE,
    VERDICT_COLORS,
    WIDTH,
    Figure,
    _bar_rows,
    _hit,
    _legend_above,
    _percent_axis,
    _pyplot,
    _wrap,
)

# --------------------------------------------------------------------------------------------
# The router
# --------------------------------------------------------------------------------------------

_POLICIES: tuple[str, ...] = ("q", "union", "routed", "oracle")


def _policy_bars(
    fig: Any,
    ax: Any,
    groups: Sequence[str],
    values: Mapping[str, Sequence[float]],
    *,
    label_size: float,
) -> None:
    """The policies' bars side by side in each group, each labelled with its percentage, and
    their legend above the figure (the router's and the zero-shot hit@k figures)."""
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
    for handle, ys in zip(handles, values.values(), strict=True):
        ax.bar_label(handle, labels=[f"{v:.0%}" for v in ys], fontsize=label_size, padding=2)
    _legend_above(fig, handles, [names.arm(p, short=True) for p in values], 4)


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
    _policy_bars(fig, left, [names.dataset(result.data.dataset)], hits, label_size=9)
    left.set_ylabel(f"{_hit(k)} of the hop-2 passage")
    left.set_title("policies (5-fold cross-fitted)" if result.config.n_splits == 5 else "policies")
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
    _policy_bars(fig, ax, [names.dataset(d) for d in datasets], values, label_size=8.5)
    ax.set_ylabel(f"{_hit(result.config.k)} of the hop-2 passage")
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
    _bar_rows(ax, y, [names.feature(f) for f in wide.index])
    ax.axvline(0, color="#333333", lw=1.1)
    ax.set_xlabel(f"Δ {_hit(k)}, routed − q (pp)")
    ax.set_ylabel("feature left out")
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
