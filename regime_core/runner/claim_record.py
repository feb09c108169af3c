"""A claim on a record: our side of a claim read from a results record, both sides in words, and
the verdict by the claim's rule (:mod:`regime_core.runner.judge`).

:func:`claim_values` reads ours from a record (:mod:`regime_core.runner.records`);
:func:`judge_values` judges them with the kernel of the claim's kind; :func:`paper_text` and
:func:`values_text` say the two sides in words; :func:`fill_fields` fills a claim's
``computed_on`` text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from regime_core import config
from regime_core.paper import Claim
from regime_core.runner.judge import (
    COMPARISON_KERNELS,
    COMPARISON_RULES,
    SMALLEST_EFFECT,
    Judgement,
    duration_text,
    interval_text,
    judge_bound,
    judge_holds,
    judge_level,
    judge_parts,
    judge_share,
    judge_untestable,
    power_of,
    pp,
)
from regime_core.runner.records import Record, format_number


def reference_effect(claim: Claim) -> float:
    """The effect a claim's power is judged at: the paper's value (an estimate), the end of its
    range nearer zero, :data:`SMALLEST_EFFECT` (an implied gain), or zero (no-loss and
    invariance claims, whose null is the margin: the true difference assumed is none)."""
    paper = claim.paper
    if claim.rule == "estimate":
        return float(paper["value"])
    if claim.rule == "range":
        low, high = float(paper["low"]), float(paper["high"])
        return low if abs(low) <= abs(high) else high
    if claim.rule == "positive":
        return SMALLEST_EFFECT
    return 0.0


def _number(record: Record, key: str) -> float:
    value = record.number(key)
    if isinstance(value, str):
        raise ValueError(f"record {record.name!r}: {key!r} is the text {value!r}, not a number")
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
        return f"under {duration_text(float(paper['bound']), str(paper.get('unit', 's')))}"
    if claim.rule == "range":
        text = f"{pp(paper['low'])} to {pp(paper['high'])}"
    else:
        prefix = "≈ " if paper.get("approximate") else ""
        text = prefix + pp(paper["value"])
    significance = claim.p_text()
    return f"{text}, {significance}" if significance else text


_COMPARISON_KEYS: tuple[str, ...] = ("estimate", "ci_lo", "ci_hi")
_OPTIONAL_KEYS: tuple[str, ...] = ("p", "n", "n_discordant")


def _comparison_values(record: Record, keys: Mapping[str, Any]) -> dict[str, Any]:
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


def _level_values(record: Record, keys: Mapping[str, Any]) -> dict[str, Any]:
    """A level (a hit rate) with its exact Clopper–Pearson interval at the book's confidence,
    from the rate and its number of questions (the hits are ``round(rate · n)``)."""
    from scipy.stats import binomtest

    rate, n = _number(record, keys["estimate"]), int(_number(record, keys["n"]))
    if n <= 0:
        raise ValueError(f"record {record.name!r}: {keys['n']!r} is {n}, not a count")
    ci = binomtest(round(rate * n), n).proportion_ci(config.CONFIDENCE, method="exact")
    return {"estimate": rate, "ci_lo": float(ci.low), "ci_hi": float(ci.high), "n": n}


def claim_values(claim: Claim, record: Record) -> dict[str, Any]:
    """Our side of ``claim`` as plain values read from ``record`` (the run ``claim.run``):
    ``estimate, ci_lo, ci_hi, p, n, n_discordant`` (comparison kinds; with ``parts``, one such
    mapping per part under ``parts``), ``parts`` of ``estimate, ci_lo, ci_hi, n`` (level),
    ``estimate`` (bound), ``passing, total, direction`` (share), ``holds, parts`` (holds) or
    the context numbers (untestable). Absent optional keys are ``None``.

    Raises ``KeyError`` (with the nearest keys) when the record lacks a key the claim names.
    """
    ours = claim.ours
    if claim.rule == "level" or (claim.rule in COMPARISON_RULES and "parts" in ours):
        read = _level_values if claim.rule == "level" else _comparison_values
        return {"parts": {str(label): read(record, keys) for label, keys in ours["parts"].items()}}
    if claim.rule in COMPARISON_RULES:
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
        return {name: record.number(key) for name, key in ours.items()}
    return {
        "holds": bool(record.number(ours["holds"])),
        "parts": {
            str(label): bool(record.number(key)) for label, key in (ours.get("parts") or {}).items()
        },
    }


def _judge_one(claim: Claim, values: Mapping[str, Any], paper_value: Any = None) -> Judgement:
    estimate, lo, hi = (float(values[k]) for k in _COMPARISON_KEYS)
    if claim.rule == "level":
        return judge_level(float(paper_value), estimate=estimate, ci_lo=lo, ci_hi=hi)
    kernel, fields = COMPARISON_KERNELS[claim.rule]
    paper = (float(claim.paper[f]) for f in fields)
    judged = kernel(*paper, estimate=estimate, ci_lo=lo, ci_hi=hi)
    power = power_of(
        claim.rule,
        reference_effect(claim),
        n=values.get("n"),
        n_discordant=values.get("n_discordant"),
        ci_lo=lo,
        ci_hi=hi,
    )
    return Judgement(judged.verdict, judged.reason, judged.flags, power)


def judge_values(claim: Claim, values: Mapping[str, Any]) -> Judgement:
    """The verdict of ``claim`` (its rule, the paper's side) for our ``values`` (as
    :func:`claim_values` returns them), with its power; pure. The robustness chapter calls it
    once per reading. A statement of ours reads as one (:meth:`Judgement.as_ours`)."""
    judged = _judge_by_rule(claim, values)
    return judged.as_ours() if claim.ours_only else judged


def _judge_by_rule(claim: Claim, values: Mapping[str, Any]) -> Judgement:
    paper = claim.paper
    if claim.rule in (*COMPARISON_RULES, "level"):
        if "parts" in values:
            levels = paper.get("levels", {})
            parts = {
                label: _judge_one(claim, part, levels.get(label))
                for label, part in values["parts"].items()
            }
            return judge_parts(parts)
        return _judge_one(claim, values)
    if claim.rule == "bound":
        return judge_bound(
            float(paper["bound"]), estimate=float(values["estimate"]), unit=paper.get("unit", "s")
        )
    if claim.rule == "share":
        return judge_share(
            int(paper["passing"]),
            int(paper["total"]),
            passing=values["passing"],
            total=values["total"],
            direction_passing=values.get("direction"),
        )
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
                f"{label} {pp(v['estimate'])} ({interval_text(v['ci_lo'], v['ci_hi'])})"
                for label, v in values["parts"].items()
            )
        interval = interval_text(values["ci_lo"], values["ci_hi"])
        text = f"{pp(values['estimate'])} ({level}% CI {interval})"
        if values.get("p") is not None:
            text += f", {format_number(values['p'], 'p')}"
        return text
    if claim.rule == "level":
        return ", ".join(
            f"{label} {format_number(v['estimate'], 'frac')}"
            for label, v in values["parts"].items()
        )
    if claim.rule == "bound":
        return duration_text(float(values["estimate"]), str(claim.paper.get("unit", "s")))
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


_PLACEHOLDER = re.compile(r"\{(config|numbers)\.([A-Za-z0-9_.@-]+)(?:\|([a-z0-9]+))?\}")


def fill_fields(
    template: str, record: Record, display: Callable[[str, Any], str] | None = None
) -> str:
    """Fill ``{config.field}`` and ``{numbers.dotted.key}`` in a claim's ``computed_on`` text.

    Lists are joined with commas; a ``None`` config value (e.g. ``sample_size``) reads "all".
    A number may name its format after a bar, ``{numbers.key|pp}`` (a kind of
    :func:`~regime_core.runner.records.format_number`).
    ``display(field, value)`` turns each config value into text (the book passes its display
    names, so a reader sees "MiniLM-L6", not ``minilm``); by default ``str``, as
    ``regime verdicts --json`` prints it.

    >>> record = Record({"config": {"encoders": ["minilm", "tfidf"], "sample_size": None},
    ...                  "numbers": {"gain": 0.0928}})
    >>> fill_fields("{config.encoders}, sample {config.sample_size}", record)
    'minilm, tfidf, sample all'
    >>> fill_fields("{config.encoders}", record, display=lambda field, value: value.upper())
    'MINILM, TFIDF'
    >>> fill_fields("gold: {numbers.gain|pp}", record)
    'gold: +9.3 pp'
    """

    def replace(match: re.Match[str]) -> str:
        source, key, kind = match.group(1), match.group(2), match.group(3)
        if source == "numbers":
            return format_number(record.number(key), kind or "auto")
        return record.config_text(key, display)

    return _PLACEHOLDER.sub(replace, template)
