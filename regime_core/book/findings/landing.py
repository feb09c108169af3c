"""The landing page's bottom line: the verdicts of every claim of the book's claims file (the
book judges each once per build), counted and put into words."""

from __future__ import annotations

from typing import TYPE_CHECKING

from regime_core.book.findings.words import Finding, Records, count, pp

if TYPE_CHECKING:
    from regime_core.runner.verdicts import ClaimVerdict


def _estimate(v: ClaimVerdict) -> float:
    """Our estimate of a paired comparison's claim (``ValueError`` naming any other claim)."""
    from regime_core.runner.ours import Comparison

    if not isinstance(v.values, Comparison):
        raise ValueError(f"claim {v.claim.id!r} is not one paired comparison: it has no estimate")
    return v.values.estimate


def _counted(verdicts: list[str]) -> str:
    """``["reproduced", "not reproduced", "not reproduced"]`` → "1 reproduces and 2 do not
    reproduce", in the judge's order of verdicts."""
    from regime_core.runner.judge import OURS_WORDS, VERDICTS

    one = {  # verdict -> the sentence's verb phrase for one claim
        "reproduced": "reproduces",
        "smaller than reported": "comes out smaller than the paper reports",
        "larger than reported": "comes out larger than the paper reports",
        "direction only": "holds in direction only",
        "inconclusive (too few questions)": "is inconclusive for lack of questions",
        "not reproduced": "does not reproduce",
        "not testable here": "cannot be tested here",
        # a statement of ours reads in its own words (judge.OURS_WORDS)
        "holds": "holds",
        "holds in part": "holds in part",
        "inconclusive": "is inconclusive",
        "does not hold": "does not hold",
    }

    def several(phrase: str) -> str:  # the phrase for several: its verb in the plural
        verb, _, rest = phrase.partition(" ")
        verb = {"is": "are", "does": "do"}.get(verb, verb.removesuffix("s"))
        return f"{verb} {rest}".rstrip()

    order = (*VERDICTS, *OURS_WORDS.values())
    counts = {verdict: verdicts.count(verdict) for verdict in order}
    parts = [f"{count(n)} {one[v] if n == 1 else several(one[v])}" for v, n in counts.items() if n]
    return ", ".join(parts[:-1]) + (f" and {parts[-1]}" if len(parts) > 1 else parts[0])


def _bottom_counts(r: Records) -> str:
    judged = list(r.verdicts().values())
    paper = [v.verdict for v in judged if not v.claim.ours_only]
    ours = [v.judgement.words for v in judged if v.claim.ours_only]
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
    judged = r.verdicts()
    t2, t3 = judged["t2_split"], judged["t3_knockout"]
    b = r.node("t2_regime_decomposition", "cells.minilm.all.P1-P2+.union_vs_q")
    q = r.node("t2_regime_decomposition", "cells.minilm.all.P1+P2-.union_vs_q")
    head = "The two regimes are there" if t2.verdict == "reproduced" else "The regimes blur"
    relation = {
        "reproduced": "within",
        "smaller than reported": "less than",
        "larger than reported": "more than",
    }.get(t3.verdict, "against")
    low, high = t3.claim.paper["low"], t3.claim.paper["high"]
    return (
        f"{head}: with MiniLM, adding the bridge's relation sentence to the question changes "
        f"hit@5 by {pp(b['diff'])} where only the bridge names the hop-2 entity and by "
        f"{pp(q['diff'])} where the question names it (T2: {t2.judgement.label}); knocking that "
        f"sentence out of the bridge costs {pp(_estimate(t3))}, {relation} the paper's "
        f"{pp(low)} to {pp(high)} (T3: {t3.judgement.label})."
    )


def _bottom_router(r: Records) -> str:
    judged = r.verdicts()
    parts = []
    for claim_id, name in (("router_2wiki", "2WikiMultiHopQA"), ("router_musique", "MuSiQue")):
        v = judged[claim_id]
        parts.append(
            f"{v.verdict} on {name} ({pp(_estimate(v))}; the paper {pp(v.claim.paper['value'])})"
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
        f"2WikiMultiHopQA is {union.verdict} ({pp(_estimate(union))})."
    )


FINDINGS: tuple[Finding, ...] = (
    Finding("bottom_counts", "book/intro", (), _bottom_counts, judged=True),
    Finding(
        "bottom_regimes", "book/intro", ("t2_regime_decomposition",), _bottom_regimes, judged=True
    ),
    Finding("bottom_router", "book/intro", (), _bottom_router, judged=True),
)
