"""The robustness chapter's figures: one specification curve per claim."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from regime_core.book import names
from regime_core.book.figures import (
    VERDICT_COLORS,
    Figure,
    _legend_above,
    _subplots,
    _wrap,
    colour_word,
)

#: What a claim's estimate is when its ``multiverse`` in ``paper_claims.yml`` does not say.
_DEFAULT_ESTIMATE = "Δ hit@5 of the claim's comparison (percentage points)"
#: Beyond this many readings the curve draws its intervals as one band and its knob grid as
#: a matrix of cells, so that a long curve does not smear.
MANY_READINGS = 40


def specification_curve(
    rows: pd.DataFrame,
    knobs: Mapping[str, Any],
    *,
    title: str,
    estimate_label: str,
    name: str | None = None,
    percent: bool = False,
) -> Figure:
    """A specification curve: every reading's estimate (with its CI where it has one) sorted,
    coloured by verdict, the primary reading ringed; below, which knob value each reading uses.

    ``rows`` are one claim's rows of :class:`regime_core.experiments.robustness.RobustnessResult`
    ``.table``; ``knobs`` maps each knob to its values (rows of the lower panel). ``percent``
    draws the estimates (differences of rates, as fractions) in percentage points. Beyond
    :data:`MANY_READINGS` readings the intervals are one grey band and the knob grid a matrix."""
    scale = 100.0 if percent else 1.0
    data = rows.copy()
    for column in ("estimate", "ci_lo", "ci_hi"):
        data[column] = pd.to_numeric(data[column], errors="coerce") * scale
    data["_order"] = data["estimate"].fillna(-np.inf)
    data = data.sort_values(["_order", "verdict"], kind="stable").reset_index(drop=True)
    knob_rows = [(k, str(v)) for k, values in knobs.items() for v in values]
    many = len(data) > MANY_READINGS
    fig, (top, bottom) = _subplots(
        3.6 + 0.26 * len(knob_rows),
        2,
        sharex=True,
        gridspec_kw={"height_ratios": [2.6, 0.26 * len(knob_rows) + 0.2]},
    )
    x = np.arange(len(data))
    has_ci = data["ci_lo"].notna() & data["ci_hi"].notna()
    if many and has_ci.any():
        top.fill_between(
            x[has_ci.to_numpy()],
            data.loc[has_ci, "ci_lo"],
            data.loc[has_ci, "ci_hi"],
            color="#d9d9d9",
            lw=0,
            step="mid",
            label="95% intervals",
        )
    for verdict, part in data.groupby("verdict", sort=False):
        if part["estimate"].isna().all():
            continue  # degenerate or unjudged readings have no estimate to draw
        color = VERDICT_COLORS.get(str(verdict), "#333333")
        sub = part[part["ci_lo"].notna() & part["ci_hi"].notna()]
        if len(sub) and not many:
            top.vlines(sub.index, sub["ci_lo"], sub["ci_hi"], color=color, lw=1.2, alpha=0.7)
        top.scatter(
            part.index,
            part["estimate"],
            color=color,
            s=12 if many else 24,
            zorder=3,
            label=str(verdict),
        )
    primary = data[data["primary"].astype(bool)]
    if len(primary):
        top.scatter(
            primary.index,
            primary["estimate"],
            s=110,
            facecolors="none",
            edgecolors="black",
            linewidths=1.5,
            zorder=4,
            label="our primary reading",
        )
    if percent and data["estimate"].notna().any():
        top.axhline(0.0, color="#555555", lw=0.9, ls="--")
    top.set_ylabel(_wrap(estimate_label, 26))
    fig.suptitle(_wrap(title, 64), x=0.01, ha="left")
    handles, texts = top.get_legend_handles_labels()
    _legend_above(fig, handles, texts, 2, below=True)
    on = np.zeros((len(knob_rows), len(data)))
    for j, (knob, value) in enumerate(knob_rows):
        if knob in data:
            on[j] = (data[knob].astype(str) == value).to_numpy()
    if many:
        from matplotlib.colors import ListedColormap

        bottom.imshow(
            on,
            aspect="auto",
            interpolation="nearest",
            cmap=ListedColormap(["#f0f0f0", "#333333"]),
            vmin=0,
            vmax=1,
            extent=(-0.5, len(data) - 0.5, len(knob_rows) - 0.5, -0.5),
        )
    else:
        for j in range(len(knob_rows)):
            used = on[j].astype(bool)
            bottom.scatter(x[used], np.full(int(used.sum()), j), s=14, c="#333333", marker="s")
        bottom.set_ylim(len(knob_rows) - 0.5, -0.5)
    bottom.set_yticks(range(len(knob_rows)))
    bottom.set_yticklabels([f"{k.replace('_', ' ')}: {_knob_value(k, v)}" for k, v in knob_rows])
    bottom.set_xlabel("readings, sorted by estimate")
    bottom.set_xticks([])
    bottom.grid(False)
    low, high = top.get_ylim()
    axis_note = " The vertical axis does not start at 0." if low > 0 or high < 0 else ""
    verdicts = ", ".join(
        f"{colour_word(VERDICT_COLORS.get(str(v), '#333333'))} {v}"
        for v in dict.fromkeys(data.loc[data["estimate"].notna(), "verdict"])
    )
    interval = (
        "the grey band spans their 95% intervals"
        if many and has_ci.any()
        else "lines are their 95% intervals"
        if has_ci.any()
        else "no interval"
    )
    zero = "; the dashed line is zero" if percent and data["estimate"].notna().any() else ""
    return Figure(
        fig,
        name or "specification_curve",
        f"{title}. Each dot is one reading's estimate ({estimate_label}), sorted, coloured by its "
        f"verdict ({verdicts}); {interval}; the black ring is our primary reading{zero}. The "
        "grid below marks, for each reading, the value of each knob it uses." + axis_note,
        alt=f"Specification curve of {len(data)} readings: the estimate of each, sorted and "
        "coloured by verdict, above a grid of the knob values each uses.",
    )


#: Knobs whose values are names of a kind (:func:`regime_core.book.names.display`).
_KNOB_VALUE_KINDS: dict[str, str] = {
    "encoder": "encoder", "level": "dataset", "pool": "pool", "oracle_dataset": "dataset",
    "selector": "selector",
}  # fmt: skip


def _knob_value(knob: str, value: str) -> str:
    kind = _KNOB_VALUE_KINDS.get(knob)
    return names.display(kind, value) if kind else value


def specification_curves(result: Any) -> list[Figure]:
    """One specification curve per claim of a robustness run, titled and labelled as its
    ``multiverse`` in ``paper_claims.yml`` says, differences of rates in percentage points."""
    from regime_core.paper import load_claims

    shown = {c.id: c.multiverse for c in load_claims()}
    curves = []
    for claim_id, knobs in result.knobs.items():
        curves.append(
            specification_curve(
                result.table[result.table["claim"] == claim_id],
                knobs,
                title=shown[claim_id]["title"],
                estimate_label=shown[claim_id].get("estimate", _DEFAULT_ESTIMATE),
                name=f"spec_curve_{claim_id}",
                percent=shown[claim_id].get("percent", True),
            )
        )
    return curves
