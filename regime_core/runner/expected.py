"""Expected numbers and the paper's claims: what a run must reproduce, and how we judge it.

Two data files live at the top of the repository:

``paper_claims.yml``
    The paper's claims, each typed once with its source. They are the *paper's* numbers, never
    ours: our side of every claim is a set of dotted keys into a results record
    (:mod:`regime_core.runner.records`). :func:`judge_claim` puts the two side by side and gives a
    verdict by the rule of the claim's kind (:data:`VERDICT_RULES`); the book's
    "The paper's numbers and ours" page renders the table with the ``regime-paper-claims``
    directive (``regime_core.book.sphinx``).

``expected_numbers.yml``
    Our own numbers from the ``quick`` profile, one per (run, key), each with an absolute
    tolerance (:data:`TOLERANCE_RULES`). It is generated, never typed::

        regime reproduce --profile quick --work W
        python -m regime_core.runner.expected freeze --work W

    and ``python -m regime_core.runner.expected check --work W`` (or
    ``tests/test_runner_expected.py``)
    lists every key that drifted out of its tolerance.

>>> judge_estimate(0.056, True, estimate=0.05, ci_lo=0.02, ci_hi=0.08, p=0.001).verdict
'reproduced'
>>> judge_estimate(0.056, True, estimate=0.02, ci_lo=0.005, ci_hi=0.04, p=0.01).verdict
'direction only'
>>> judge_estimate(0.056, True, estimate=0.02, ci_lo=-0.01, ci_hi=0.04, p=0.2).verdict
'not reproduced'
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from regime_core import config, paths
from regime_core.runner.records import (
    Scalar,
    atomic_write_text,
    format_number,
    get_number,
    iter_number_keys,
    load_record,
)

PAPER_CLAIMS_FILE = paths.REPO_ROOT / "paper_claims.yml"
EXPECTED_NUMBERS_FILE = paths.REPO_ROOT / "expected_numbers.yml"
EXPECTED_SCHEMA = "regime-expected/1"
#: the profile whose numbers ``expected_numbers.yml`` freezes (minutes on two cores)
EXPECTED_PROFILE = "quick"

REPRODUCED, DIRECTION_ONLY, NOT_REPRODUCED = "reproduced", "direction only", "not reproduced"
SMALLER, LARGER = "smaller than reported", "larger than reported"
VERDICTS: tuple[str, ...] = (REPRODUCED, DIRECTION_ONLY, SMALLER, LARGER, NOT_REPRODUCED)
#: a test result counts as significant when its p-value is below this (1 − config.CONFIDENCE)
SIGNIFICANCE_LEVEL: float = round(1.0 - config.CONFIDENCE, 10)

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
}
CLAIM_RULES: tuple[str, ...] = tuple(VERDICT_RULES)
_REQUIRED_OURS: dict[str, tuple[str, ...]] = {
    "estimate": ("estimate", "ci_lo", "ci_hi"),
    "range": ("estimate", "ci_lo", "ci_hi", "p"),
    "share": ("passing", "total"),
    "holds": ("holds",),
    "positive": ("estimate", "ci_lo", "ci_hi", "p"),
}
_REQUIRED_PAPER: dict[str, tuple[str, ...]] = {
    "estimate": ("value",),
    "range": ("low", "high"),
    "share": ("passing", "total"),
    "holds": ("statement",),
    "positive": ("statement",),
}


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


# --- the claims file -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Claim:
    """One claim of ``paper_claims.yml``: the paper's side (values) and ours (record keys)."""

    id: str
    claim: str
    source: str
    rule: str
    paper: Mapping[str, Any]
    run: str
    ours: Mapping[str, Any]
    behind: str = ""
    chapter: str = ""

    def keys(self) -> list[str]:
        """Every record key this claim reads (in the run ``run``)."""
        out: list[str] = []
        for value in self.ours.values():
            if isinstance(value, str):
                out.append(value)
            elif isinstance(value, Mapping):
                out.extend(str(v) for v in value.values())
        return out


def load_claims(path: Path | str | None = None) -> list[Claim]:
    """Parse and validate ``paper_claims.yml``; ``ValueError`` names the file, claim and field."""
    file = Path(path) if path is not None else PAPER_CLAIMS_FILE
    raw = _read_yaml(file)
    claims_raw = raw.get("claims") if isinstance(raw, dict) else None
    if not isinstance(claims_raw, list) or not claims_raw:
        raise ValueError(f"{file}: expected a mapping with a non-empty 'claims' list")
    claims: list[Claim] = []
    seen: set[str] = set()
    for index, body in enumerate(claims_raw):
        where = f"{file}: claims[{index}]"
        if not isinstance(body, dict):
            raise ValueError(f"{where}: expected a mapping")
        for field_name in ("id", "claim", "source", "rule", "paper", "ours"):
            if field_name not in body:
                raise ValueError(f"{where}: missing field {field_name!r}")
        claim_id = str(body["id"])
        where = f"{file}: claim {claim_id!r}"
        if claim_id in seen:
            raise ValueError(f"{where}: duplicate id")
        seen.add(claim_id)
        rule = body["rule"]
        if rule not in CLAIM_RULES:
            raise ValueError(f"{where}: rule {rule!r} is not one of {CLAIM_RULES}")
        paper, ours = body["paper"], body["ours"]
        if not isinstance(paper, dict) or not isinstance(ours, dict):
            raise ValueError(f"{where}: 'paper' and 'ours' must be mappings")
        missing_paper = [f for f in _REQUIRED_PAPER[rule] if f not in paper]
        if missing_paper:
            raise ValueError(f"{where}: 'paper' lacks {missing_paper} (rule {rule!r})")
        if not isinstance(ours.get("run"), str):
            raise ValueError(f"{where}: 'ours.run' (the run id of reproduce.yml) is required")
        missing_ours = [f for f in _REQUIRED_OURS[rule] if f not in ours]
        if missing_ours:
            raise ValueError(f"{where}: 'ours' lacks the record keys {missing_ours}")
        claims.append(
            Claim(
                id=claim_id,
                claim=str(body["claim"]),
                source=str(body["source"]),
                rule=rule,
                paper=paper,
                run=ours["run"],
                ours={k: v for k, v in ours.items() if k != "run"},
                behind=str(body.get("behind", "")),
                chapter=str(body.get("chapter", "")),
            )
        )
    return claims


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
    """A claim rendered for the table: the paper's number, ours, what is behind ours, verdict."""

    claim: Claim
    paper_text: str
    ours_text: str
    behind_text: str
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
    if claim.rule in ("holds", "positive"):
        return str(paper["statement"])
    if claim.rule == "range":
        text = f"{format_number(paper['low'], 'pp')} to {format_number(paper['high'], 'pp')}"
    else:
        prefix = "≈ " if paper.get("approximate") else ""
        text = prefix + format_number(paper["value"], "pp")
    if "p_below" in paper:
        text += f", p < {paper['p_below']}"
    elif "p" in paper:
        text += f", p = {paper['p']}"
    elif paper.get("significant") is False:
        text += ", n.s."
    return text


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
    behind = fill_behind(claim.behind, record)
    if values.get("n") is not None:
        n_text = f"n = {format_number(values['n'], 'int')}"
        behind = f"{behind}; {n_text}" if behind else n_text
    return ClaimRow(
        claim, paper_text(claim), values_text(claim, values), behind, judge_values(claim, values)
    )


_PLACEHOLDER = re.compile(r"\{(config|numbers)\.([A-Za-z0-9_.@-]+)\}")


def fill_behind(template: str, record: Mapping[str, Any]) -> str:
    """Fill ``{config.field}`` and ``{numbers.dotted.key}`` in a claim's ``behind`` text.

    Lists are joined with commas; a ``None`` config value (e.g. ``sample_size``) reads "all".

    >>> fill_behind("{config.encoders}, sample {config.sample_size}",
    ...             {"config": {"encoders": ["minilm", "tfidf"], "sample_size": None}})
    'minilm, tfidf, sample all'
    """

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
        if isinstance(node, list | tuple):
            return ", ".join(str(v) for v in node)
        return str(node)

    return _PLACEHOLDER.sub(replace, template)


# --- expected numbers ----------------------------------------------------------------------------

#: How each frozen number's absolute tolerance is chosen (text and booleans must be equal).
#: The values absorb the noise of floating point across machines (summation order, BLAS builds,
#: the stopping point of iterative solvers: all far below 1e-3) but catch any real drift: every
#: rate of the quick profile is a mean over at least 40 items (120 when pooled), so one item
#: changing its outcome moves it by at least 1/120 > 0.005.
TOLERANCE_RULES: tuple[tuple[str, str, float, str], ...] = (
    ("int", "integers (counts)", 1e-6, "counts are exact: any change is drift"),
    (
        "real",
        "every other number (rates, differences, CI bounds, p-values, R², coefficients)",
        0.005,
        "below one item of the smallest sample, far above float noise",
    ),
)


def tolerance_for(key: str, value: Scalar) -> float:
    """The absolute tolerance of a frozen number by :data:`TOLERANCE_RULES` (0 for text/bools).

    ``key`` is not used by the current rules; it is the hook for a per-key rule.

    >>> tolerance_for("summary.cells_fitted", 12), tolerance_for("hit_q", 0.5)
    (1e-06, 0.005)
    >>> tolerance_for("verdict.holds", True)
    0.0
    """
    if isinstance(value, bool | str):
        return 0.0
    if isinstance(value, int):
        return TOLERANCE_RULES[0][2]
    return TOLERANCE_RULES[1][2]


@dataclass(frozen=True)
class Expected:
    """One frozen number: run, dotted key, value and absolute tolerance."""

    run: str
    key: str
    value: Scalar
    tolerance: float


@dataclass(frozen=True)
class Drift:
    """A frozen number the new run does not reproduce (``found`` is ``None`` when missing)."""

    expected: Expected
    found: Scalar | None
    problem: str

    def describe(self) -> str:
        e = self.expected
        return f"{e.run}:{e.key}: expected {e.value!r} ± {e.tolerance:g}, {self.problem}"


def within(expected: Scalar, found: Scalar, tolerance: float) -> bool:
    """Equal for text and booleans; ``|found − expected| <= tolerance`` for numbers.

    >>> within(0.5, 0.503, 0.005), within(0.5, 0.51, 0.005), within(True, 1, 0.0)
    (True, False, False)
    """
    if isinstance(expected, bool | str) or isinstance(found, bool | str):
        return type(expected) is type(found) and expected == found
    return math.isfinite(float(found)) and abs(float(found) - float(expected)) <= tolerance + 1e-12


def compare(expected: Sequence[Expected], records: Mapping[str, Mapping[str, Any]]) -> list[Drift]:
    """Every expected number that is missing from ``records`` (by run id) or out of tolerance."""
    drifts: list[Drift] = []
    for item in expected:
        record = records.get(item.run)
        if record is None:
            drifts.append(Drift(item, None, "the run produced no record"))
            continue
        try:
            found = get_number(record, item.key)
        except KeyError:
            drifts.append(Drift(item, None, "the key is missing from the record"))
            continue
        if not within(item.value, found, item.tolerance):
            if isinstance(found, bool | str) or isinstance(item.value, bool | str):
                problem = f"found {found!r}"
            else:
                problem = f"found {found!r} (off by {abs(float(found) - float(item.value)):.3g})"
            drifts.append(Drift(item, found, problem))
    return drifts


def freeze(records: Mapping[str, Mapping[str, Any]]) -> list[Expected]:
    """Every leaf of every record's numbers, with its tolerance (runs and keys in record order)."""
    frozen: list[Expected] = []
    for run, record in records.items():
        for key in iter_number_keys(record["numbers"]):
            value = get_number(record, key)
            frozen.append(Expected(run, key, value, tolerance_for(key, value)))
    return frozen


def load_records(work: Path | str, runs: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
    """The records under ``<work>/results``: the named runs (missing ones skipped), or all."""
    results = paths.results_dir(work)
    if runs is None:
        runs = sorted(p.name for p in results.iterdir() if (p / "record.json").is_file())
    return {
        run: load_record(results / run) for run in runs if (results / run / "record.json").is_file()
    }


_HEADER = """\
# Our own numbers from the `{profile}` profile, frozen with their absolute tolerances.
# GENERATED; do not edit by hand. Regenerate after an intended change:
#   regime data prepare --work W && regime reproduce --profile {profile} --work W
#   python -m regime_core.runner.expected freeze --work W
# tests/test_expected_numbers.py reruns the profile and lists every number out of tolerance.
# Absolute tolerances (TOLERANCE_RULES; text and booleans must be equal):
{rules}
"""


def dump_expected(expected: Sequence[Expected], profile: str = EXPECTED_PROFILE) -> str:
    """The text of ``expected_numbers.yml``: per run, ``key: [value, tolerance]``."""
    rules = "\n".join(
        f"#   {name:<5} {tol:<7g} {what}\n#                 why: {why}"
        for name, what, tol, why in TOLERANCE_RULES
    )
    # one `"key": [value, tolerance]` per line (JSON is YAML) keeps diffs readable
    lines = [f"schema: {EXPECTED_SCHEMA}", f"profile: {profile}", "runs:"]
    run = None
    for item in expected:
        if item.run != run:
            run = item.run
            lines.append(f"  {json.dumps(run)}:")
        pair = f"[{_yaml_scalar(item.value)}, {_yaml_scalar(item.tolerance)}]"
        lines.append(f"    {json.dumps(item.key, ensure_ascii=False)}: {pair}")
    return _HEADER.format(profile=profile, rules=rules) + "\n".join(lines) + "\n"


def _yaml_scalar(value: Scalar) -> str:
    """A scalar as YAML 1.1 reads it back exactly (PyYAML wants a '.' in every float).

    >>> _yaml_scalar(1e-06), _yaml_scalar(0.1282051282051282), _yaml_scalar("P1-P2+")
    ('1.0e-06', '0.1282051282051282', '"P1-P2+"')
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        text = repr(value)
        mantissa, e, exponent = text.partition("e")
        if "." not in mantissa:
            text = f"{mantissa}.0{e}{exponent}"
        return text
    return json.dumps(value, ensure_ascii=False)


def load_expected(path: Path | str | None = None) -> list[Expected]:
    """Parse ``expected_numbers.yml``; ``ValueError`` names the file, run and key."""
    file = Path(path) if path is not None else EXPECTED_NUMBERS_FILE
    raw = _read_yaml(file)
    if not isinstance(raw, dict) or raw.get("schema") != EXPECTED_SCHEMA:
        raise ValueError(f"{file}: expected schema {EXPECTED_SCHEMA!r}")
    runs = raw.get("runs")
    if not isinstance(runs, dict):
        raise ValueError(f"{file}: 'runs' must map run ids to their numbers")
    out: list[Expected] = []
    for run, numbers in runs.items():
        if not isinstance(numbers, dict):
            raise ValueError(f"{file}: run {run!r} must map keys to [value, tolerance]")
        for key, pair in numbers.items():
            if not (isinstance(pair, list) and len(pair) == 2):
                raise ValueError(f"{file}: run {run!r}, key {key!r}: expected [value, tolerance]")
            value, tolerance = pair
            where = f"{file}: run {run!r}, key {key!r}"
            if (
                isinstance(tolerance, bool)
                or not isinstance(tolerance, int | float)
                or tolerance < 0
            ):
                raise ValueError(f"{where}: tolerance {tolerance!r} is not a number >= 0")
            if not isinstance(value, bool | int | float | str):
                raise ValueError(f"{where}: value {value!r} is not a scalar")
            out.append(Expected(str(run), str(key), value, float(tolerance)))
    return out


def _read_yaml(file: Path) -> Any:
    if not file.is_file():
        raise FileNotFoundError(f"{file} does not exist")
    try:
        return yaml.safe_load(file.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        raise ValueError(f"{file}: not valid YAML ({err})") from err


def _iter_lines(drifts: Sequence[Drift]) -> Iterator[str]:
    for drift in drifts:
        yield f"  {drift.describe()}"


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m regime_core.runner.expected freeze|check --work W [--file F]``."""
    parser = argparse.ArgumentParser(
        prog="python -m regime_core.runner.expected",
        description="Freeze the quick profile's numbers into expected_numbers.yml, or check a "
        "run against them.",
    )
    parser.add_argument("action", choices=("freeze", "check"))
    parser.add_argument("--work", type=Path, default=None, help="work directory of the run")
    parser.add_argument("--file", type=Path, default=EXPECTED_NUMBERS_FILE)
    parser.add_argument(
        "--declarations",
        type=Path,
        default=None,
        help="reproduce.yml whose runs are frozen (default: the repository's)",
    )
    args = parser.parse_args(argv)
    from regime_core.runner.reproduce import load_declarations

    run_ids = list(load_declarations(args.declarations).runs)
    records = load_records(paths.work_dir(args.work), run_ids)
    if args.action == "freeze":
        missing = [r for r in run_ids if r not in records]
        if missing:
            print(f"no record for runs {missing}; run `regime reproduce --profile "
                  f"{EXPECTED_PROFILE}` first", file=sys.stderr)  # fmt: skip
            return 1
        frozen = freeze(records)
        atomic_write_text(args.file, dump_expected(frozen))
        print(f"froze {len(frozen)} numbers of {len(records)} runs into {args.file}")
        return 0
    drifts = compare(load_expected(args.file), records)
    if drifts:
        print(f"{len(drifts)} numbers drifted:", *_iter_lines(drifts), sep="\n")
        return 1
    print(f"every number of {args.file} is within its tolerance")
    return 0


if __name__ == "__main__":  # pragma: no cover - the command line
    raise SystemExit(main())
