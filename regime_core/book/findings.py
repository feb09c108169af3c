"""The findings each claim chapter opens with: sentences written here, numbers from the records.

Each :class:`Finding` is a short argument a person wrote, with wording that follows the values
(a gain or a loss, a tie, significant or not), and numbers read from the runs' records when the
book is built, never typed. The ``regime-findings`` directive renders a chapter's findings in the
order below; ``tests/test_book_findings.py`` recomputes every sentence from the quick profile's
records and finds it on its rendered page.

A finding reads records through :class:`Records` (a missing record or key is an error that names
it, so a strict build fails rather than printing a wrong sentence).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from regime_core.runner.records import format_number, get_number


class Records:
    """The records a finding reads, by run id, with short accessors for its numbers."""

    def __init__(self, records: Mapping[str, Mapping[str, Any]]) -> None:
        self._records = records

    def record(self, run: str) -> Mapping[str, Any]:
        if run not in self._records:
            raise KeyError(f"no record for run {run!r}; the finding needs it")
        return self._records[run]

    def get(self, run: str, key: str) -> Any:
        return get_number(self.record(run), key)

    def node(self, run: str, key: str) -> Mapping[str, Any]:
        node: Any = self.record(run)["numbers"]
        for part in key.split("."):
            if not isinstance(node, Mapping) or part not in node:
                raise KeyError(f"record {run!r} has no node {key!r} (at {part!r})")
            node = node[part]
        if not isinstance(node, Mapping):
            raise KeyError(f"record {run!r}: {key!r} is a number, not a node")
        return node

    def has(self, run: str, key: str) -> bool:
        try:
            self.get(run, key)
        except KeyError:
            return False
        return True


def pp(x: float) -> str:
    return format_number(x, "pp")


def pct(x: float) -> str:
    return format_number(x, "pct")


def count(x: float) -> str:
    return format_number(x, "int")


def interval(c: Mapping[str, Any], effect: str = "diff", what: str = "95% CI") -> str:
    """``+6.6 pp (95% CI +4.5 to +9.1 pp)``: a comparison's effect and interval (``what``
    names the interval: a Holm-adjusted one says so)."""
    lo, hi = format_number(c["ci_lo"], "pp"), format_number(c["ci_hi"], "pp")
    return f"{pp(c[effect])} ({what} {lo.removesuffix(' pp')} to {hi})"


HOLM = "Holm-adjusted CI"


def significant(c: Mapping[str, Any]) -> bool:
    """The interval excludes zero (the exact interval does exactly when p < 0.05)."""
    return float(c["ci_lo"]) > 0 or float(c["ci_hi"]) < 0


def direction(c: Mapping[str, Any], effect: str = "diff") -> str:
    """``a significant gain``, ``a significant loss`` or ``no significant change``."""
    if not significant(c):
        return "no significant change"
    return "a significant gain" if float(c[effect]) > 0 else "a significant loss"


def row_comparison(row: Mapping[str, Any], name: str) -> Mapping[str, Any] | None:
    """An ablation row's comparison ``name`` (``routed_vs_q``, ``routed_vs_union``, ...) from
    its ``comparisons`` node; None when the row holds none (a degenerate row may not)."""
    node = row.get("comparisons", {}).get(name) if isinstance(row, Mapping) else None
    return node


def alpha_label(key: str) -> str:
    """A record's α key as the number it stands for: ``0p50`` -> ``0.50``."""
    return key.replace("p", ".").replace("m", "-")


@dataclass(frozen=True)
class Finding:
    """One finding of a chapter: its id, the chapter (a docname), the runs it reads and the
    function that writes it from their records."""

    id: str
    chapter: str
    runs: tuple[str, ...]
    write: Callable[[Records], str]


# --- data ---------------------------------------------------------------------------------------


def _regime_shares(r: Records) -> str:
    parts = []
    for ds, name in (("hotpotqa", "HotpotQA"), ("2wikimultihopqa", "2WikiMultiHopQA"),
                     ("musique", "MuSiQue")):  # fmt: skip
        node = r.node("data_regimes", f"regimes.{ds}.all")
        parts.append(
            f"{name} {pct(node['B-dominant']['share'])} B-dominant, "
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
    if dropped == 0:
        return f"Every one of the {count(queries)} questions has at least one negative candidate."
    return (
        f"{count(dropped)} of the {count(queries)} questions have no negative candidate left once "
        "the bridge is excluded, so they have no AUC and no margin: they are counted here and "
        "left out of every fit."
    )


# --- T2 -----------------------------------------------------------------------------------------


def _t2_regimes(r: Records) -> str:
    out = []
    for enc, name in (("minilm", "MiniLM"), ("tfidf", "TF-IDF")):
        b = r.node("t2_regime_decomposition", f"cells.{enc}.all.P1-P2+.union_vs_q")
        q = r.node("t2_regime_decomposition", f"cells.{enc}.all.P1+P2-.union_vs_q")
        out.append(
            f"with {name}, adding B_rel to the question changes hit@5 by {interval(b, what=HOLM)} "
            f"where only the bridge names the hop-2 entity ({direction(b)}) and by "
            f"{interval(q, what=HOLM)} where only the question names it ({direction(q)})"
        )
    return "Pooled over the datasets, " + "; ".join(out) + "."


def _t2_bridge(r: Records) -> str:
    out = []
    for enc, name in (("minilm", "MiniLM"), ("tfidf", "TF-IDF")):
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
    for enc, name in (("minilm", "MiniLM"), ("tfidf", "TF-IDF")):
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
        out.append(f"{interval(c, 'drop', HOLM)} with {name}, {where}")
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


def _main_sweep(r: Records, dataset: str) -> Mapping[str, Any]:
    """The ablations' α sweep of ``dataset`` with the run's main encoder (the first of its
    ``encoders``): one row per α, each with its ``comparisons``."""
    encoder = r.record("ablations")["config"]["encoders"][0]
    return r.node("ablations", f"alpha_sweep.{encoder}.{dataset}")


def _router_vs_union(r: Records) -> str:
    main = r.node("router_train", "train.outcome.routed_vs_union")
    head = (
        f"Against always-union, the policy that needs no router, routing adds {interval(main)} at "
        f"the paper's α ({direction(main)})"
    )
    sweep = _main_sweep(r, "2wikimultihopqa")
    rows = {
        alpha_label(key): row_comparison(row, "routed_vs_union")
        for key, row in sweep.items()
        if not row.get("degenerate")
    }
    found = {a: c for a, c in rows.items() if c is not None}
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
    sweep = _main_sweep(r, "musique")
    rows = [
        (alpha_label(key), row_comparison(row, "routed_vs_q"))
        for key, row in sweep.items()
        if not row.get("degenerate")
    ]
    found = [(a, c) for a, c in rows if c is not None]
    if not found:
        return "The α sweep holds no MuSiQue setting."
    text = ", ".join(f"{interval(c)} at α = {a}" for a, c in found)
    gains = [a for a, c in found if significant(c) and c["diff"] > 0]
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
    text = (
        f"Across {count(readings)} readings of {count(len(judged))} claims, "
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


# --- the landing page ---------------------------------------------------------------------------


#: The runs the landing page's bottom line reads: every claim's (and its diagnosis's) and the
#: robustness run, from the claims file.
def _claim_runs() -> tuple[str, ...]:
    from regime_core.paper import load_claims

    return tuple(dict.fromkeys([r for c in load_claims() for r in c.runs()] + ["robustness"]))


def _judged(r: Records) -> dict[str, Any]:
    from regime_core.paper import load_claims
    from regime_core.runner.verdicts import judge_claims

    claims = load_claims()
    records = {run: r.record(run) for c in claims for run in c.runs()}
    robustness = r.record("robustness") if r.has("robustness", "claims") else None
    return {v.claim.id: v for v in judge_claims(records, claims, robustness)}


def _counted(verdicts: list[str]) -> str:
    """``["reproduced", "not reproduced", "not reproduced"]`` → "1 reproduces and 2 do not
    reproduce", in the judge's order of verdicts."""
    from regime_core.runner.judge import VERDICTS

    words = {  # verdict -> (one, several)
        "reproduced": ("reproduces", "reproduce"),
        "smaller than reported": (
            "comes out smaller than the paper reports", "come out smaller than the paper reports"
        ),
        "larger than reported": (
            "comes out larger than the paper reports", "come out larger than the paper reports"
        ),
        "direction only": ("holds in direction only", "hold in direction only"),
        "inconclusive (too few questions)": (
            "is inconclusive for lack of questions", "are inconclusive for lack of questions"
        ),
        "not reproduced": ("does not reproduce", "do not reproduce"),
        "not testable here": ("cannot be tested here", "cannot be tested here"),
    }  # fmt: skip
    counts = {verdict: verdicts.count(verdict) for verdict in VERDICTS}
    parts = [f"{count(n)} {words[v][n != 1]}" for v, n in counts.items() if n]
    return ", ".join(parts[:-1]) + (f" and {parts[-1]}" if len(parts) > 1 else parts[0])


def _bottom_counts(r: Records) -> str:
    judged = list(_judged(r).values())
    paper = [v.verdict for v in judged if not v.claim.ours_only]
    ours = [v.verdict for v in judged if v.claim.ours_only]
    noun = "statement" if len(paper) == 1 else "statements"
    text = f"Of the {count(len(paper))} {noun} of the abstract we judged, {_counted(paper)}."
    if ours:
        noun = "statement" if len(ours) == 1 else "statements"
        text += (
            f" By the same rules, of {count(len(ours))} {noun} of our own beyond the "
            f"paper, {_counted(ours)}."
        )
    return text


def _bottom_regimes(r: Records) -> str:
    judged = _judged(r)
    t2, t3 = judged["t2_split"], judged["t3_knockout"]
    b = r.node("t2_regime_decomposition", "cells.minilm.all.P1-P2+.union_vs_q")
    q = r.node("t2_regime_decomposition", "cells.minilm.all.P1+P2-.union_vs_q")
    head = "The two regimes are there" if t2.verdict == "reproduced" else "The regimes blur"
    relation = {
        "reproduced": "within", "smaller than reported": "less than",
        "larger than reported": "more than",
    }.get(t3.verdict, "against")  # fmt: skip
    low, high = t3.claim.paper["low"], t3.claim.paper["high"]
    return (
        f"{head}: with MiniLM, adding the bridge's relation sentence to the question changes "
        f"hit@5 by {pp(b['diff'])} where only the bridge names the hop-2 entity and by "
        f"{pp(q['diff'])} where the question names it (T2: {t2.judgement.label}); knocking that "
        f"sentence out of the bridge costs {pp(t3.values['estimate'])}, {relation} the paper's "
        f"{pp(low)} to {pp(high)} (T3: {t3.judgement.label})."
    )


def _bottom_router(r: Records) -> str:
    judged = _judged(r)
    parts = []
    for claim_id, name in (("router_2wiki", "2WikiMultiHopQA"), ("router_musique", "MuSiQue")):
        v = judged[claim_id]
        parts.append(
            f"{v.verdict} on {name} ({pp(v.values['estimate'])}; the paper "
            f"{pp(v.claim.paper['value'])})"
        )
    text = "The router's gain over always-q is " + " and ".join(parts)
    musique = judged["router_musique"]
    if musique.verdict != "reproduced" and musique.why is not None:
        found = musique.why.reproducing()
        factors = list(dict.fromkeys(a.label for a in found))
        if factors:
            text += f"; on MuSiQue the paper's number appears with {' or '.join(factors)}"
        else:
            text += "; no setting we swept brings MuSiQue's to the paper's"
    union = judged["router_vs_union_2wiki"]
    return (
        text + f". Against always-union, the policy that needs no router, its gain on "
        f"2WikiMultiHopQA is {union.verdict} ({pp(union.values['estimate'])})."
    )


# --- beyond the paper: a weight that transfers (issue 26) ---------------------------------------

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
    calibrated = [float(p["rules"]["calibrated"]["alpha"]) for by in pairs.values()
                  for p in by.values()]  # fmt: skip
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
    return (
        f"{head}. With c = {_num(fit['c'])}, the calibrated α runs from {_num(min(calibrated))} "
        f"to {_num(max(calibrated))}, while the best grid α runs from {_num(min(best))} to "
        f"{_num(max(best))}."
    )


def _significant_signs(comparisons: Sequence[Mapping[str, Any]]) -> tuple[int, int]:
    """How many of ``comparisons`` are significant gains, and how many significant losses."""
    gains = sum(1 for c in comparisons if significant(c) and c["diff"] > 0)
    losses = sum(1 for c in comparisons if significant(c) and c["diff"] < 0)
    return gains, losses


def _alpha_gain(r: Records) -> str:
    pairs = _transfer_pairs(r)
    rows = [f"{interval(p['calibrated_vs_fixed'])} on {_pair_name(e, d)}" for e, d, p in pairs]
    wins, losses = _significant_signs([p["calibrated_vs_fixed"] for _, _, p in pairs])
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
    pairs = _transfer_pairs(r)
    parts = [
        f"{interval(p['calibrated_vs_tuned_fixed'])} on {_pair_name(e, d)}" for e, d, p in pairs
    ]
    better, worse = _significant_signs([p["calibrated_vs_tuned_fixed"] for _, _, p in pairs])
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


# --- the registry -------------------------------------------------------------------------------

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
    Finding("alpha_geometry", "book/claims/alpha_transfer", ("alpha_transfer",),
            _alpha_geometry),
    Finding("alpha_gain", "book/claims/alpha_transfer", ("alpha_transfer",), _alpha_gain),
    Finding("alpha_control", "book/claims/alpha_transfer", ("alpha_transfer",), _alpha_control),
    Finding("alpha_router", "book/claims/alpha_transfer", ("alpha_transfer",), _alpha_router),
    Finding("bottom_counts", "book/intro", _claim_runs(), _bottom_counts),
    Finding("bottom_regimes", "book/intro", _claim_runs(), _bottom_regimes),
    Finding("bottom_router", "book/intro", _claim_runs(), _bottom_router),
)  # fmt: skip


def chapter_findings(chapter: str) -> list[Finding]:
    """The findings of ``chapter`` (a docname such as ``book/claims/t3_brel_knockout``)."""
    found = [f for f in FINDINGS if f.chapter == chapter]
    if not found:
        raise KeyError(f"no findings for chapter {chapter!r}; chapters with findings: "
                       f"{sorted({f.chapter for f in FINDINGS})}")  # fmt: skip
    return found


def write_findings(chapter: str, records: Mapping[str, Mapping[str, Any]]) -> list[tuple[str, str]]:
    """``(finding id, sentence)`` for each finding of ``chapter``, from ``records`` (run ->
    record); pure."""
    view = Records(records)
    return [(f.id, f.write(view)) for f in chapter_findings(chapter)]
