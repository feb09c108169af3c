"""The landing page's bottom line: the verdicts of every claim of the book's claims file (the
book judges each once per build), counted and put into words, five sentences at most.

The abstract's statements and the questions of ours are counted apart: a claim is the
abstract's when its ``source`` in ``paper_claims.yml`` is :data:`ABSTRACT_SOURCE` and it is not a
statement of ours (``origin: ours``); every other row (a test the abstract implies, a level it
does not give, a statement of ours) is a question we asked, judged by the same rules."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from regime_core.book.words import Finding, Records, count, pp

if TYPE_CHECKING:
    from regime_core.paper import Claim
    from regime_core.runner.verdicts import ClaimVerdict

#: The ``source`` of a claim the abstract states in so many words (``paper_claims.yml``).
ABSTRACT_SOURCE = "abstract"

#: A verdict as the verb phrase of one claim in the bottom line's count.
_ONE: dict[str, str] = {
    "reproduced": "reproduces",
    "smaller than reported": "comes out smaller than the paper reports",
    "larger than reported": "comes out larger than the paper reports",
    "direction only": "holds in direction only",
    "inconclusive (too few questions)": "is inconclusive for lack of questions",
    "not reproduced": "does not reproduce",
    "not testable here": "cannot be tested here",
    # a question of ours reads in its own words (judge.OURS_WORDS)
    "holds": "holds",
    "holds in part": "holds in part",
    "inconclusive": "is inconclusive",
    "does not hold": "does not hold",
}

#: A verdict as an adjective after a number ("+1.0 pp, inconclusive for lack of questions").
_ADJECTIVE: dict[str, str] = {
    "direction only": "right in direction only",
    "inconclusive (too few questions)": "inconclusive for lack of questions",
}


def from_the_abstract(claim: Claim) -> bool:
    """The claim is a statement of the paper's abstract, not a question of ours."""
    return claim.source == ABSTRACT_SOURCE and not claim.ours_only


def _estimate(v: ClaimVerdict) -> float:
    """Our estimate of a paired comparison's claim (``ValueError`` naming any other claim)."""
    from regime_core.runner.ours import Comparison

    if not isinstance(v.values, Comparison):
        raise ValueError(f"claim {v.claim.id!r} is not one paired comparison: it has no estimate")
    return v.values.estimate


def _points(x: float) -> str:
    """A size in percentage points, without a sign: ``0.078`` → ``7.8 pp``."""
    return pp(abs(x)).lstrip("+−-")


def _counted(verdicts: list[str]) -> str:
    """``["reproduced", "not reproduced", "not reproduced"]`` → "1 reproduces and 2 do not
    reproduce", in the judge's order of verdicts (a question of ours in its own words first)."""
    from regime_core.runner.judge import OURS_WORDS, VERDICTS

    def several(phrase: str) -> str:  # the phrase for several: its verb in the plural
        verb, _, rest = phrase.partition(" ")
        verb = {"is": "are", "does": "do", "comes": "come", "cannot": "cannot"}.get(
            verb, verb.removesuffix("s")
        )
        return f"{verb} {rest}".rstrip()

    order = dict.fromkeys((*OURS_WORDS.values(), *VERDICTS))
    counts = {verdict: verdicts.count(verdict) for verdict in order}
    parts = [
        f"{count(n)} {_ONE[v] if n == 1 else several(_ONE[v])}" for v, n in counts.items() if n
    ]
    return ", ".join(parts[:-1]) + (f" and {parts[-1]}" if len(parts) > 1 else parts[0])


def _bottom_counts(r: Records) -> str:
    paper = [v.verdict for v in r.verdicts().values() if from_the_abstract(v.claim)]
    if not paper:
        return "The claims file holds no statement of the abstract."
    if len(paper) == 1:
        return f"We judged the one statement of the paper's abstract: it {_ONE[paper[0]]}."
    return (
        f"We judged the {count(len(paper))} statements of the paper's abstract: {_counted(paper)}."
    )


def _bottom_ours(r: Records) -> str:
    from regime_core.runner.judge import OURS_WORDS

    ours = [
        OURS_WORDS.get(v.verdict, v.verdict)
        for v in r.verdicts().values()
        if not from_the_abstract(v.claim)
    ]
    if not ours:
        return "Every row of the chart is a statement of the abstract."
    if len(ours) == 1:
        return (
            "One more row is a question of ours, not the abstract's, judged by the same rules: "
            f"it {_ONE[ours[0]]}."
        )
    return (
        f"The other {count(len(ours))} rows of the chart are questions of ours, not the "
        f"abstract's, judged by the same rules: {_counted(ours)}."
    )


def _judged(r: Records, **fields: Any) -> ClaimVerdict:
    """The verdict of the one claim with ``fields`` (:func:`regime_core.paper.claim_where`)."""
    from regime_core.paper import claim_where

    judged = r.verdicts()
    return judged[claim_where([v.claim for v in judged.values()], **fields).id]


def _dataset(v: ClaimVerdict) -> str:
    """The dataset filling the first role of a claim's data, as the book names it."""
    from regime_core.book.names import dataset

    return dataset((v.roles or {})[v.claim.data[0]])


def _verdict_words(v: ClaimVerdict) -> str:
    """A verdict with its flags, as a parenthesis reads it: "smaller than reported, consistent
    with the paper's range"."""
    words = _ADJECTIVE.get(v.judgement.plain_words, v.judgement.words)
    return ", ".join((words, *v.judgement.flags))


def _bottom_regimes(r: Records) -> str:
    t2, t3 = _judged(r, run="t2_regime_decomposition"), _judged(r, run="t3_brel_knockout")
    b = r.node("t2_regime_decomposition", "cells.minilm.all.P1-P2+.union_vs_q")
    q = r.node("t2_regime_decomposition", "cells.minilm.all.P1+P2-.union_vs_q")
    head = "The two regimes are there" if t2.verdict == "reproduced" else "The regimes blur"
    relation = {
        "reproduced": "within",
        "smaller than reported": "less than",
        "larger than reported": "more than",
    }.get(t3.verdict, "against")
    drop = _estimate(t3)
    low, high = t3.claim.paper["low"], t3.claim.paper["high"]
    effect = f"costs {_points(drop)}" if drop >= 0 else f"gains {_points(drop)}"
    return (
        f"{head}: with MiniLM, adding the bridge's relation sentence to the question changes "
        f"hit@5 by {pp(b['diff'])} where only the bridge names the hop-2 entity and by "
        f"{pp(q['diff'])} where the question names it (T2: {_verdict_words(t2)}); knocking that "
        f"sentence out of the bridge {effect}, {relation} the paper's "
        f"{_points(low).removesuffix(' pp')} to {_points(high)} (T3: {_verdict_words(t3)})."
    )


def _bottom_router(r: Records) -> str:
    trained, transfer = (
        _judged(r, comparison="routed_vs_q", data=[role]) for role in ("training", "transfer_1")
    )
    parts = [
        f"{pp(_estimate(v))} on {_dataset(v)} against the paper's {pp(v.claim.paper['value'])} "
        f"({_verdict_words(v)})"
        for v in (trained, transfer)
    ]
    text = "Over always-q, the router gains " + " and ".join(parts)
    if transfer.verdict != "reproduced" and transfer.why is not None:
        factors = list(dict.fromkeys(a.label for a in transfer.why.reproducing()))
        if factors:
            text += f"; {_dataset(transfer)} reaches the paper's gain with {' or '.join(factors)}"
        else:
            text += f"; no setting we swept brings {_dataset(transfer)}'s gain to the paper's"
    return text + "."


def _bottom_union(r: Records) -> str:
    from regime_core.runner.judge import OURS_WORDS

    union = _judged(r, comparison="routed_vs_union", data=["training"])
    holds = OURS_WORDS.get(union.verdict, union.verdict)
    answer = {
        "holds": "it does",
        "holds in part": "it does only in part",
        "does not hold": "it does not",
        "inconclusive": "our questions are too few to tell",
    }.get(holds, f"that {holds}")
    return (
        "A router is worth its name only if it also beats always-union, the fixed policy that "
        f"needs no router: on {_dataset(union)} it gains {pp(_estimate(union))} over it, so "
        f"{answer}."
    )


def _bottom_verdicts(r: Records) -> str:
    """The abstract's statements and our questions, counted apart, in one sentence (two where
    either side holds fewer than two)."""
    from regime_core.runner.judge import OURS_WORDS

    judged = r.verdicts().values()
    paper = [v.verdict for v in judged if from_the_abstract(v.claim)]
    ours = [OURS_WORDS.get(v.verdict, v.verdict) for v in judged if not from_the_abstract(v.claim)]
    if len(paper) < 2 or len(ours) < 2:
        return f"{_bottom_counts(r)} {_bottom_ours(r)}"
    return (
        f"We judged the {count(len(paper))} statements of the paper's abstract "
        f"({_counted(paper)}) and, by the same rules, {count(len(ours))} questions of our own "
        f"({_counted(ours)})."
    )


FINDINGS: tuple[Finding, ...] = (
    Finding("bottom_verdicts", "book/intro", (), _bottom_verdicts, judged=True),
    Finding(
        "bottom_regimes", "book/intro", ("t2_regime_decomposition",), _bottom_regimes, judged=True
    ),
    Finding("bottom_router", "book/intro", (), _bottom_router, judged=True),
    Finding("bottom_union", "book/intro", (), _bottom_union, judged=True),
)
