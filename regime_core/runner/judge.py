"""Judging a claim of the paper on our records: the verdict rules and their pure kernels.

A claim (:class:`regime_core.paper.Claim`, from ``paper_claims.yml``) states the paper's side;
:func:`claim_values` reads ours from a results record (:mod:`regime_core.runner.records`), and
:func:`judge_claim` puts the two side by side and gives a verdict by the rule of the claim's kind
(:data:`VERDICT_RULES`). The book's "The paper's numbers and ours" page renders the table with
the ``regime-paper-claims`` directive (``regime_core.book.sphinx``); ``regime verdicts`` prints
it (:mod:`regime_core.runner.verdicts`).

>>> judge_estimate(0.056, True, estimate=0.05, ci_lo=0.02, ci_hi=0.08, p=0.001).verdict
'reproduced'
>>> judge_estimate(0.056, True, estimate=0.02, ci_lo=0.005, ci_hi=0.04, p=0.01).verdict
'direction only'
>>> judge_estimate(0.056, True, estimate=0.02, ci_lo=-0.01, ci_hi=0.04, p=0.2).verdict
'not reproduced'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from regime_core import config
from regime_core.paper import Claim
from regime_core.runner.records import format_number, get_number

REPRODUCED, DIRECTION_ONLY, NOT_REPRODUCED = "reproduced", "direction only", "not reproduced"
SMALLER, LARGER = "smaller than reported", "larger than reported"
NOT_TESTABLE = "not testable here"
VERDICTS: tuple[str, ...] = (
    REPRODUCED, DIRECTION_ONLY, SMALLER, LARGER, NOT_REPRODUCED, NOT_TESTABLE,
)  # fmt: skip
#: a test result counts as significant when its p-value is below this (1 − config.CONFIDENCE)
SIGNIFICANCE_LEVEL: float = round(1.0 - config.CONFIDENCE, 10)
"""a p-value below it is significant, for the paper and for us alike; one minus CONFIDENCE"""

#: The verdict rule of each claim kind (``rule`` in ``paper_claims.yml``). Significance is
#: always judged at :data:`SIGNIFICANCE_LEVEL`, for the paper's statement and for ours alike.
VERDICT_RULES: dict[str, str] = {
    "estimate": "A point value with a significance statement (or none). Reproduced: the paper's "
    "value lies inside our confidence interval and our test agrees with the paper's on "
    "significance. Not reproduced: our interval covers zero where the paper's effect is "
    "significant. Direction only: otherwise, if our interval excludes zero on the paper's side. "
    "Not reproduced: otherwise.",
    "range": "A range of values with a p-value bound. Reproduced: our confidence interval "
    "overlaps the paper's range and our test is significant. Smaller (larger) than reported: our "
    "interval lies wholly below (above) the range and excludes zero on the range's side. "
    "Direction only: otherwise, if our interval excludes zero on the range's side. Not "
    "reproduced: otherwise.",
    "share": "'Threshold met in k of n cells'. Reproduced: our share of cells meeting the "
    "threshold is at least k/n. Direction only: fewer cells meet the threshold, but the "
    "weaker, direction-only criterion (e.g. a significantly positive rank correlation) holds "
    "in at least k/n of our cells. Not reproduced: otherwise.",
    "holds": "A yes/no statement our run decides (e.g. 'the split holds for every encoder'). "
    "Reproduced: it holds. Direction only: it does not hold as a whole but holds in at least "
    "one of its parts (e.g. one encoder). Not reproduced: otherwise.",
    "positive": "A difference the paper's method implies is positive (e.g. the router beats "
    "always-union; the paper reports no number). Reproduced: our interval lies above zero and "
    "our test is significant. Not reproduced: otherwise.",
    "untestable": "A statement of the paper's setup that no run of ours can test (e.g. how many "
    "examples its router learnt from). Not testable here, always; the reason says why, with our "
    "own numbers beside it.",
}
"""how a kind of claim turns the paper's value and ours into a verdict"""


# --- verdicts (pure) -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Judgement:
    """A verdict (one of :data:`VERDICTS`) and the reason, in words."""

    verdict: str
    reason: str


def _sign(x: float) -> int:
    return (x > 0) - (x < 0)


def _significant(p: float | None) -> bool | None:
    return None if p is None else p < SIGNIFICANCE_LEVEL


def judge_estimate(
    paper_value: float,
    paper_significant: bool | None,
    *,
    estimate: float,
    ci_lo: float,
    ci_hi: float,
    p: float | None = None,
) -> Judgement:
    """The ``estimate`` rule of :data:`VERDICT_RULES`.

    ``paper_significant`` is ``None`` when the paper states no test (then only the interval
    counts); ``p`` is ours (``None``: no test, which fails a significance claim).

    >>> judge_estimate(0.011, False, estimate=0.004, ci_lo=-0.01, ci_hi=0.02, p=0.5).verdict
    'reproduced'
    >>> judge_estimate(0.056, True, estimate=-0.01, ci_lo=-0.03, ci_hi=0.01, p=0.4).verdict
    'not reproduced'
    """
    if not ci_lo <= ci_hi:
        raise ValueError(f"judge_estimate: ci_lo {ci_lo} > ci_hi {ci_hi}")
    inside = ci_lo <= paper_value <= ci_hi
    ours_significant = _significant(p)
    agrees = paper_significant is None or (ours_significant is paper_significant)
    where = "inside" if inside else "outside"
    reason = f"the paper's value is {where} our CI"
    if paper_significant is not None:
        ours_word = "no test" if p is None else ("significant" if ours_significant else "n.s.")
        paper_word = "significant" if paper_significant else "n.s."
        reason += f"; paper {paper_word}, ours {ours_word}"
    if inside and agrees:
        return Judgement(REPRODUCED, reason)
    excludes_zero = _excludes_zero_on_side(ci_lo, ci_hi, _sign(paper_value))
    if paper_significant and not excludes_zero:
        return Judgement(NOT_REPRODUCED, reason + "; our CI does not exclude zero")
    if excludes_zero:
        return Judgement(DIRECTION_ONLY, reason + "; our CI excludes zero on the paper's side")
    return Judgement(NOT_REPRODUCED, reason + "; our CI does not exclude zero on its side")


def _excludes_zero_on_side(ci_lo: float, ci_hi: float, side: int) -> bool:
    """The interval lies strictly on ``side`` (+1: above zero, -1: below) of zero."""
    return (side > 0 and ci_lo > 0) or (side < 0 and ci_hi < 0)


def judge_range(
    low: float, high: float, *, estimate: float, ci_lo: float, ci_hi: float, p: float
) -> Judgement:
    """The ``range`` rule of :data:`VERDICT_RULES` (``low <= high``, both of one sign).

    >>> judge_range(0.086, 0.141, estimate=0.10, ci_lo=0.05, ci_hi=0.15, p=0.0001).verdict
    'reproduced'
    >>> judge_range(0.086, 0.141, estimate=0.03, ci_lo=-0.01, ci_hi=0.07, p=0.2).verdict
    'not reproduced'
    >>> judge_range(0.086, 0.141, estimate=0.05, ci_lo=0.03, ci_hi=0.08, p=0.001).verdict
    'smaller than reported'
    """
    if not low <= high:
        raise ValueError(f"judge_range: low {low} > high {high}")
    if _sign(low) * _sign(high) < 0:
        raise ValueError(f"judge_range: the range [{low}, {high}] has no single sign")
    if not ci_lo <= ci_hi:
        raise ValueError(f"judge_range: ci_lo {ci_lo} > ci_hi {ci_hi}")
    overlaps = ci_lo <= high and ci_hi >= low
    significant = bool(_significant(p))
    reason = (
        f"our CI {'overlaps' if overlaps else 'misses'} the paper's range; ours "
        f"{'significant' if significant else 'n.s.'}"
    )
    if overlaps and significant:
        return Judgement(REPRODUCED, reason)
    direction = _sign(low) or _sign(high)
    excludes_zero = _excludes_zero_on_side(ci_lo, ci_hi, direction)
    if not excludes_zero:
        return Judgement(NOT_REPRODUCED, reason + "; our CI does not exclude zero on its side")
    # |ours| wholly below (or above) the range's magnitudes
    below = ci_hi < low if direction > 0 else ci_lo > high
    above = ci_lo > high if direction > 0 else ci_hi < low
    if below:
        return Judgement(SMALLER, reason + "; our CI lies wholly below the range")
    if above:
        return Judgement(LARGER, reason + "; our CI lies wholly above the range")
    return Judgement(DIRECTION_ONLY, reason + "; our CI excludes zero on the range's side")


def judge_positive(*, estimate: float, ci_lo: float, ci_hi: float, p: float | None) -> Judgement:
    """The ``positive`` rule of :data:`VERDICT_RULES`.

    >>> judge_positive(estimate=0.01, ci_lo=0.002, ci_hi=0.02, p=0.01).verdict
    'reproduced'
    >>> judge_positive(estimate=0.01, ci_lo=0.0, ci_hi=0.02, p=0.06).verdict
    'not reproduced'
    """
    if not ci_lo <= ci_hi:
        raise ValueError(f"judge_positive: ci_lo {ci_lo} > ci_hi {ci_hi}")
    significant = bool(_significant(p))
    reason = (
        f"our CI {'lies above' if ci_lo > 0 else 'does not lie above'} zero; ours "
        f"{'significant' if significant else 'n.s.'}"
    )
    if ci_lo > 0 and significant and estimate > 0:
        return Judgement(REPRODUCED, reason)
    return Judgement(NOT_REPRODUCED, reason)


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
        f"{passing}/{total} of our cells meet the threshold (paper: {paper_passing}/{paper_total})"
    )
    if passing / total >= target:
        return Judgement(REPRODUCED, reason)
    if direction_passing is not None and direction_passing / total >= target:
        return Judgement(
            DIRECTION_ONLY, reason + f"; the direction holds in {direction_passing}/{total}"
        )
    return Judgement(NOT_REPRODUCED, reason)


def judge_holds(holds: bool, parts: Mapping[str, bool] | None = None) -> Judgement:
    """The ``holds`` rule of :data:`VERDICT_RULES`; ``parts`` maps a label to its own verdict.

    >>> judge_holds(False, {"minilm": True, "tfidf": False}).verdict
    'direction only'
    """
    parts = dict(parts or {})
    detail = ", ".join(f"{k}: {'yes' if v else 'no'}" for k, v in parts.items())
    reason = f"holds: {'yes' if holds else 'no'}" + (f" ({detail})" if detail else "")
    if holds:
        return Judgement(REPRODUCED, reason)
    if any(parts.values()):
        return Judgement(DIRECTION_ONLY, reason)
    return Judgement(NOT_REPRODUCED, reason)


def judge_untestable(why: str, context: Mapping[str, Any]) -> Judgement:
    """The ``untestable`` rule of :data:`VERDICT_RULES`: ``why`` with our ``context`` numbers.

    >>> judge_untestable("ours is {n} of {m}", {"n": 212, "m": 1657}).reason
    'ours is 212 of 1,657'
    """
    return Judgement(NOT_TESTABLE, why.format(**{k: format_number(v) for k, v in context.items()}))


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


def _p_text(p: float) -> str:
    return format_number(p, "p")


def paper_text(claim: Claim) -> str:
    """The paper's side of a claim, formatted like ours."""
    paper = claim.paper
    if claim.rule == "share":
        threshold = paper.get("threshold")
        what = f" with R² ≥ {threshold:.2f}" if threshold is not None else ""
        return f"{paper['passing']} of {paper['total']} cells{what}"
    if claim.rule in ("holds", "positive", "untestable"):
        return str(paper["statement"])
    if claim.rule == "range":
        text = f"{format_number(paper['low'], 'pp')} to {format_number(paper['high'], 'pp')}"
    else:
        prefix = "≈ " if paper.get("approximate") else ""
        text = prefix + format_number(paper["value"], "pp")
    significance = claim.p_text()
    return f"{text}, {significance}" if significance else text


def claim_values(claim: Claim, record: Mapping[str, Any]) -> dict[str, Any]:
    """Our side of ``claim`` as plain values read from ``record`` (the run ``claim.run``):
    ``estimate, ci_lo, ci_hi, p, n`` (estimate, range, positive), ``passing, total,
    direction`` (share) or ``holds, parts`` (holds). Absent optional keys are ``None``.

    Raises ``KeyError`` (with the nearest keys) when the record lacks a key the claim names.
    """
    ours = claim.ours
    if claim.rule in ("estimate", "range", "positive"):
        return {
            "estimate": _number(record, ours["estimate"]),
            "ci_lo": _number(record, ours["ci_lo"]),
            "ci_hi": _number(record, ours["ci_hi"]),
            "p": _number(record, ours["p"]) if "p" in ours else None,
            "n": int(_number(record, ours["n"])) if "n" in ours else None,
        }
    if claim.rule == "untestable":
        return {name: get_number(record, key) for name, key in ours.items()}
    if claim.rule == "share":
        return {
            "passing": int(_number(record, ours["passing"])),
            "total": int(_number(record, ours["total"])),
            "direction": int(_number(record, ours["direction"])) if "direction" in ours else None,
        }
    return {
        "holds": bool(get_number(record, ours["holds"])),
        "parts": {
            str(label): bool(get_number(record, key))
            for label, key in (ours.get("parts") or {}).items()
        },
    }


def judge_values(claim: Claim, values: Mapping[str, Any]) -> Judgement:
    """The verdict of ``claim`` (its rule, the paper's side) for our ``values`` (as
    :func:`claim_values` returns them); pure. The robustness chapter calls it once per reading."""
    paper = claim.paper
    if claim.rule in ("estimate", "range", "positive"):
        estimate, lo, hi, p = (values[k] for k in ("estimate", "ci_lo", "ci_hi", "p"))
        if claim.rule == "range":
            return judge_range(
                float(paper["low"]), float(paper["high"]), estimate=estimate, ci_lo=lo, ci_hi=hi,
                p=float(p if p is not None else 1.0),
            )  # fmt: skip
        if claim.rule == "positive":
            return judge_positive(estimate=estimate, ci_lo=lo, ci_hi=hi, p=p)
        return judge_estimate(
            float(paper["value"]), paper_significant(paper),
            estimate=estimate, ci_lo=lo, ci_hi=hi, p=p,
        )  # fmt: skip
    if claim.rule == "share":
        return judge_share(
            int(paper["passing"]), int(paper["total"]), passing=values["passing"],
            total=values["total"], direction_passing=values.get("direction"),
        )  # fmt: skip
    if claim.rule == "untestable":
        return judge_untestable(str(paper["why"]), values)
    return judge_holds(bool(values["holds"]), values.get("parts") or {})


def values_text(claim: Claim, values: Mapping[str, Any]) -> str:
    """Our side of a claim in words, e.g. ``+6.6 pp (95% CI +4.5 pp to +9.1 pp), p < 0.001``."""
    if claim.rule in ("estimate", "range", "positive"):
        level = round(100 * config.CONFIDENCE)
        text = (
            f"{format_number(values['estimate'], 'pp')} ({level}% CI "
            f"{format_number(values['ci_lo'], 'pp')} to {format_number(values['ci_hi'], 'pp')})"
        )
        if values.get("p") is not None:
            text += f", {_p_text(values['p'])}"
        return text
    if claim.rule == "share":
        text = f"{values['passing']} of {values['total']} cells"
        if values.get("direction") is not None:
            text += f" (direction: {values['direction']} of {values['total']})"
        return text
    if claim.rule == "untestable":
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
        field = key.rsplit(".", 1)[-1]
        if isinstance(node, list | tuple):
            return ", ".join(show(field, v) for v in node)
        return show(field, node)

    return _PLACEHOLDER.sub(replace, template)
