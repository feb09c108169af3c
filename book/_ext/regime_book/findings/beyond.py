"""Beyond the paper: the findings of a weight that transfers (the alpha_transfer run)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from regime_core.book.words import (
    Finding,
    Records,
    count,
    interval,
    significant,
)
from regime_core.runner.wording import format_number

#: A spread ratio this close to 1 (a factor of at most this either way) is "near 1": the
#: calibrated α then differs from c by less than that factor.
NEAR_ONE_FACTOR = 1.25


def _pair_name(encoder: str, dataset: str) -> str:
    from regime_core.book import names

    return f"{names.dataset(dataset)} with {names.encoder(encoder)}"


def _transfer_pairs(r: Records) -> list[tuple[str, str, Mapping[str, Any]]]:
    """Every (encoder, dataset, pair node) of the alpha_transfer record but the fitting pair."""
    pairs = r.node("alpha_transfer", "pairs")
    return [
        (encoder, dataset, pair)
        for encoder, by in pairs.items()
        for dataset, pair in by.items()
        if not pair["fitting_pair"]
    ]


def _num(x: float) -> str:
    return format_number(x, "frac", 2)


def _alpha_geometry(r: Records) -> str:
    pairs = r.node("alpha_transfer", "pairs")
    ratios = {
        (e, d): float(p["spreads"]["all"]["all"]["median_ratio"])
        for e, by in pairs.items()
        for d, p in by.items()
        if "median_ratio" in p["spreads"]["all"]["all"]
    }
    lo, hi = min(ratios, key=ratios.__getitem__), max(ratios, key=ratios.__getitem__)
    near = all(1 / NEAR_ONE_FACTOR <= v <= NEAR_ONE_FACTOR for v in ratios.values())
    fit = r.node("alpha_transfer", "fit")
    # c · R holds on the pairs c was not fitted on; the fitting pair's α is cross-fitted
    calibrated = [float(p["rules"]["calibrated"]["alpha"]) for _, _, p in _transfer_pairs(r)]
    fitting = [
        (e, d, float(p["rules"]["calibrated"]["alpha"]))
        for e, by in pairs.items()
        for d, p in by.items()
        if p["fitting_pair"]
    ]
    best = [float(p["best"]["in_sample"]) for by in pairs.values() for p in by.values()]
    head = (
        f"The spread ratio R = σ_q/σ_B lies between {_num(ratios[lo])} "
        f"({_pair_name(*lo)}) and {_num(ratios[hi])} ({_pair_name(*hi)})"
    )
    head += (
        ": near 1 for both encoders, so the geometry barely moves the weight"
        if near
        else ": the encoders and datasets spread their scores differently"
    )
    text = f"{head}. With c = {_num(fit['c'])}, the calibrated α = c·R"
    if calibrated:
        text += (
            f" runs from {_num(min(calibrated))} to {_num(max(calibrated))} on the pairs c was "
            "not fitted on"
        )
    for encoder, dataset, alpha in fitting:
        text += (
            f" ({_num(alpha)} on {_pair_name(encoder, dataset)}, the fitting pair, where each "
            "fold's c is fitted on the other folds, so its α is not the deployed c times its R)"
        )
    return f"{text}, while the best grid α runs from {_num(min(best))} to {_num(max(best))}."


def _transfer_effects(r: Records, comparison: str) -> tuple[list[str], int, int]:
    """``comparison`` on every pair the calibration was not fitted on: each as "<interval> on
    <pair>", how many are significant gains and how many significant losses."""
    pairs = _transfer_pairs(r)
    parts = [f"{interval(p[comparison])} on {_pair_name(e, d)}" for e, d, p in pairs]
    found = [p[comparison] for _, _, p in pairs]
    gains = sum(1 for c in found if significant(c) and c["diff"] > 0)
    losses = sum(1 for c in found if significant(c) and c["diff"] < 0)
    return parts, gains, losses


def _alpha_gain(r: Records) -> str:
    rows, wins, losses = _transfer_effects(r, "calibrated_vs_fixed")
    n = len(rows)
    if wins == n:
        verdict = "it beats the fixed α significantly on every one"
    elif wins and losses:
        verdict = (
            f"a significant gain on {count(wins)} of them and a significant loss on {count(losses)}"
        )
    elif wins:
        verdict = f"a significant gain on {count(wins)} of them and no significant loss"
    elif losses:
        verdict = f"no significant gain on any of them and a significant loss on {count(losses)}"
    else:
        verdict = "no significant difference on any of them"
    return (
        f"Against the fixed α = {_num(r.get('alpha_transfer', 'protocol.fixed_alpha'))}, the "
        f"calibrated α changes union hit@5 by " + "; ".join(rows) + f": over the {count(n)} "
        f"pairs it was not fitted on, {verdict}."
    )


def _alpha_control(r: Records) -> str:
    tuned = float(r.get("alpha_transfer", "fit.tuned_fixed_alpha"))
    parts, better, worse = _transfer_effects(r, "calibrated_vs_tuned_fixed")
    n = len(parts)
    if better == 0 and worse == 0:
        tail = (
            "no pair tells them apart, so the gain over 0.25 may come from a better constant "
            "rather than from the geometry"
        )
    elif better and not worse:
        tail = f"the geometry adds a significant gain on {count(better)} of {count(n)} pairs"
    else:
        tail = (
            f"the geometry helps significantly on {count(better)} and hurts on {count(worse)} "
            f"of {count(n)} pairs"
        )
    return (
        f"The control without geometry, the best grid α of the fitting pair (α = {_num(tuned)}) "
        f"used as a constant everywhere, against the calibrated α: calibrated − constant is "
        + "; ".join(parts)
        + f"; {tail}."
    )


def _alpha_router(r: Records) -> str:
    pairs = r.node("alpha_transfer", "pairs")
    encoder = r.get("alpha_transfer", "protocol.train_encoder")
    parts = []
    for dataset, pair in pairs[encoder].items():
        fixed = pair["routing"]["fixed"]["routed_vs_union"]
        cal = pair["routing"]["calibrated"]["routed_vs_union"]
        parts.append(
            f"{interval(fixed)} under the fixed α and {interval(cal)} under the calibrated one "
            f"on {_pair_name(encoder, dataset)}"
        )
    gains = {
        rule: sum(
            significant(p["routing"][rule]["routed_vs_union"])
            and p["routing"][rule]["routed_vs_union"]["diff"] > 0
            for p in pairs[encoder].values()
        )
        for rule in ("fixed", "calibrated")
    }
    if gains["calibrated"] > gains["fixed"]:
        tail = "a heavier bridge gives the router more to do"
    elif gains["calibrated"] < gains["fixed"]:
        tail = "the calibrated weight leaves the router less to add"
    else:
        tail = "the rule does not change where routing pays"
    return (
        "Retrained at the weight of each rule, the router against always-union adds "
        + "; ".join(parts)
        + f": {tail}."
    )


FINDINGS: tuple[Finding, ...] = (
    Finding("alpha_geometry", "book/claims/alpha_transfer", ("alpha_transfer",), _alpha_geometry),
    Finding("alpha_gain", "book/claims/alpha_transfer", ("alpha_transfer",), _alpha_gain),
    Finding("alpha_control", "book/claims/alpha_transfer", ("alpha_transfer",), _alpha_control),
    Finding("alpha_router", "book/claims/alpha_transfer", ("alpha_transfer",), _alpha_router),
)
