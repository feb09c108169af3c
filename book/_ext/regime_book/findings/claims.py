"""The findings of the paper's claims: the data chapter, T1, T2, T3, the router, zero-shot
transfer and robustness."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from regime_core.book import names
from regime_core.book.words import (
    Finding,
    Records,
    alpha_label,
    count,
    direction,
    holm_interval,
    holm_levels,
    interval,
    pct,
    pp,
    row_comparison,
    significant,
)

#: The two encoders the findings compare, as their sentences name them.
_ENCODERS: tuple[tuple[str, str], ...] = (("minilm", "MiniLM"), ("tfidf", "TF-IDF"))

# --- data ---------------------------------------------------------------------------------------


def _regime_shares(r: Records) -> str:
    parts = []
    for ds in ("hotpotqa", "2wikimultihopqa", "musique"):
        node = r.node("data_regimes", f"regimes.{ds}.all")
        parts.append(
            f"{names.dataset(ds)} {pct(node['B-dominant']['share'])} B-dominant, "
            f"{pct(node['Q-dominant']['share'])} Q-dominant and {pct(node['neither']['share'])} "
            "neither"
        )
    musique = r.node("data_regimes", "regimes.musique.all")
    big = max(("B-dominant", "Q-dominant", "neither"), key=lambda k: musique[k]["share"])
    tail = (
        " On MuSiQue the questions whose hop-2 entity is named neither in the question nor in a "
        "relation sentence of the bridge are the largest group: MuSiQue's hop-2 passage is often "
        "titled otherwise than the entity that links the hops."
        if big == "neither"
        else ""
    )
    return "By our predicates the questions split as follows: " + "; ".join(parts) + "." + tail


# --- T1 -----------------------------------------------------------------------------------------


def _t1_fit(r: Records) -> str:
    s = r.node("t1_auc_margin", "summary")
    margin = r.get("t1_auc_margin", "margin")
    other = r.node("t1_auc_margin", "other_margin")
    paper = r.node("t1_auc_margin", "paper")
    share = f"{count(s['probit_cells_passing'])} of {count(s['cells_fitted'])} cells"
    name = {"std_margin": "standardised margin", "margin": "raw margin"}
    head = (
        f"With the {name[margin]}, the derivation's form, one probit curve fits the per-question "
        f"AUC with R² ≥ {paper['r2_threshold']:.2f} in {share}"
    )
    target = paper["cells_passing"] / paper["cells"]
    verdict = (
        "at least the paper's share"
        if s["probit_cells_passing"] / max(1, s["cells_fitted"]) >= target
        else "fewer than the paper's share"
    )
    alt = (
        f"; with the {name[other['margin']]} the same fit passes in "
        f"{count(other['probit_cells_passing'])} of {count(other['cells_fitted'])}"
    )
    rho = (
        f". Spearman's ρ between margin and AUC is positive and significant in "
        f"{count(s['spearman_positive_significant_cells'])} of {count(s['cells_fitted'])} cells "
        f"(median {s['spearman_median_rho']:.2f})"
    )
    return (
        f"{head} ({verdict}: {paper['cells_passing']} of {paper['cells']}){alt}{rho}: the AUC "
        "rises with the margin everywhere; whether one curve fits it closely depends on the margin."
    )


def _t1_dropped(r: Records) -> str:
    dropped = int(r.get("t1_auc_margin", "summary.queries_without_negative"))
    queries = int(r.get("t1_auc_margin", "summary.queries"))
    encoders = len(r.record("t1_auc_margin")["config"]["encoders"])
    # T1 fits each question once per encoder: its count is of question × encoder pairs
    pairs = "question × encoder pairs" if encoders > 1 else "questions"
    each = f" (each question once per encoder, {count(encoders)} encoders)" if encoders > 1 else ""
    if dropped == 0:
        return (
            f"Every one of the {count(queries)} {pairs}{each} has at least one negative candidate."
        )
    return (
        f"{count(dropped)} of the {count(queries)} {pairs}{each} have no negative candidate "
        "left once the bridge is excluded, so they have no AUC and no margin: they are counted "
        "here and left out of every fit."
    )


# --- T2 -----------------------------------------------------------------------------------------


def _t2_regimes(r: Records) -> str:
    out = []
    levels = holm_levels(r.node("t2_regime_decomposition", "cells"))
    for enc, name in _ENCODERS:
        b_key, q_key = f"{enc}.all.P1-P2+.union_vs_q", f"{enc}.all.P1+P2-.union_vs_q"
        b = r.node("t2_regime_decomposition", f"cells.{b_key}")
        q = r.node("t2_regime_decomposition", f"cells.{q_key}")
        out.append(
            f"with {name}, adding B_rel to the question changes hit@5 by "
            f"{holm_interval(b, levels.get(b_key))} where only the bridge names the hop-2 "
            f"entity ({direction(b)}) and by {holm_interval(q, levels.get(q_key))} where only "
            f"the question names it ({direction(q)})"
        )
    return "Pooled over the datasets, " + "; ".join(out) + "."


def _t2_bridge(r: Records) -> str:
    out = []
    for enc, name in _ENCODERS:
        cell = r.node("t2_regime_decomposition", f"cells.{enc}.all.P1-P2+")
        qcell = r.node("t2_regime_decomposition", f"cells.{enc}.all.P1+P2-")
        bridge, union = cell["bridge_vs_q"], cell["union_vs_q"]
        better = "beats" if bridge["diff"] > union["diff"] else "does not beat"
        out.append(
            f"with {name} it {better} union there ({pp(bridge['diff'])} against "
            f"{pp(union['diff'])} over q) and changes hit@5 by {pp(qcell['bridge_vs_q']['diff'])} "
            "where the question names the entity"
        )
    return (
        "The whole bridge passage as the query, the usual iterative practice, is the strongest "
        "arm in B-dominant questions and the weakest in Q-dominant ones: "
        + "; ".join(out)
        + ". Union is the safer query: it gains less where the bridge is needed and loses less "
        "where it is not."
    )


# --- T3 -----------------------------------------------------------------------------------------


def _t3_drop(r: Records) -> str:
    paper = r.node("t3_brel_knockout", "paper")
    low, high = paper["drop_low"], paper["drop_high"]
    out = []
    levels = holm_levels(r.node("t3_brel_knockout", "comparisons"))
    for enc, name in _ENCODERS:
        c = r.node("t3_brel_knockout", f"comparisons.union_vs_knockout.{enc}.all")
        if c["drop"] < low:
            where = "below the paper's range"
            if c["ci_hi"] >= low:
                where += " though its interval reaches into it"
        elif c["drop"] > high:
            where = "above the paper's range"
            if c["ci_lo"] <= high:
                where += " though its interval reaches into it"
        else:
            where = "inside the paper's range"
        level = levels.get(f"union_vs_knockout.{enc}.all")
        out.append(f"{holm_interval(c, level, 'drop')} with {name}, {where}")
    n = int(r.get("t3_brel_knockout", "comparisons.union_vs_knockout.minilm.all.n"))
    return (
        f"On {count(n)} B-dominant questions, knocking B_rel out of the bridge costs "
        + "; it costs ".join(out)
        + f" (the paper: {pp(low)} to {pp(high)}). The relation sentence carries what the "
        "bridge adds; how much that is worth depends on the encoder."
    )


# --- the router ---------------------------------------------------------------------------------


def _router_types(r: Records) -> str:
    by_type = r.node("router_train", "train.by_type")
    comparison = by_type.get("comparison")
    others = {k: v for k, v in by_type.items() if k != "comparison"}
    n_other = sum(v["n"] for v in others.values())
    to_union = sum(v["n"] * v["share_union"] for v in others.values())
    text = (
        f"Cross-fitted on 2WikiMultiHopQA, the router sends {pct(comparison['share_union'])} of "
        f"the {count(comparison['n'])} comparison questions to union and "
        f"{pct(to_union / max(1, n_other))} of the {count(n_other)} others"
        if comparison is not None
        else "The training sample holds no comparison question"
    )
    if comparison is not None and comparison["share_union"] <= 0.05 and to_union / n_other >= 0.95:
        text += (
            ": in effect it detects comparison questions, which name both entities and so are "
            "the Q-dominant case, and sends everything else to union"
        )
    return text + "."


def _router_constant(r: Records) -> str:
    coefficients = r.node("router_train", "train.coefficients")
    zero = [name for name, value in coefficients.items() if value == 0.0]
    used = len(coefficients) - len(zero)
    if not zero:
        return f"Each of its {count(len(coefficients))} features has a non-zero coefficient."
    names = ", ".join(f"`{z}`" for z in zero)
    verb, its = ("is", "its") if len(zero) == 1 else ("are", "their")
    return (
        f"{names} {verb} constant on the labelled training questions, so {its} "
        f"coefficient is 0: the router routes on {count(used)} of its {count(len(coefficients))} "
        "features, and a question where only that feature would differ gets the same decision."
    )


def _sweep(r: Records, dataset: str, comparison: str) -> dict[str, Mapping[str, Any]]:
    """``{α: comparison}`` over the ablations' α sweep of ``dataset`` with the run's main encoder
    (the first of its ``encoders``), leaving out degenerate rows and rows without it."""
    encoder = r.record("ablations")["config"]["encoders"][0]
    rows = r.node("ablations", f"alpha_sweep.{encoder}.{dataset}")
    found = {
        alpha_label(key): row_comparison(row, comparison)
        for key, row in rows.items()
        if not row.get("degenerate")
    }
    return {alpha: c for alpha, c in found.items() if c is not None}


def _router_vs_union(r: Records) -> str:
    main = r.node("router_train", "train.outcome.routed_vs_union")
    head = (
        f"Against always-union, the policy that needs no router, routing adds {interval(main)} at "
        f"the paper's α ({direction(main)})"
    )
    found = _sweep(r, "2wikimultihopqa", "routed_vs_union")
    parts = [f"{interval(c)} at α = {a}" for a, c in found.items()]
    if not parts:
        return head + "."
    gains = [c for c in found.values() if significant(c) and c["diff"] > 0]
    tail = (
        ": the router earns its keep once the bridge weighs enough to hurt the questions that "
        "do not need it."
        if gains and not (significant(main) and main["diff"] > 0)
        else "."
    )
    return head + "; across the α sweep it adds " + ", ".join(parts) + tail


# --- transfer -----------------------------------------------------------------------------------


def _musique_tie(r: Records) -> str:
    t = r.node("zero_shot_transfer", "transfer.musique")
    union = t["union_vs_q"]
    gains, losses = int(union["n_a_better"]), int(union["n_b_better"])
    if t["hit@5_q"] == t["hit@5_union"] == t["hit@5_routed"]:
        head = (
            f"On MuSiQue always-q, always-union and routed all reach {pct(t['hit@5_q'])}: at the "
            f"paper's α, union wins {count(gains)} questions and loses {count(losses)}, which "
            "cancel"
        )
    else:
        head = (
            f"On MuSiQue union against q wins {count(gains)} questions and loses {count(losses)} "
            f"({interval(union)})"
        )
    oracle = t["oracle_vs_q"]
    return (
        head
        + f"; an oracle choosing per question would add {pp(oracle['diff'])}. The router sends "
        f"{pct(t['share_union'])} of MuSiQue's questions to union, so it can only be as good as "
        "union is at this α."
    )


def _musique_alpha(r: Records) -> str:
    found = _sweep(r, "musique", "routed_vs_q")
    if not found:
        return "The α sweep holds no MuSiQue setting."
    text = ", ".join(f"{interval(c)} at α = {a}" for a, c in found.items())
    gains = [a for a, c in found.items() if significant(c) and c["diff"] > 0]
    tail = (
        f": from α = {gains[0]} on, the bridge weighs enough for the router to gain"
        if gains
        else ": at no α of the grid does the router gain significantly"
    )
    return f"Routed − always-q on MuSiQue across the α sweep is {text}{tail}."


# --- robustness ---------------------------------------------------------------------------------


def _robustness_overall(r: Records) -> str:
    claims = r.node("robustness", "claims")
    judged = {k: v for k, v in claims.items() if int(v.get("readings", 0))}
    readings = sum(int(v["readings"]) for v in judged.values())
    holding = sum(int(v["holding"]) for v in judged.values())
    knobs: dict[str, int] = {}
    for v in judged.values():
        knob = str(v.get("most_sensitive_knob", "none"))
        if knob != "none":
            knobs[knob] = knobs.get(knob, 0) + 1
    steady = sorted(k for k, v in judged.items() if v.get("most_sensitive_knob") == "none")
    left_out = sum(
        int(v.get("degenerate_readings", 0)) + int(v.get("not_judged_readings", 0))
        for v in claims.values()
    )
    text = (
        f"Across {count(readings)} judged readings of {count(len(judged))} claims (claim × "
        f"reading pairs; {count(left_out)} more are no evidence and left out), "
        f"{count(holding)} reproduce ({pct(holding / max(1, readings))})"
    )
    if knobs:
        top = max(knobs, key=lambda k: (knobs[k], k))
        text += (
            f"; the knob that changes the most claims' verdicts is {top.replace('_', ' ')} "
            f"({count(knobs[top])} of them)"
        )
    if steady:
        text += f"; no knob changes the verdict of {', '.join(f'`{c}`' for c in steady)}"
    return text + "."


FINDINGS: tuple[Finding, ...] = (
    Finding("regime_shares", "book/claims/data_regimes", ("data_regimes",), _regime_shares),
    Finding("t1_fit", "book/claims/t1_auc_margin", ("t1_auc_margin",), _t1_fit),
    Finding("t1_dropped", "book/claims/t1_auc_margin", ("t1_auc_margin",), _t1_dropped),
    Finding("t2_regimes", "book/claims/t2_regime_decomposition", ("t2_regime_decomposition",),
            _t2_regimes),
    Finding("t2_bridge", "book/claims/t2_regime_decomposition", ("t2_regime_decomposition",),
            _t2_bridge),
    Finding("t3_drop", "book/claims/t3_brel_knockout", ("t3_brel_knockout",), _t3_drop),
    Finding("router_types", "book/claims/router_train", ("router_train",), _router_types),
    Finding("router_constant", "book/claims/router_train", ("router_train",), _router_constant),
    Finding("router_vs_union", "book/claims/router_train", ("router_train", "ablations"),
            _router_vs_union),
    Finding("musique_tie", "book/claims/zero_shot_transfer", ("zero_shot_transfer",),
            _musique_tie),
    Finding("musique_alpha", "book/claims/zero_shot_transfer", ("ablations",), _musique_alpha),
    Finding("robustness_overall", "book/claims/robustness", ("robustness",), _robustness_overall),
)  # fmt: skip
