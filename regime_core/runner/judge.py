"""Judging a claim of the paper on our records: the verdict rules and their pure kernels.

A claim (:class:`regime_core.paper.Claim`, from ``paper_claims.yml``) states the paper's side;
:func:`claim_values` reads ours from a results record (:mod:`regime_core.runner.records`), and
:func:`judge_values` puts the two side by side and gives a verdict by the rule of the claim's kind
(:data:`VERDICT_RULES`), with the power of our comparison where the record has what it needs
(:func:`power_of`). The book's "The paper's numbers and ours" page renders the table with the
``regime-paper-claims`` directive (``regime_core.book.sphinx``); ``regime verdicts`` prints it
(:mod:`regime_core.runner.verdicts`).

Every rule reads our *interval* only. For paired binary outcomes the interval is the exact
McNemar one (:func:`regime_core.stats.mcnemar_interval`), which excludes zero exactly when the
exact McNemar p is below :data:`SIGNIFICANCE_LEVEL`; a Holm-adjusted comparison carries its
Holm-adjusted interval. So no verdict can contradict the p-value printed beside it.

>>> judge_estimate(0.056, estimate=0.05, ci_lo=0.02, ci_hi=0.08).verdict
'reproduced'
>>> judge_estimate(0.056, estimate=0.02, ci_lo=0.005, ci_hi=0.04).verdict
'smaller than reported'
>>> judge_estimate(0.056, estimate=0.02, ci_lo=-0.01, ci_hi=0.06).verdict
'inconclusive (too few questions)'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from regime_core import config
from regime_core.paper import Claim
from regime_core.runner.records import format_number, get_number

REPRODUCED = "reproduced"
SMALLER, LARGER = "smaller than reported", "larger than reported"
DIRECTION_ONLY = "direction only"
INCONCLUSIVE = "inconclusive (too few questions)"
NOT_REPRODUCED = "not reproduced"
NOT_TESTABLE = "not testable here"
VERDICTS: tuple[str, ...] = (
    REPRODUCED, SMALLER, LARGER, DIRECTION_ONLY, INCONCLUSIVE, NOT_REPRODUCED, NOT_TESTABLE,
)  # fmt: skip
#: A flag beside a verdict.
#: Our interval overlaps the paper's range although our estimate lies outside it (the verdict
#: says which side; the flag says the data cannot exclude the range).
CONSISTENT_WITH = "consistent with the paper's range"
#: a test result counts as significant when its p-value is below this (1 − config.CONFIDENCE)
SIGNIFICANCE_LEVEL: float = round(1.0 - config.CONFIDENCE, 10)
"""a p-value below it is significant, for the paper and for us alike; one minus CONFIDENCE"""
#: The smallest difference of hit@5 we treat as a real effect, 1 point of R@5.
#: The margin of the "no loss" (non-inferiority) and "invariant" (equivalence) rules, and the
#: effect an implied "> 0" claim must be able to reach. Ours, chosen after the issue that asked
#: for these rules had shown our numbers (the book says so).
SMALLEST_EFFECT: float = 0.01
"""the smallest difference of hit@5 treated as a real effect (one percentage point): the
margin of the no-loss and invariance rules, and the gain an implied "> 0" claim must be able to
reach
"""
#: Power the power column asks for (:data:`regime_core.power.TARGET_POWER`).
POWER_METHOD = (
    "exact power of the two-sided exact McNemar test at the claim's level for our number of "
    "questions and our observed share of discordant questions (stats.mcnemar_power); the "
    "detectable effect is the smallest difference reaching 80% power"
)

#: The verdict rule of each claim kind (``rule`` in ``paper_claims.yml``). Every rule reads our
#: interval at the claim's level (1 − :data:`SIGNIFICANCE_LEVEL`).
VERDICT_RULES: dict[str, str] = {
    "estimate": "A point value the paper reports as an effect. Reproduced: our interval holds the "
    "paper's value and excludes zero. Inconclusive (too few questions): it holds both the paper's "
    "value and zero, so our data cannot tell them apart. Smaller (larger) than reported: it lies "
    "wholly between zero and the paper's value (beyond it). Not reproduced: otherwise (it holds "
    "zero but not the paper's value, or lies on the other side of zero).",
    "range": "A range the paper reports. Reproduced: our estimate lies in the range and our "
    "interval excludes zero. Smaller (larger) than reported: our estimate lies below (above) the "
    "range and our interval excludes zero on its side; when the interval still overlaps the range "
    "the verdict carries the flag 'consistent with the paper's range'. Inconclusive: our "
    "interval holds zero and overlaps the range. Not reproduced: otherwise.",
    "positive": "A difference the paper's method implies is positive, without a number (the "
    "router beats always-union). Reproduced: our interval lies above zero. Not reproduced: it "
    "lies at or below zero, or wholly below the smallest effect of interest (at most a negligible "
    "gain). Inconclusive: otherwise.",
    "no_loss": "A statement that one policy loses nothing against another (the paper: 'no "
    "regret'), judged as non-inferiority with the margin SMALLEST_EFFECT. Reproduced: our "
    "interval's lower end lies above minus the margin. Not reproduced: its upper end lies below "
    "minus the margin (a real loss). Inconclusive: otherwise.",
    "equivalence": "A statement that a number does not change (an invariance), judged as "
    "equivalence with the margin SMALLEST_EFFECT. Reproduced: our interval lies wholly within "
    "plus or minus the margin. Not reproduced: it lies wholly outside. Inconclusive: otherwise.",
    "level": "Absolute levels the paper reports (hit@5 of a policy). Reproduced: every paper "
    "value lies in our exact (Clopper–Pearson) interval of that level. Smaller (larger) than "
    "reported: every level outside our interval lies above (below) it. Not reproduced: otherwise.",
    "bound": "A bound the paper states (routing takes under 1 ms). Reproduced: our measurement "
    "lies under it. Not reproduced: otherwise. Timings describe the machine; no interval.",
    "share": "'Threshold met in k of n cells'. Reproduced: our share of cells meeting the "
    "threshold is at least k/n. Direction only: fewer cells meet it, but the weaker "
    "direction-only criterion (a significantly positive rank correlation) holds in at least k/n "
    "of our cells. Not reproduced: otherwise.",
    "holds": "A yes/no statement our run decides (the split holds for every encoder). "
    "Reproduced: it holds. Direction only: it does not hold as a whole but holds in at least one "
    "of its parts (one encoder). Not reproduced: otherwise.",
    "untestable": "A statement our data cannot test (a human annotation, a count of the paper's "
    "own setup). Not testable here, always; the reason says why and what it would take, with our "
    "own numbers beside it.",
}
"""how a kind of claim turns the paper's value and ours into a verdict"""
#: How bad a part's verdict is, for claims judged part by part (the worst part decides).
_BADNESS: dict[str, int] = {
    REPRODUCED: 0, DIRECTION_ONLY: 1, INCONCLUSIVE: 2, SMALLER: 3, LARGER: 3, NOT_REPRODUCED: 4,
    NOT_TESTABLE: 5,
}  # fmt: skip
#: The kinds judged on a paired comparison of our records (estimate, interval, n).
COMPARISON_RULES: tuple[str, ...] = ("estimate", "range", "positive", "no_loss", "equivalence")


# --- verdicts (pure) -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Judgement:
    """A verdict (one of :data:`VERDICTS`), the reason in one plain sentence, flags beside the
    verdict (:data:`CONSISTENT_WITH`), the power of our comparison (:func:`power_of`) and, for a
    claim judged part by part, each part's judgement."""

    verdict: str
    reason: str
    flags: tuple[str, ...] = ()
    power: Mapping[str, Any] | None = None
    parts: Mapping[str, Judgement] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """The verdict with its flags, e.g. ``smaller than reported (consistent with ...)``."""
        return self.verdict + "".join(f" ({flag})" for flag in self.flags)


def _pp(x: float) -> str:
    return format_number(x, "pp")


def _interval_text(lo: float, hi: float) -> str:
    return f"{_pp(lo)} to {_pp(hi)}"


def _check_interval(where: str, lo: float, hi: float) -> None:
    if not lo <= hi:
        raise ValueError(f"{where}: ci_lo {lo} > ci_hi {hi}")


def judge_estimate(paper_value: float, *, estimate: float, ci_lo: float, ci_hi: float) -> Judgement:
    """The ``estimate`` rule of :data:`VERDICT_RULES` (``paper_value`` non-zero).

    >>> judge_estimate(0.046, estimate=0.002, ci_lo=-0.006, ci_hi=0.011).verdict
    'not reproduced'
    >>> judge_estimate(0.056, estimate=0.09, ci_lo=0.07, ci_hi=0.11).verdict
    'larger than reported'
    """
    _check_interval("judge_estimate", ci_lo, ci_hi)
    if paper_value == 0:
        raise ValueError("judge_estimate: a paper value of 0 is no effect; use the no_loss rule")
    ours = f"our interval ({_interval_text(ci_lo, ci_hi)})"
    holds_value = ci_lo <= paper_value <= ci_hi
    holds_zero = ci_lo <= 0.0 <= ci_hi
    paper = _pp(paper_value)
    if holds_value and holds_zero:
        return Judgement(INCONCLUSIVE, f"{ours} holds both the paper's {paper} and zero")
    if holds_value:
        return Judgement(REPRODUCED, f"{ours} holds the paper's {paper} and excludes zero")
    side = 1 if paper_value > 0 else -1
    if (side > 0 and ci_lo > 0) or (side < 0 and ci_hi < 0):
        if (side > 0 and ci_hi < paper_value) or (side < 0 and ci_lo > paper_value):
            return Judgement(SMALLER, f"{ours} lies between zero and the paper's {paper}")
        return Judgement(LARGER, f"{ours} lies beyond the paper's {paper}")
    if holds_zero:
        return Judgement(NOT_REPRODUCED, f"{ours} holds zero but not the paper's {paper}")
    return Judgement(
        NOT_REPRODUCED, f"{ours} lies on the other side of zero from the paper's {paper}"
    )


def judge_range(
    low: float, high: float, *, estimate: float, ci_lo: float, ci_hi: float
) -> Judgement:
    """The ``range`` rule of :data:`VERDICT_RULES` (``low <= high``, both of one sign).

    >>> judge_range(0.086, 0.141, estimate=0.10, ci_lo=0.05, ci_hi=0.15).verdict
    'reproduced'
    >>> judge_range(0.086, 0.141, estimate=0.078, ci_lo=0.05, ci_hi=0.11).label
    "smaller than reported (consistent with the paper's range)"
    """
    if not low <= high:
        raise ValueError(f"judge_range: low {low} > high {high}")
    if low * high < 0 or (low == 0 and high == 0):
        raise ValueError(f"judge_range: the range [{low}, {high}] has no single sign")
    _check_interval("judge_range", ci_lo, ci_hi)
    ours = f"our estimate {_pp(estimate)} (interval {_interval_text(ci_lo, ci_hi)})"
    paper = f"the paper's {_interval_text(low, high)}"
    side = 1 if (low > 0 or high > 0) else -1
    excludes_zero = ci_lo > 0 if side > 0 else ci_hi < 0
    overlaps = ci_lo <= high and ci_hi >= low
    if low <= estimate <= high:
        if excludes_zero:
            return Judgement(REPRODUCED, f"{ours} lies in {paper}")
        return Judgement(INCONCLUSIVE, f"{ours} lies in {paper}, but the interval holds zero")
    if excludes_zero:
        below = abs(estimate) < min(abs(low), abs(high))
        verdict = SMALLER if below else LARGER
        flags = (CONSISTENT_WITH,) if overlaps else ()
        where = "below" if below else "above"
        extra = "; the interval still overlaps it" if overlaps else ""
        return Judgement(verdict, f"{ours} lies {where} {paper}{extra}", flags)
    if overlaps and ci_lo <= 0.0 <= ci_hi:
        return Judgement(INCONCLUSIVE, f"{ours} holds both zero and part of {paper}")
    return Judgement(NOT_REPRODUCED, f"{ours} excludes {paper} and does not exclude zero")


def judge_positive(*, estimate: float, ci_lo: float, ci_hi: float) -> Judgement:
    """The ``positive`` rule of :data:`VERDICT_RULES`.

    >>> judge_positive(estimate=0.01, ci_lo=0.002, ci_hi=0.02).verdict
    'reproduced'
    >>> judge_positive(estimate=0.01, ci_lo=-0.001, ci_hi=0.021).verdict
    'inconclusive (too few questions)'
    """
    _check_interval("judge_positive", ci_lo, ci_hi)
    ours = f"our interval ({_interval_text(ci_lo, ci_hi)})"
    if ci_lo > 0:
        return Judgement(REPRODUCED, f"{ours} lies above zero")
    if ci_hi <= 0:
        return Judgement(NOT_REPRODUCED, f"{ours} lies at or below zero")
    if ci_hi < SMALLEST_EFFECT:
        return Judgement(
            NOT_REPRODUCED,
            f"{ours} lies below {_pp(SMALLEST_EFFECT)}: at most a negligible gain",
        )
    return Judgement(INCONCLUSIVE, f"{ours} holds both zero and gains above {_pp(SMALLEST_EFFECT)}")


def judge_no_loss(*, estimate: float, ci_lo: float, ci_hi: float) -> Judgement:
    """The ``no_loss`` rule of :data:`VERDICT_RULES` (non-inferiority, margin
    :data:`SMALLEST_EFFECT`).

    >>> judge_no_loss(estimate=0.027, ci_lo=0.008, ci_hi=0.047).verdict
    'reproduced'
    >>> judge_no_loss(estimate=-0.02, ci_lo=-0.04, ci_hi=0.001).verdict
    'inconclusive (too few questions)'
    """
    _check_interval("judge_no_loss", ci_lo, ci_hi)
    ours = f"our interval ({_interval_text(ci_lo, ci_hi)})"
    margin = _pp(-SMALLEST_EFFECT)
    if ci_lo > -SMALLEST_EFFECT:
        return Judgement(REPRODUCED, f"{ours} lies above {margin}: no loss of a point or more")
    if ci_hi < -SMALLEST_EFFECT:
        return Judgement(NOT_REPRODUCED, f"{ours} lies below {margin}: a real loss")
    return Judgement(INCONCLUSIVE, f"{ours} reaches below {margin}: a loss cannot be excluded")


def judge_equivalence(*, estimate: float, ci_lo: float, ci_hi: float) -> Judgement:
    """The ``equivalence`` rule of :data:`VERDICT_RULES` (margin :data:`SMALLEST_EFFECT`).

    >>> judge_equivalence(estimate=0.002, ci_lo=-0.006, ci_hi=0.009).verdict
    'reproduced'
    """
    _check_interval("judge_equivalence", ci_lo, ci_hi)
    ours = f"our interval ({_interval_text(ci_lo, ci_hi)})"
    band = f"±{100 * SMALLEST_EFFECT:.1f} pp"
    if ci_lo > -SMALLEST_EFFECT and ci_hi < SMALLEST_EFFECT:
        return Judgement(REPRODUCED, f"{ours} lies within {band}")
    if ci_hi <= -SMALLEST_EFFECT or ci_lo >= SMALLEST_EFFECT:
        return Judgement(NOT_REPRODUCED, f"{ours} lies outside {band}: the number changes")
    return Judgement(INCONCLUSIVE, f"{ours} reaches outside {band}")


def judge_level(paper_value: float, *, estimate: float, ci_lo: float, ci_hi: float) -> Judgement:
    """One level of the ``level`` rule: the paper's level inside our interval, or which side.

    >>> judge_level(0.842, estimate=0.70, ci_lo=0.66, ci_hi=0.74).verdict
    'smaller than reported'
    """
    _check_interval("judge_level", ci_lo, ci_hi)
    ours = f"our {format_number(estimate, 'pct')} ({format_number(ci_lo, 'pct')} to "
    ours += f"{format_number(ci_hi, 'pct')})"
    paper = format_number(paper_value, "pct")
    if ci_lo <= paper_value <= ci_hi:
        return Judgement(REPRODUCED, f"{ours} holds the paper's {paper}")
    if ci_hi < paper_value:
        return Judgement(SMALLER, f"{ours} lies below the paper's {paper}")
    return Judgement(LARGER, f"{ours} lies above the paper's {paper}")


def judge_bound(bound: float, *, estimate: float, unit: str = "s") -> Judgement:
    """The ``bound`` rule of :data:`VERDICT_RULES`: our measurement under the paper's bound.

    >>> judge_bound(0.001, estimate=0.00012).verdict
    'reproduced'
    """
    ours, paper = _duration(estimate, unit), _duration(bound, unit)
    if estimate < bound:
        return Judgement(REPRODUCED, f"ours, {ours}, lies under the paper's {paper}")
    return Judgement(NOT_REPRODUCED, f"ours, {ours}, is not under the paper's {paper}")


def _duration(seconds: float, unit: str) -> str:
    if unit != "s":
        return f"{seconds:g} {unit}"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} µs"
    return f"{seconds * 1e3:.2f} ms"


def judge_share(
    paper_passing: int,
    paper_total: int,
    *,
    passing: int,
    total: int,
    direction_passing: int | None = None,
) -> Judgement:
    """The ``share`` rule of :data:`VERDICT_RULES`.

    >>> judge_share(6, 8, passing=9, total=12).verdict
    'reproduced'
    >>> judge_share(6, 8, passing=2, total=12, direction_passing=11).verdict
    'direction only'
    """
    if paper_total <= 0 or not 0 <= paper_passing <= paper_total:
        raise ValueError(f"judge_share: paper {paper_passing}/{paper_total} is not a share")
    if total <= 0:
        return Judgement(NOT_REPRODUCED, "no cell of ours could be evaluated")
    target = paper_passing / paper_total
    reason = (
        f"{passing} of our {total} cells meet the threshold; the paper's {paper_passing} of "
        f"{paper_total} is a share of {format_number(target, 'pct')}"
    )
    if passing / total >= target:
        return Judgement(REPRODUCED, reason)
    if direction_passing is not None and direction_passing / total >= target:
        return Judgement(
            DIRECTION_ONLY, reason + f"; the weaker criterion holds in {direction_passing}"
        )
    return Judgement(NOT_REPRODUCED, reason)


def judge_holds(holds: bool, parts: Mapping[str, bool] | None = None) -> Judgement:
    """The ``holds`` rule of :data:`VERDICT_RULES`; ``parts`` maps a label to its own verdict.

    >>> judge_holds(False, {"MiniLM": True, "TF-IDF": False}).reason
    'it does not hold as a whole; it holds for MiniLM, not for TF-IDF'
    """
    parts = dict(parts or {})
    yes = [k for k, v in parts.items() if v]
    no = [k for k, v in parts.items() if not v]
    detail = "; ".join(
        text
        for text in (
            f"it holds for {', '.join(yes)}" if yes else "",
            f"not for {', '.join(no)}" if no else "",
        )
        if text
    )
    head = "it holds" if holds else "it does not hold as a whole"
    reason = head + (f"; {detail}" if detail else "")
    reason = reason.replace("; not for", ", not for") if yes and no else reason
    if holds:
        return Judgement(REPRODUCED, reason)
    if yes:
        return Judgement(DIRECTION_ONLY, reason)
    return Judgement(NOT_REPRODUCED, reason)


def judge_untestable(why: str, context: Mapping[str, Any]) -> Judgement:
    """The ``untestable`` rule of :data:`VERDICT_RULES`: ``why`` with our ``context`` numbers.

    >>> judge_untestable("ours is {n} of {m}", {"n": 212, "m": 1657}).reason
    'ours is 212 of 1,657'
    """
    return Judgement(NOT_TESTABLE, why.format(**{k: format_number(v) for k, v in context.items()}))


# --- power ---------------------------------------------------------------------------------------


def reference_effect(claim: Claim) -> float:
    """The effect a claim's power is judged against: the paper's value (an estimate), the low
    end of its range, or :data:`SMALLEST_EFFECT` (implied, no-loss and invariance claims)."""
    paper = claim.paper
    if claim.rule == "estimate":
        return abs(float(paper["value"]))
    if claim.rule == "range":
        return min(abs(float(paper["low"])), abs(float(paper["high"])))
    return SMALLEST_EFFECT


def power_of(effect: float, *, n: int | None, n_discordant: int | None) -> dict[str, Any] | None:
    """The power of one paired comparison: the smallest effect our ``n`` questions detect with
    80% power at :data:`SIGNIFICANCE_LEVEL` (``detectable_effect``), and the number of
    questions that would detect ``effect`` (``questions_needed``), both at our observed share
    of discordant questions (:data:`POWER_METHOD`); ``None`` without ``n`` and ``n_discordant``.

    >>> p = power_of(0.056, n=657, n_discordant=62)
    >>> round(p["detectable_effect"], 3), p["questions_needed"], p["discordance"] > 0
    (0.035, 251, True)
    """
    from regime_core.power import detectable_effect, questions_needed

    if n is None or n_discordant is None:
        return None
    if n <= 0 or not 0 <= n_discordant <= n:
        raise ValueError(f"power_of: {n_discordant} discordant of {n} questions is not a share")
    discordance = n_discordant / n
    return {
        "n": int(n),
        "discordance": discordance,
        "reference_effect": float(effect),
        "detectable_effect": detectable_effect(n, discordance, alpha=SIGNIFICANCE_LEVEL),
        "questions_needed": questions_needed(effect, discordance, alpha=SIGNIFICANCE_LEVEL),
        "method": POWER_METHOD,
    }


def power_text(power: Mapping[str, Any] | None) -> str:
    """The power in words, e.g. ``detects +3.6 pp with 80% power; +5.6 pp needs 281 questions``.

    >>> power_text({"n": 100, "discordance": 0.0, "reference_effect": 0.05,
    ...             "detectable_effect": None, "questions_needed": None})
    'no question differs between the two policies: no effect is detectable'
    """
    if power is None:
        return ""
    if power["discordance"] == 0:
        return "no question differs between the two policies: no effect is detectable"
    differ = format_number(power["discordance"], "pct")
    mde = power["detectable_effect"]
    head = (
        f"detects {_pp(mde)} with 80% power"
        if mde is not None
        else f"detects no effect with 80% power (only {differ} of the questions differ)"
    )
    needed = power["questions_needed"]
    ref = _pp(power["reference_effect"])
    if needed is None:
        tail = f"{ref} is more than the {differ} of questions that differ could show"
    else:
        tail = f"{ref} would need {format_number(needed, 'int')} questions"
    return f"{head}; {tail}"


# --- a claim on a record -------------------------------------------------------------------------


def paper_significant(paper: Mapping[str, Any]) -> bool | None:
    """The paper's significance statement: ``p_below``/``p`` below the level, or explicit."""
    if "significant" in paper:
        return bool(paper["significant"])
    for field_name in ("p_below", "p"):
        if field_name in paper:
            return float(paper[field_name]) < SIGNIFICANCE_LEVEL
    return None


@dataclass(frozen=True)
class ClaimRow:
    """A claim rendered for the table: the paper's number, ours, what ours is computed on, the
    verdict."""

    claim: Claim
    paper_text: str
    ours_text: str
    computed_on_text: str
    judgement: Judgement


def _number(record: Mapping[str, Any], key: str) -> float:
    value = get_number(record, key)
    if isinstance(value, str):
        raise ValueError(
            f"record {record.get('name')!r}: {key!r} is the text {value!r}, not a number"
        )
    return float(value)


#: The paper's side of a statement of ours (``origin: ours`` in ``paper_claims.yml``).
OURS_ONLY_TEXT = "none: our statement, not the paper's (nothing to reproduce)"


def paper_text(claim: Claim) -> str:
    """The paper's side of a claim, formatted like ours; for a statement of ours
    (``origin: ours``) :data:`OURS_ONLY_TEXT`, so every page listing the claims says the paper
    has no value to reproduce there."""
    if claim.ours_only:
        return OURS_ONLY_TEXT
    paper = claim.paper
    if claim.rule == "share":
        threshold = paper.get("threshold")
        what = f" with R² ≥ {threshold:.2f}" if threshold is not None else ""
        return f"{paper['passing']} of {paper['total']} cells{what}"
    if claim.rule in ("holds", "positive", "untestable", "equivalence") or (
        claim.rule == "no_loss" and "value" not in paper  # a no-loss claim without a number
    ):
        return str(paper["statement"])
    if claim.rule == "level":
        return ", ".join(
            f"{label} {format_number(value, 'frac')}" for label, value in paper["levels"].items()
        )
    if claim.rule == "bound":
        return f"under {_duration(float(paper['bound']), str(paper.get('unit', 's')))}"
    if claim.rule == "range":
        text = f"{_pp(paper['low'])} to {_pp(paper['high'])}"
    else:
        prefix = "≈ " if paper.get("approximate") else ""
        text = prefix + _pp(paper["value"])
    significance = claim.p_text()
    return f"{text}, {significance}" if significance else text


_COMPARISON_KEYS: tuple[str, ...] = ("estimate", "ci_lo", "ci_hi")
_OPTIONAL_KEYS: tuple[str, ...] = ("p", "n", "n_discordant")


def _comparison_values(record: Mapping[str, Any], keys: Mapping[str, Any]) -> dict[str, Any]:
    """Estimate, interval and the optional ``p``, ``n`` and ``n_discordant`` (named directly,
    or as the sum of ``n_a_better`` and ``n_b_better``, the counts a comparison records)."""
    values: dict[str, Any] = {k: _number(record, keys[k]) for k in _COMPARISON_KEYS}
    for name in _OPTIONAL_KEYS:
        value = _number(record, keys[name]) if name in keys else None
        values[name] = value if name == "p" or value is None else int(value)
    if values["n_discordant"] is None and "n_a_better" in keys and "n_b_better" in keys:
        values["n_discordant"] = int(_number(record, keys["n_a_better"])) + int(
            _number(record, keys["n_b_better"])
        )
    return values


def _level_values(record: Mapping[str, Any], keys: Mapping[str, Any]) -> dict[str, Any]:
    """A level (a hit rate) with its exact Clopper–Pearson interval at the book's confidence,
    from the rate and its number of questions (the hits are ``round(rate · n)``)."""
    from scipy.stats import binomtest

    rate, n = _number(record, keys["estimate"]), int(_number(record, keys["n"]))
    if n <= 0:
        raise ValueError(f"record {record.get('name')!r}: {keys['n']!r} is {n}, not a count")
    ci = binomtest(round(rate * n), n).proportion_ci(config.CONFIDENCE, method="exact")
    return {"estimate": rate, "ci_lo": float(ci.low), "ci_hi": float(ci.high), "n": n}


def claim_values(claim: Claim, record: Mapping[str, Any]) -> dict[str, Any]:
    """Our side of ``claim`` as plain values read from ``record`` (the run ``claim.run``):
    ``estimate, ci_lo, ci_hi, p, n, n_discordant`` (comparison kinds; with ``parts``, one such
    mapping per part under ``parts``), ``parts`` of ``estimate, ci_lo, ci_hi, n`` (level),
    ``estimate`` (bound), ``passing, total, direction`` (share), ``holds, parts`` (holds) or
    the context numbers (untestable). Absent optional keys are ``None``.

    Raises ``KeyError`` (with the nearest keys) when the record lacks a key the claim names.
    """
    ours = claim.ours
    if claim.rule == "level":
        return {
            "parts": {
                str(label): _level_values(record, keys) for label, keys in ours["parts"].items()
            }
        }
    if claim.rule in COMPARISON_RULES:
        if "parts" in ours:
            return {
                "parts": {
                    str(label): _comparison_values(record, keys)
                    for label, keys in ours["parts"].items()
                }
            }
        return _comparison_values(record, ours)
    if claim.rule == "bound":
        return {"estimate": _number(record, ours["estimate"])}
    if claim.rule == "share":
        return {
            "passing": int(_number(record, ours["passing"])),
            "total": int(_number(record, ours["total"])),
            "direction": int(_number(record, ours["direction"])) if "direction" in ours else None,
        }
    if claim.rule == "untestable":
        return {name: get_number(record, key) for name, key in ours.items()}
    return {
        "holds": bool(get_number(record, ours["holds"])),
        "parts": {
            str(label): bool(get_number(record, key))
            for label, key in (ours.get("parts") or {}).items()
        },
    }


def _judge_one(claim: Claim, values: Mapping[str, Any], paper_value: Any = None) -> Judgement:
    paper = claim.paper
    estimate, lo, hi = (float(values[k]) for k in _COMPARISON_KEYS)
    if claim.rule == "estimate":
        judged = judge_estimate(float(paper["value"]), estimate=estimate, ci_lo=lo, ci_hi=hi)
    elif claim.rule == "range":
        judged = judge_range(
            float(paper["low"]), float(paper["high"]), estimate=estimate, ci_lo=lo, ci_hi=hi
        )
    elif claim.rule == "positive":
        judged = judge_positive(estimate=estimate, ci_lo=lo, ci_hi=hi)
    elif claim.rule == "no_loss":
        judged = judge_no_loss(estimate=estimate, ci_lo=lo, ci_hi=hi)
    elif claim.rule == "equivalence":
        judged = judge_equivalence(estimate=estimate, ci_lo=lo, ci_hi=hi)
    else:  # level
        return judge_level(float(paper_value), estimate=estimate, ci_lo=lo, ci_hi=hi)
    power = power_of(
        reference_effect(claim), n=values.get("n"), n_discordant=values.get("n_discordant")
    )
    return Judgement(judged.verdict, judged.reason, judged.flags, power)


def _worst(parts: Mapping[str, Judgement]) -> Judgement:
    """A claim judged part by part: the worst part decides; mixed sides are not reproduced."""
    verdicts = {j.verdict for j in parts.values()}
    worst_label = max(parts, key=lambda k: _BADNESS[parts[k].verdict])
    worst = parts[worst_label]
    verdict = NOT_REPRODUCED if {SMALLER, LARGER} <= verdicts else worst.verdict
    if verdict == REPRODUCED:
        reason = "every part: " + "; ".join(f"{k}: {j.reason}" for k, j in parts.items())
    else:
        reason = f"{worst_label}: {worst.reason}"
    return Judgement(verdict, reason, worst.flags, worst.power, dict(parts))


def judge_values(claim: Claim, values: Mapping[str, Any]) -> Judgement:
    """The verdict of ``claim`` (its rule, the paper's side) for our ``values`` (as
    :func:`claim_values` returns them), with its power; pure. The robustness chapter calls it
    once per reading."""
    paper = claim.paper
    if claim.rule in (*COMPARISON_RULES, "level"):
        if "parts" in values:
            levels = paper.get("levels", {})
            parts = {
                label: _judge_one(claim, part, levels.get(label))
                for label, part in values["parts"].items()
            }
            return _worst(parts)
        if claim.rule == "level":
            raise ValueError(f"claim {claim.id!r}: a level claim names its levels as parts")
        return _judge_one(claim, values)
    if claim.rule == "bound":
        return judge_bound(
            float(paper["bound"]), estimate=float(values["estimate"]), unit=paper.get("unit", "s")
        )
    if claim.rule == "share":
        return judge_share(
            int(paper["passing"]), int(paper["total"]), passing=values["passing"],
            total=values["total"], direction_passing=values.get("direction"),
        )  # fmt: skip
    if claim.rule == "untestable":
        return judge_untestable(str(paper["why"]), values)
    return judge_holds(bool(values["holds"]), values.get("parts") or {})


#: Our side of an untestable claim that has no number of ours to show.
NO_NUMBER_OF_OURS = "no number of ours"


def values_text(claim: Claim, values: Mapping[str, Any]) -> str:
    """Our side of a claim in words, e.g. ``+6.6 pp (95% CI +4.5 pp to +9.1 pp), p < 0.001``."""
    level = round(100 * config.CONFIDENCE)
    if claim.rule in COMPARISON_RULES:
        if "parts" in values:
            return "; ".join(
                f"{label} {_pp(v['estimate'])} ({_interval_text(v['ci_lo'], v['ci_hi'])})"
                for label, v in values["parts"].items()
            )
        interval = _interval_text(values["ci_lo"], values["ci_hi"])
        text = f"{_pp(values['estimate'])} ({level}% CI {interval})"
        if values.get("p") is not None:
            text += f", {format_number(values['p'], 'p')}"
        return text
    if claim.rule == "level":
        return ", ".join(
            f"{label} {format_number(v['estimate'], 'frac')}"
            for label, v in values["parts"].items()
        )
    if claim.rule == "bound":
        return _duration(float(values["estimate"]), str(claim.paper.get("unit", "s")))
    if claim.rule == "share":
        text = f"{values['passing']} of {values['total']} cells"
        if values.get("direction") is not None:
            text += f" (direction: {values['direction']} of {values['total']})"
        return text
    if claim.rule == "untestable":
        if not values:  # nothing of ours stands beside it (a human annotation)
            return NO_NUMBER_OF_OURS
        return ", ".join(f"{name} {format_number(value)}" for name, value in values.items())
    text = "yes" if values["holds"] else "no"
    parts = values.get("parts") or {}
    if parts:
        text += " (" + ", ".join(f"{k}: {'yes' if v else 'no'}" for k, v in parts.items()) + ")"
    return text


def judge_claim(claim: Claim, record: Mapping[str, Any]) -> ClaimRow:
    """Our side of ``claim`` read from ``record`` (the run ``claim.run``), and the verdict.

    Raises ``KeyError`` (with the nearest keys) when the record lacks a key the claim names.
    """
    values = claim_values(claim, record)
    computed_on = fill_fields(claim.computed_on, record)
    if values.get("n") is not None:
        n_text = f"n = {format_number(values['n'], 'int')}"
        computed_on = f"{computed_on}; {n_text}" if computed_on else n_text
    return ClaimRow(
        claim,
        paper_text(claim),
        values_text(claim, values),
        computed_on,
        judge_values(claim, values),
    )


_PLACEHOLDER = re.compile(r"\{(config|numbers)\.([A-Za-z0-9_.@-]+)\}")


def fill_fields(
    template: str,
    record: Mapping[str, Any],
    display: Callable[[str, Any], str] | None = None,
) -> str:
    """Fill ``{config.field}`` and ``{numbers.dotted.key}`` in a claim's ``computed_on`` text.

    Lists are joined with commas; a ``None`` config value (e.g. ``sample_size``) reads "all".
    ``display(field, value)`` turns each config value into text (the book passes its display
    names, so a reader sees "MiniLM-L6", not ``minilm``); by default ``str``, as
    ``regime verdicts --json`` prints it.

    >>> fill_fields("{config.encoders}, sample {config.sample_size}",
    ...             {"config": {"encoders": ["minilm", "tfidf"], "sample_size": None}})
    'minilm, tfidf, sample all'
    >>> fill_fields("{config.encoders}", {"config": {"encoders": ["minilm"]}},
    ...             display=lambda field, value: value.upper())
    'MINILM'
    """
    show = display or (lambda field, value: str(value))

    def replace(match: re.Match[str]) -> str:
        source, key = match.group(1), match.group(2)
        if source == "numbers":
            return format_number(get_number(record, key))
        node: Any = record.get("config", {})
        for part in key.split("."):
            if not isinstance(node, Mapping) or part not in node:
                raise KeyError(f"record {record.get('name', '?')!r} has no config field {key!r}")
            node = node[part]
        if node is None:
            return "all"
        field_name = key.rsplit(".", 1)[-1]
        if isinstance(node, list | tuple):
            return ", ".join(show(field_name, v) for v in node)
        return show(field_name, node)

    return _PLACEHOLDER.sub(replace, template)
