"""A claim on a record: our side of a claim read from a results record, both sides in words, and
the verdict by the claim's rule (:mod:`regime_core.runner.judge`).

:func:`claim_values` reads ours from a record (:mod:`regime_core.runner.records`) as one typed
value (:mod:`regime_core.runner.ours`, which says it in words); :func:`judge_values` judges it
with the kernel of the claim's kind; :func:`paper_text` says the paper's side in words;
:func:`fill_fields` fills a claim's ``computed_on`` text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from regime_core.inputs.claims_file import DOTTED_KEY_RE
from regime_core.multiplicity import family_confidences
from regime_core.paper import Claim, Role
from regime_core.runner.judge import (
    COMPARISON_KERNELS,
    COMPARISON_RULES,
    INCONCLUSIVE,
    SIGNIFICANCE_LEVEL,
    SMALLEST_EFFECT,
    Judgement,
    Power,
    judge_bound,
    judge_holds,
    judge_level,
    judge_parts,
    judge_share,
    judge_untestable,
    power_of,
)
from regime_core.runner.ours import (
    Bound,
    Comparison,
    Holds,
    Level,
    Levels,
    Ours,
    Parts,
    Share,
    Untestable,
)
from regime_core.runner.records import Record
from regime_core.runner.wording import duration_text, format_number, pp


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
        raise ValueError(f"{key!r} is the text {value!r}, not a number")
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


def _comparison(record: Record, keys: Mapping[str, Any]) -> Comparison:
    """Estimate, interval and the optional ``p``, ``n`` and ``n_discordant`` (named directly,
    or as the sum of ``n_a_better`` and ``n_b_better``, the counts a comparison records)."""
    estimate, lo, hi = (_number(record, keys[k]) for k in ("estimate", "ci_lo", "ci_hi"))
    p = _number(record, keys["p"]) if "p" in keys else None
    n = int(_number(record, keys["n"])) if "n" in keys else None
    discordant = int(_number(record, keys["n_discordant"])) if "n_discordant" in keys else None
    wins = _wins(record, keys)
    if discordant is None and wins is not None:
        discordant = sum(wins)
    found = Comparison(estimate, lo, hi, p, n, discordant, wins=wins)
    if str(keys.get("p", "")).endswith(".p_holm"):
        return _holm_comparison(record, keys, found)
    return found


def _wins(record: Record, keys: Mapping[str, Any]) -> tuple[int, int] | None:
    """The questions won by each arm: named by the claim, else beside its ``ci_lo``."""
    if "n_a_better" in keys and "n_b_better" in keys:
        return int(_number(record, keys["n_a_better"])), int(_number(record, keys["n_b_better"]))
    node = str(keys["ci_lo"]).rsplit(".", 1)[0]
    if record.has(f"{node}.n_a_better") and record.has(f"{node}.n_b_better"):
        return (
            int(_number(record, f"{node}.n_a_better")),
            int(_number(record, f"{node}.n_b_better")),
        )
    return None


def holm_level_of(record: Record, keys: Mapping[str, Any]) -> float | None:
    """The level at which its run's Holm family tested the comparison of a claim's ``keys``,
    from the unadjusted p the record keeps for every member (every node holding ``p_holm``
    under the same top-level key, :func:`regime_core.multiplicity.family_confidences`); None
    when the record does not say."""
    node = str(keys["ci_lo"]).rsplit(".", 1)[0]
    top, _, rest = node.partition(".")
    confidence = family_confidences(record.node(top), SIGNIFICANCE_LEVEL).get(rest)
    return None if confidence is None else 1.0 - confidence


def _holm_comparison(record: Record, keys: Mapping[str, Any], found: Comparison) -> Comparison:
    """A comparison whose p is Holm-adjusted within its run: its interval is the one at the
    level Holm tested it (:func:`holm_level_of`), with the book's own beside it where the
    record keeps it (``ci_lo_unadjusted``, ``ci_hi_unadjusted``)."""
    level = holm_level_of(record, keys)
    node = str(keys["ci_lo"]).rsplit(".", 1)[0]
    nominal = None
    if record.has(f"{node}.ci_lo_unadjusted") and record.has(f"{node}.ci_hi_unadjusted"):
        nominal = (
            _number(record, f"{node}.ci_lo_unadjusted"),
            _number(record, f"{node}.ci_hi_unadjusted"),
        )
    confidence = found.confidence if level is None else 1.0 - level
    return replace(found, confidence=confidence, holm=True, ci_nominal=nominal)


def _level(record: Record, keys: Mapping[str, Any]) -> Level:
    """A level (a hit rate) from the rate and its number of questions."""
    rate, n = _number(record, keys["estimate"]), int(_number(record, keys["n"]))
    if n <= 0:
        raise ValueError(f"{keys['n']!r} is {n}, not a count")
    return Level.of_rate(rate, n)


def claim_values(claim: Claim, record: Record) -> Ours:
    """Our side of ``claim`` read from ``record`` (the run ``claim.run``), typed by its kind
    (:mod:`regime_core.runner.ours`); ``ValueError`` naming the record, the claim and the key
    for a value that is none (a text for a number, an interval upside down), ``KeyError`` (with
    the nearest keys) for a key the record lacks."""
    ours = claim.ours
    try:
        if claim.rule == "level":
            return Levels(
                {str(label): _level(record, keys) for label, keys in ours["parts"].items()}
            )
        if claim.rule in COMPARISON_RULES and "parts" in ours:
            return Parts({str(k): _comparison(record, keys) for k, keys in ours["parts"].items()})
        if claim.rule in COMPARISON_RULES:
            return _comparison(record, ours)
        if claim.rule == "bound":
            return Bound(_number(record, ours["estimate"]), str(claim.paper.get("unit", "s")))
        if claim.rule == "share":
            passing, total = (int(_number(record, ours[k])) for k in ("passing", "total"))
            direction = int(_number(record, ours["direction"])) if "direction" in ours else None
            return Share(passing, total, direction)
    except ValueError as err:
        where = record.file or f"record {record.name!r}"
        raise ValueError(f"{where}: claim {claim.id!r}: {err}") from None
    if claim.rule == "untestable":
        return Untestable({name: record.number(key) for name, key in ours.items()})
    return Holds(
        bool(record.number(ours["holds"])),
        {str(label): bool(record.number(key)) for label, key in (ours.get("parts") or {}).items()},
        {
            str(label): str(record.number(key))
            for label, key in (ours.get("too_few") or {}).items()
            if record.has(key)  # a record from before the field: no excuse to read
        },
    )


def _judge_comparison(claim: Claim, ours: Comparison) -> Judgement:
    kernel, fields = COMPARISON_KERNELS[claim.rule]
    paper = [float(claim.paper[f]) for f in fields]
    judged = kernel(*paper, estimate=ours.estimate, ci_lo=ours.ci_lo, ci_hi=ours.ci_hi)
    power = power_of(claim.rule, reference_effect(claim), ours)
    if power is not None:
        power = replace(power, knife_edge=_knife_edge(claim, ours, judged.verdict, paper))
    return replace(judged, power=power, detail=too_few_detail(judged.verdict, power))


def _knife_edge(claim: Claim, ours: Comparison, verdict: str, paper: list[float]) -> str:
    """``a knife edge: one more win for the first-named arm would make it inconclusive``, when
    one more question won by either arm (taken from the concordant ones) changes the verdict;
    re-judged from the counts with the book's interval at the comparison's level. ``""``
    otherwise, or without counts."""
    from regime_core.config import CONTINUITY_CORRECTION
    from regime_core.runner.judge import OURS_WORDS
    from regime_core.stats import score_interval

    if ours.wins is None or ours.n is None:
        return ""
    kernel, _ = COMPARISON_KERNELS[claim.rule]
    (b, c), n = ours.wins, ours.n
    found = []
    for arm, (bb, cc) in (("first", (b + 1, c)), ("second", (b, c + 1))):
        if bb + cc > n:
            continue
        lo, hi = score_interval(bb, cc, n, confidence=ours.confidence,
                                continuity=CONTINUITY_CORRECTION)  # fmt: skip
        estimate = ours.estimate + ((bb - b) - (cc - c)) / n
        other = kernel(*paper, estimate=estimate, ci_lo=min(float(lo), estimate),
                       ci_hi=max(float(hi), estimate)).verdict  # fmt: skip
        if other != verdict:
            words = OURS_WORDS.get(other, other) if claim.ours_only else other
            found.append(f"one more win for the {arm}-named arm would make it {words}")
    return f"a knife edge: {' and '.join(found)}" if found else ""


def too_few_detail(verdict: str, power: Power | None) -> str:
    """What an inconclusive comparison's words add: its questions against those a test with
    80% power at the claim's effect needs ("" when it has them, or its power is unknown). The
    figure at the favourable discordance is a lower bound, so it reads "at least"; the one with
    the effect added to the observed discordance follows where it is known.

    >>> from regime_core.runner.judge import INCONCLUSIVE, Power
    >>> too_few_detail(INCONCLUSIVE, Power(30, 0.2, 0.0, "above", 0.05, 0.1, 0.2, 1200, None))
    'n = 30, where 80% power needs at least 1,200 questions'
    """
    needed = None if power is None else power.questions_needed
    if verdict != INCONCLUSIVE or power is None or needed is None or power.n >= needed:
        return ""
    observed = power.questions_needed_observed
    at_observed = (
        f" ({observed:,} at the observed discordance)"
        if observed is not None and observed != needed
        else ""
    )
    return f"n = {power.n:,}, where 80% power needs at least {needed:,} questions{at_observed}"


def judge_values(claim: Claim, values: Ours) -> Judgement:
    """The verdict of ``claim`` for our ``values`` (:func:`claim_values`), with its power;
    pure. A statement of ours reads as one (:meth:`Judgement.as_ours`)."""
    judged = _judge_by_rule(claim, values)
    return judged.as_ours() if claim.ours_only else judged


def _judge_by_rule(claim: Claim, values: Ours) -> Judgement:
    paper, rule = claim.paper, claim.rule
    match values:
        case Comparison() if rule in COMPARISON_KERNELS:
            return _judge_comparison(claim, values)
        case Parts() if rule in COMPARISON_KERNELS:
            return judge_parts({k: _judge_comparison(claim, v) for k, v in values.parts.items()})
        case Levels() if rule == "level":
            levels = paper["levels"]
            return judge_parts(
                {
                    label: judge_level(
                        float(levels[label]), estimate=v.estimate, ci_lo=v.ci_lo, ci_hi=v.ci_hi
                    )
                    for label, v in values.parts.items()
                }
            )
        case Bound() if rule == "bound":
            return judge_bound(float(paper["bound"]), estimate=values.estimate, unit=values.unit)
        case Share() if rule == "share":
            return judge_share(
                paper["passing"],
                paper["total"],
                passing=values.passing,
                total=values.total,
                direction_passing=values.direction,
            )
        case Untestable() if rule == "untestable":
            return judge_untestable(str(paper["why"]), values.numbers)
        case Holds() if rule == "holds":
            return judge_holds(values.holds, values.parts, values.too_few)
    raise ValueError(f"claim {claim.id!r}: a {rule!r} claim is not judged on {values!r}")


_PLACEHOLDER = re.compile(rf"\{{(config|numbers|role)\.({DOTTED_KEY_RE})(?:\|([a-z0-9]+))?\}}")


def fill_fields(
    template: str,
    record: Record,
    display: Callable[[str, Any], str] | None = None,
    roles: Mapping[str, Role] | None = None,
) -> str:
    """Fill ``{config.field}``, ``{numbers.dotted.key}`` and ``{role.NAME}`` (the dataset that
    fills the role in ``record``, :mod:`regime_core.runner.roles`; by default the roles of the
    repository's claims file) in a claim's ``computed_on`` text.

    Lists are joined with commas; a ``None`` config value (e.g. ``sample_size``) reads "all".
    A number may name its format after a bar, ``{numbers.key|pp}`` (a kind of
    :func:`~regime_core.runner.wording.format_number`).
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
        if source == "role":
            return _role_text(key, record, display, roles)
        if source == "numbers":
            return format_number(record.number(key), kind or "auto")
        return record.config_text(key, display)

    return _PLACEHOLDER.sub(replace, template)


def _role_text(
    name: str,
    record: Record,
    display: Callable[[str, Any], str] | None,
    roles: Mapping[str, Role] | None,
) -> str:
    """The dataset filling role ``name`` in ``record``, by its display name (the book's, or by
    default :func:`regime_core.book.names.dataset`)."""
    from regime_core.book import names
    from regime_core.paper import load_roles
    from regime_core.runner.roles import filled_datasets

    known = load_roles() if roles is None else roles
    if name not in known:
        raise KeyError(f"{{role.{name}}}: no role {name!r} is declared (roles: {', '.join(known)})")
    dataset = filled_datasets(known, [name], record).get(name)
    if dataset is None:
        raise KeyError(f"record {record.name!r} fills no role {name!r}")
    return display("dataset", dataset) if display is not None else names.dataset(dataset)
