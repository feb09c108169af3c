"""The router's figures: training, zero-shot transfer, routing latency, ablations and the
transfer of α (the alpha_transfer run)."""

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
from regime_core.book.words import alpha_label


def _policy_colours(policies: Sequence[str]) -> str:
    return ", ".join(f"{colour_word(ARM_COLORS[p])} {names.arm(p, short=True)}" for p in policies)


# --- The router ----------------------------------------------------------------------------------

_POLICIES: tuple[str, ...] = ("q", "union", "routed", "oracle")


def _policy_bars(
    fig: Any, ax: Any, groups: Sequence[str], values: Mapping[str, Sequence[float]]
) -> None:
    """The policies' bars side by side in each group, each labelled with its percentage, and
    their legend above the figure (the router's and the zero-shot hit@k figures)."""
    x = np.arange(len(groups))
    series = [(ys, ARM_COLORS[policy]) for policy, ys in values.items()]
    handles = _grouped_bars(ax, x, series, 0.8 / len(values), labelled=True)
    _column_groups(ax, x, groups)
    _legend_above(fig, handles, [names.arm(p, short=True) for p in values], 4)


def _column_groups(ax: Any, x: Any, groups: Sequence[str]) -> None:
    """Groups of vertical bars: labelled at ``x``, no vertical grid lines, a rate axis from 0."""
    ax.set_xticks(x, groups)
    ax.grid(axis="x", visible=False)
    _percent_axis(ax)


def selector_agreement(agreement: pd.DataFrame) -> Figure:
    """How often the selected B_rel is the gold relation sentence, against two baselines."""
    rows = agreement[agreement["relation_source"] == "all"]
    fig, ax = _subplots(3.4)
    x = np.arange(len(rows))
    series = {"selected": PALETTE[2], "first_sentence": PALETTE[7], "chance": "#cccccc"}
    handles = _grouped_bars(ax, x, [(rows[c], colour) for c, colour in series.items()], 0.26)
    _column_groups(ax, x, [names.dataset(d) for d in rows["dataset"]])
    ax.set_ylabel("agreement with gold B_rel")
    _legend_above(fig, handles, ["selector", "first sentence", "a random sentence"], 3)
    return Figure(
        fig,
        "selector_agreement",
        "How often the B_rel the selector picks (green) is the dataset's gold relation "
        "sentence, per dataset, next to always taking the bridge's first sentence (grey) and a "
        "uniformly random sentence (light grey); items with a gold sentence.",
        alt="Grouped bars per dataset: how often the selector's, the first and a random "
        "sentence is the gold relation sentence.",
    )


def router_training(result: Any) -> Figure:
    """Left: hit@k of always-q, always-union, the cross-fitted router and the oracle; right:
    the share of each question type the router sends to union."""
    from regime_core.experiments.router_train import breakdown

    k = result.config.k
    fig, (left, right) = _subplots(3.6, 1, 2, width_ratios=[1.1, 1])
    hits = {p: [float(np.mean(result.outcome.hits[p]))] for p in _POLICIES}
    _policy_bars(fig, left, [names.dataset(result.data.dataset)], hits)
    left.set_ylabel(f"{_hit(k)} of the hop-2 passage")
    left.set_title("policies (5-fold cross-fitted)" if result.config.n_splits == 5 else "policies")
    by_type = breakdown(result.data, result.outcome, "native_type")
    y = np.arange(len(by_type))
    right.barh(y, by_type["share_union"], color=ARM_COLORS["union"], height=0.6)
    types = zip(by_type["native_type"], by_type["n"], strict=True)
    _bar_rows(right, y, [f"{t}\n(n = {n})" for t, n in types])
    _percent_axis(right, "x")
    right.set_xlabel("share routed to union")
    right.set_title("decisions by question type")
    return Figure(
        fig,
        "router_training",
        f"Left: {_hit(k)} on {names.dataset(result.data.dataset)} of always-q, always-union, the "
        "router (each question decided by a model that never saw it) and the oracle (the better "
        f"of q and union per question): {_policy_colours(_POLICIES)}. Right: the share of each "
        "question type the router sends to union.",
        alt=f"Bars: {_hit(k)} of always-q, always-union, the router and the oracle, and the "
        "share of each question type routed to union.",
    )


def router_coefficients(result: Any) -> Figure:
    """The deployment router's standardised coefficients."""
    coef = pd.Series(result.coefficients())
    fig, ax = _subplots(0.45 * len(coef) + 1.3)
    y = np.arange(len(coef))
    colors = [ARM_COLORS["union"] if v > 0 else ARM_COLORS["q"] for v in coef]
    ax.barh(y, coef.to_numpy(), color=colors, height=0.6)
    _bar_rows(ax, y, [names.display("feature", f) for f in coef.index])
    ax.axvline(0, color="#333333", lw=1.1)
    ax.set_xlabel("standardised coefficient (> 0 favours union)")
    return Figure(
        fig,
        "router_coefficients",
        "The deployment router's logistic-regression coefficients on its five standardised "
        "features: green pushes a question towards union, blue towards q.",
        alt="Horizontal bars: the router's coefficient on each of its five features, positive "
        "towards union, negative towards q.",
    )


def zero_shot_hits(result: Any) -> Figure:
    """hit@k of the four policies on each zero-shot dataset."""
    datasets = list(result.outcomes)
    fig, ax = _subplots(3.6)
    values = {p: [float(np.mean(result.outcomes[d].hits[p])) for d in datasets] for p in _POLICIES}
    _policy_bars(fig, ax, [names.dataset(d) for d in datasets], values)
    ax.set_ylabel(f"{_hit(result.config.k)} of the hop-2 passage")
    return Figure(
        fig,
        "zero_shot_hits",
        f"{_hit(result.config.k)} of always-q, always-union, the frozen router and the oracle "
        f"(the better of q and union per question; {_policy_colours(_POLICIES)}) on each "
        "dataset the router never saw; the axis starts at 0.",
        alt=f"Grouped bars per dataset: {_hit(result.config.k)} of always-q, always-union, the "
        "router and the oracle.",
    )


# --- Routing latency -----------------------------------------------------------------------------

#: The colour of each language the router is timed in.
LANGUAGE_COLORS: dict[str, str] = {"python": PALETTE[0], "javascript": PALETTE[1]}
#: The paper's bound: a dark grey, unlike either language's colour.
_BOUND_GREY = "#555555"


def _duration_label(seconds: float, _position: Any = None) -> str:
    """An axis tick in seconds as words: ``1e-05`` → ``10 µs``, ``0.001`` → ``1 ms``."""
    if seconds >= 1.0:
        return f"{seconds:g} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:g} ms"
    return f"{seconds * 1e6:g} µs"


def routing_latency(timings: Any, *, bound: float | None = None) -> Figure:
    """Every timing of the latency run (:class:`~regime_core.router.latency.LatencyResult`), one
    row per language and mode on a log axis: warm (each question's median over the passes) as
    filled dots, cold (one per fresh process) hollow, the median and 99th percentile of each
    row marked, and the paper's bound (``paper_claims.yml``, the claim judged on this run)."""
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    from regime_core.paper import claim_where

    if bound is None:
        bound = claim_where(run="routing_latency").number("bound")
    seconds = timings.seconds()
    rows = [(language, mode) for language in seconds for mode in ("warm", "cold")]
    fig, ax = _subplots(0.75 * len(rows) + 1.6)
    rng = np.random.default_rng(0)  # the vertical jitter only: the same figure every time
    for y, (language, mode) in enumerate(rows):
        values = np.asarray(seconds[language][mode], dtype=float)
        colour = LANGUAGE_COLORS[language]
        jitter = y + rng.uniform(-0.22, 0.22, values.size)
        if mode == "warm":
            ax.scatter(values, jitter, s=9, color=colour, alpha=0.35, linewidths=0)
        else:
            ax.scatter(values, jitter, s=30, facecolors="white", edgecolors=colour, linewidths=1.2)
        p50, p99 = np.percentile(values, [50, 99])
        ax.plot([p50], [y], marker="D", markersize=7, color="black", linestyle="none")
        ax.plot([p99, p99], [y - 0.34, y + 0.34], color="black", linewidth=2.2)
    ax.axvline(bound, color=_BOUND_GREY, linestyle="--", linewidth=1.4)
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(LogLocator(base=10))
    ax.xaxis.set_major_formatter(FuncFormatter(_duration_label))
    ax.xaxis.set_minor_formatter(NullFormatter())
    low = min(float(np.min(v)) for modes in seconds.values() for v in modes.values())
    high = max(float(np.max(v)) for modes in seconds.values() for v in modes.values())
    ax.set_xlim(min(low, bound) / 2, max(high, bound) * 2)
    _bar_rows(ax, np.arange(len(rows)), [f"{names.language(lang)}, {mode}" for lang, mode in rows])
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xlabel("time to route one question (log scale)")
    handles = [
        Line2D([], [], marker="D", color="black", linestyle="none", markersize=7),
        Line2D([], [], color="black", linewidth=2.2),
        Line2D([], [], color=_BOUND_GREY, linestyle="--", linewidth=1.4),
    ]
    _legend_above(
        fig, handles, ["median", "99th percentile", f"paper: under {_duration_label(bound)}"], 3
    )
    languages = " and ".join(
        f"{colour_word(LANGUAGE_COLORS[language])} {names.language(language)}"
        for language in seconds
    )
    return Figure(
        fig,
        "routing_latency",
        f"The time the router takes per question, {languages}, on a log axis. Warm rows: one "
        "filled dot per question, the median of its timed passes in a process that has already "
        "routed others; cold rows: one hollow circle per fresh process, its first call. In each "
        "row a black diamond marks the median and a black bar the 99th percentile; the dashed "
        f"grey line is the paper's bound, {_duration_label(bound)}.",
        alt="Dots on a log time axis, one row per language and warm or cold: the time to route "
        "each question, with the median, the 99th percentile and the paper's bound of "
        f"{_duration_label(bound)}.",
    )


# --- Ablations -----------------------------------------------------------------------------------


def _best_ring(ax: Any, x: float, y: Any, *, size: float, width: float) -> Any:
    """A hollow black ring at ``(x, y)``, the mark of a best α; the line, for the legend."""
    (ring,) = ax.plot([x], y, ls="none", marker="o", ms=size, mfc="none", mec="#000000", mew=width)
    return ring


def alpha_sweep(
    sweep: pd.DataFrame,
    *,
    alpha: float,
    k: int = config.HEADLINE_K,
    best: pd.DataFrame | None = None,
) -> Figure:
    """hit@k of q, union, the router and the oracle against α: one panel per dataset, one row
    of panels per encoder (a frame without an ``encoder`` column is one row). ``best``
    (``AblationResult.alpha_rule``: ``encoder``, ``dataset``, ``best_alpha``) rings the router's
    best α of the grid in each panel."""
    frame = sweep if "encoder" in sweep else sweep.assign(encoder="")
    encoders = list(dict.fromkeys(frame["encoder"]))
    datasets = list(dict.fromkeys(frame["dataset"]))
    height = 3.4 if len(encoders) == 1 else 2.4 * len(encoders) + 0.9
    fig, axes = _subplots(
        height, len(encoders), len(datasets), sharex=True, sharey=True, squeeze=False
    )
    styles = {"q": ("--", None), "union": ("-", "o"), "routed": ("-", "s"), "oracle": (":", None)}
    best_at = (
        {(str(r.encoder), str(r.dataset)): float(r.best_alpha) for r in best.itertuples()}
        if best is not None and len(best)
        else {}
    )
    handles: list[Any] = []
    ringed = None
    for i, encoder in enumerate(encoders):
        for j, name in enumerate(datasets):
            ax = axes[i, j]
            part = frame[(frame["encoder"] == encoder) & (frame["dataset"] == name)]
            part = part.sort_values("alpha")
            handles = []
            for policy, (ls, marker) in styles.items():
                (line,) = ax.plot(
                    part["alpha"],
                    part[f"hit_{policy}"],
                    ls=ls,
                    marker=marker,
                    ms=4 if len(encoders) > 1 else 5,
                    color=ARM_COLORS[policy],
                    lw=1.6,
                )
                handles.append(line)
            where = best_at.get((str(encoder), name))
            if where is not None:
                y = part.loc[part["alpha"] == where, "hit_routed"]
                ringed = _best_ring(ax, where, y.to_numpy()[:1], size=11, width=1.4)
            ax.axvline(alpha, color="#333333", lw=0.8, ls="-")
            title = names.dataset(name)
            if encoder:
                title = f"{title}\n{names.encoder(encoder)}" if len(encoders) > 1 else title
            ax.set_title(title, fontsize=SMALLEST_TEXT)
            _percent_axis(ax)
            ax.set_xticks([0, 0.5, 1], ["0", "0.5", "1"])
            if i == len(encoders) - 1:
                ax.set_xlabel("α")
        axes[i, 0].set_ylabel(_hit(k))
    labels = [names.arm(p, short=True) for p in styles]
    if ringed is not None:
        handles, labels = [*handles, ringed], [*labels, "best α (router)"]
    _legend_above(fig, handles, labels, len(labels))
    per = "one panel per dataset and encoder" if len(encoders) > 1 else "one panel per dataset"
    ring = (
        "; a hollow black ring marks the α of the grid at which the router's hit rate is highest "
        "(ties: the α closest to the paper's)"
        if ringed is not None
        else ""
    )
    return Figure(
        fig,
        "alpha_sweep",
        f"{_hit(k)} of always-q (blue, dashed), always-union (green circles), the router (sky "
        "blue squares) and the oracle (grey, dotted) as the weight α of B_rel in the union "
        "query goes from 0 to 1 (labels, router and evaluation all use that α; the solid grey "
        f"vertical line marks the paper's α = {alpha:g}){ring}; {per}.",
        alt=f"Line charts, {per}: {_hit(k)} of the four policies as α goes from 0 to 1.",
    )


def leave_one_feature_out(table: pd.DataFrame, *, k: int = config.HEADLINE_K) -> Figure:
    """Δ hit@k (routed − q) of the router without each feature, per dataset."""
    wide = table.pivot(index="without", columns="dataset", values="routed_vs_q_diff")
    order = ["none", *[f for f in dict.fromkeys(table["without"]) if f != "none"]]
    wide = wide.loc[[f for f in order if f in wide.index]]
    datasets = list(dict.fromkeys(table["dataset"]))
    colours = [PALETTE[[0, 1, 2, 4, 5][i % 5]] for i in range(len(datasets))]
    fig, ax = _subplots(0.55 * len(wide) + 1.6)
    y = np.arange(len(wide))
    height = 0.8 / len(datasets)
    handles = [
        ax.barh(
            y + (i - (len(datasets) - 1) / 2) * height, 100 * wide[d].to_numpy(), height, color=c
        )
        for i, (d, c) in enumerate(zip(datasets, colours, strict=True))
    ]
    _bar_rows(ax, y, [names.display("feature", f) for f in wide.index])
    ax.axvline(0, color="#333333", lw=1.1)
    ax.set_xlabel(f"Δ {_hit(k)}, routed − q (percentage points)")
    ax.set_ylabel("feature left out")
    _legend_above(fig, handles, [names.dataset(d) for d in datasets], len(datasets))
    return Figure(
        fig,
        "leave_one_feature_out",
        f"What the router gains over always-q ({_hit(k)}, percentage points) when it is "
        "retrained without one of its five features, per dataset ("
        + ", ".join(
            f"{colour_word(c)} {names.dataset(d)}" for d, c in zip(datasets, colours, strict=True)
        )
        + "); the first row keeps all five.",
        alt="Grouped horizontal bars: the router's gain over always-q without each feature, "
        "per dataset.",
    )


# --- Beyond the paper: a weight that transfers (the alpha_transfer run) --------------------------

#: How each α rule's weight is drawn on the union α curves: colour and line style.
_RULE_STYLES: dict[str, tuple[str, str]] = {
    "fixed": ("#333333", "-"),
    "calibrated": (PALETTE[3], "--"),
    "calibrated_question": (PALETTE[4], ":"),
    "tuned_fixed": (PALETTE[1], "-."),
}
_LINE_WORDS: dict[str, str] = {"-": "solid", "--": "dashed", ":": "dotted", "-.": "dash-dot"}
_RULE_WORDS: dict[str, str] = {
    "fixed": "the paper's fixed α",
    "calibrated": "the calibrated α = c·R",
    "calibrated_question": "its per-question variant (the median weight)",
    "tuned_fixed": "the tuned constant of the fitting pair",
}


def _colour(colour: str) -> str:
    return "dark grey" if colour == "#333333" else colour_word(colour)


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


def _curve(cell: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    pairs = sorted((float(alpha_label(key)), float(v)) for key, v in cell["curve"].items())
    return np.array([a for a, _ in pairs]), np.array([h for _, h in pairs])


def alpha_transfer(numbers: Mapping[str, Any], *, k: int = config.HEADLINE_K) -> Figure:
    """Per encoder (a row) and dataset (a panel), the union α curve of an ``alpha_transfer``
    record's ``numbers`` with the best grid α ringed and each rule's α as a vertical line; in
    the row's last panel each dataset's best α against its spread ratio R, with the calibrated
    rule's line α = c·R: does the best α follow the ratio?"""
    pairs = numbers["pairs"]
    encoders = list(pairs)
    datasets = list(dict.fromkeys(d for by in pairs.values() for d in by))
    c = float(numbers["fit"]["c"])
    fig, axes = _subplots(
        2.5 * len(encoders) + 1.0, len(encoders), len(datasets) + 1, squeeze=False
    )
    markers = ("o", "s", "^", "D", "v")
    handles: dict[str, Any] = {}
    for i, encoder in enumerate(encoders):
        ratio_ax = axes[i, -1]
        for j, dataset in enumerate(datasets):
            ax = axes[i, j]
            cell = pairs[encoder].get(dataset)
            if cell is None:
                ax.set_visible(False)
                continue
            alphas, hits = _curve(cell)
            (line,) = ax.plot(alphas, hits, color=ARM_COLORS["union"], lw=1.6)
            handles.setdefault("union", line)
            for rule, (colour, ls) in _RULE_STYLES.items():
                if rule in cell["rules"]:
                    handles.setdefault(
                        rule,
                        ax.axvline(
                            float(cell["rules"][rule]["alpha"]), color=colour, ls=ls, lw=1.1
                        ),
                    )
            best = float(cell["best"]["in_sample"])
            ring = _best_ring(ax, best, [float(cell["best"]["in_sample_hit"])], size=10, width=1.3)
            handles.setdefault("best", ring)
            title = f"{names.dataset(dataset)}, {names.encoder(encoder)}"
            ax.set_title(_wrap(title, 18), fontsize=SMALLEST_TEXT)
            _percent_axis(ax)
            ax.set_xticks([0, 1, 2], ["0", "1", "2"])
            if i == len(encoders) - 1:
                ax.set_xlabel("α")
            ratio = cell["spreads"]["all"]["all"].get("median_ratio")
            if ratio is not None:
                ratio_ax.plot(
                    [float(ratio)],
                    [best],
                    ls="none",
                    marker=markers[j % len(markers)],
                    color="#333333",
                    ms=6,
                    label=names.dataset(dataset),
                )
        axes[i, 0].set_ylabel(_hit(k))
        r = np.linspace(0.5, 1.5, 11)
        ratio_ax.plot(r, c * r, color=_RULE_STYLES["calibrated"][0], ls="--", lw=1.1)
        ratio_ax.set_xlim(0.5, 1.5)
        ratio_ax.set_ylim(0, 2.05)
        ratio_ax.set_title("best α vs R", fontsize=SMALLEST_TEXT)
        if i == len(encoders) - 1:
            ratio_ax.set_xlabel("R = σ_q/σ_B")
    labels = {
        "union": names.arm("union", short=True),
        "best": "best grid α",
        "fixed": "fixed",
        "calibrated": "calibrated",
        "calibrated_question": "per question",
        "tuned_fixed": "tuned constant",
    }
    shown = [key for key in labels if key in handles]
    _legend_above(fig, [handles[key] for key in shown], [labels[key] for key in shown], 3)
    rules = "; ".join(
        f"{_RULE_WORDS[rule]} as {_article(_colour(colour))} {_colour(colour)} "
        f"{_LINE_WORDS[ls]} vertical line"
        for rule, (colour, ls) in _RULE_STYLES.items()
    )
    order = ", ".join(names.dataset(d) for d in datasets)
    marker_words = ", ".join(
        f"{names.dataset(d)} {('a circle', 'a square', 'a triangle', 'a diamond', 'a triangle')[j]}"
        for j, d in enumerate(datasets)
    )
    return Figure(
        fig,
        "alpha_transfer",
        f"One row per encoder, one panel per dataset ({order}): {_hit(k)} of always-union "
        f"(green line) as the weight α of B_rel goes from 0 to 2, the grid α of the highest "
        f"{_hit(k)} on all the questions ringed in black, and each rule's α: {rules}. The last "
        f"panel of each row plots every dataset's best grid α against its spread ratio R "
        f"(the median σ_q/σ_B; {marker_words}, in dark grey) with the calibrated rule's line "
        f"α = c·R (c = {c:.2f}, vermilion dashed): the points lie on the line if the best α "
        "follows the ratio.",
        alt=f"Line charts, one per dataset and encoder, of {_hit(k)} of always-union against α "
        "with each rule's α marked, and per encoder a scatter of the best α against the spread "
        "ratio.",
    )
