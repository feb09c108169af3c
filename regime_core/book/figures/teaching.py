"""The teaching figures (the toy world, the sweeps, the exercises)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from regime_core import config
from regime_core.book import names
from regime_core.book.figures import (
    ARM_COLORS,
    REGIME_COLORS,
    Figure,
    _grouped_bars,
    _hit,
    _legend_above,
    _percent_axis,
    _subplots,
    colour_word,
)


def _share_axis(ax: Any, x: Any, groups: Sequence[str]) -> None:
    """Groups of labelled bars: named at ``x``, no vertical grid lines, a rate axis from 0 with
    room above 100% for the labels."""
    ax.set_xticks(x, groups)
    ax.grid(axis="x", visible=False)
    _percent_axis(ax, top=1.1)
    ax.set_yticks([0, 0.25, 0.5, 0.75, 1.0])


def regime_arms(
    summary: pd.DataFrame,
    *,
    title: str = "",
    name: str = "regimes",
    ks: Sequence[int] = (1, config.HEADLINE_K),
) -> Figure:
    """Bars of hit@1 and hit@5 (one panel each) of q and union per regime."""
    regimes = [r for r in REGIME_COLORS if r in set(summary["regime"])]
    regimes += [r for r in dict.fromkeys(summary["regime"]) if r not in regimes]
    arms = [a for a in ("q", "union") if a in set(summary["arm"])]
    fig, axes = _subplots(3.5, 1, len(ks), sharey=True, squeeze=False)
    counts = summary.drop_duplicates("regime").set_index("regime")["n"].reindex(regimes)
    groups = [f"{names.regime(r)}\nn = {int(n)}" for r, n in zip(regimes, counts, strict=True)]
    x = np.arange(len(regimes))
    by_arm = {a: summary[summary["arm"] == a].set_index("regime").reindex(regimes) for a in arms}
    handles: list[Any] = []
    for ax, k in zip(axes[0], ks, strict=True):
        series = [(by_arm[a][f"hit@{k}"].to_numpy(), ARM_COLORS[a]) for a in arms]
        handles = _grouped_bars(ax, x, series, 0.38, labelled=True)
        _share_axis(ax, x, groups)
        ax.set_title(_hit(k))
    axes[0, 0].set_ylabel("share of questions")
    if title:
        fig.suptitle(title)
    _legend_above(fig, handles, [names.arm(a) for a in arms], len(arms), below=bool(title))
    where = f" ({title})" if title else ""
    colours = " and ".join(f"{colour_word(ARM_COLORS[a])} {names.arm(a, short=True)}" for a in arms)
    shown = " and ".join(_hit(k) for k in ks)
    return Figure(
        fig,
        name,
        f"{shown} of the question alone (q) and of union (q + α·B_rel) ({colours}) per "
        f"regime{where}: the share of questions whose hop-2 passage ranks in the top "
        + " and the top ".join(str(k) for k in ks)
        + ".",
        alt=f"Grouped bars, one panel per cutoff: {shown} of q and union in each regime"
        + where
        + ".",
    )


def sweep(
    table: pd.DataFrame, knob: str, *, k: int = 1, title: str = "", name: str | None = None
) -> Figure:
    """Lines of hit@k against a knob column, one panel per regime, one line per arm."""
    column = f"hit@{k}"
    regimes = [r for r in REGIME_COLORS if r in set(table["regime"])]
    fig, axes = _subplots(3.4, 1, len(regimes), sharey=True, squeeze=False)
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
    shown = " and ".join(f"{names.arm(a)} ({colour_word(ARM_COLORS[a])})" for a in arms)
    return Figure(
        fig,
        name or f"sweep_{knob}",
        f"{_hit(k)} of {shown} as the {knob_label} goes from {table[knob].min():g} to "
        f"{table[knob].max():g}, one panel per regime.",
        alt=f"Line charts, one per regime: {_hit(k)} of each query as the {knob_label} grows.",
    )


def knockout_bars(knockout: pd.DataFrame, *, k: int = 1, name: str = "knockout") -> Figure:
    """hit@k of union with B_rel kept and removed (the knockout arm), and of q, per regime."""
    regimes = [r for r in REGIME_COLORS if r in set(knockout["regime"])]
    fig, ax = _subplots(3.4)
    x = np.arange(len(regimes))
    series = (  # arm, relation sentence, legend, colour
        ("q", "kept", names.arm("q"), ARM_COLORS["q"]),
        ("union", "kept", "union, B_rel kept", ARM_COLORS["union"]),
        ("union", "removed", "knockout (bridge without B_rel)", ARM_COLORS["knockout"]),
    )
    bars = []
    for arm, kept, _label, colour in series:
        part = knockout[(knockout["arm"] == arm) & (knockout["relation_sentence"] == kept)]
        bars.append((part.set_index("regime").reindex(regimes)[f"hit@{k}"].to_numpy(), colour))
    handles = _grouped_bars(ax, x, bars, 0.26, labelled=True)
    _share_axis(ax, x, [names.regime(r) for r in regimes])
    ax.set_ylabel(_hit(k))
    _legend_above(fig, handles, [s[2] for s in series], 2)
    return Figure(
        fig,
        name,
        f"{_hit(k)} per regime of the question alone (blue), of union with the relation "
        "sentence (green), and of the knockout arm, the question plus the bridge without that "
        "sentence (vermilion).",
        alt=f"Grouped bars per regime: {_hit(k)} of q, union and knockout.",
    )
