"""The verdict rules and their pure kernels: the paper's value and our interval in, a verdict out.

A claim (:class:`regime_core.paper.Claim`, from ``paper_claims.yml``) states the paper's side;
:mod:`regime_core.runner.claim_record` reads ours from a results record and calls the kernel of
the claim's kind (:data:`VERDICT_RULES`), with the power of our comparison where the record has
what it needs (:func:`power_of`).

Every rule reads our *interval* only. For paired binary outcomes the interval is Tango's score
interval of the difference of hit rates (:func:`regime_core.stats.score_interval`), which
excludes zero exactly when the asymptotic McNemar p is below :data:`SIGNIFICANCE_LEVEL`; a
Holm-adjusted comparison carries its Holm-level interval. So no verdict can contradict the
p-value printed beside it. The kernels trust what they are given: the paper's side was checked
when the claims were read (:func:`regime_core.paper.load_claims`: a non-zero estimate, a range
of one sign, a share of whole cells) and our interval when it was made
(:class:`regime_core.runner.ours.Comparison`).

>>> judge_estimate(0.056, estimate=0.05, ci_lo=0.02, ci_hi=0.08).verdict
'reproduced'
>>> judge_estimate(0.056, estimate=0.02, ci_lo=0.005, ci_hi=0.04).verdict
'smaller than reported'
>>> judge_estimate(0.056, estimate=0.02, ci_lo=-0.01, ci_hi=0.06).verdict
'inconclusive (too few questions)'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from regime_core import config
from regime_core.runner.ours import Comparison
from regime_core.runner.wording import duration_text, format_number, interval_text, pp

REPRODUCED = "reproduced"
SMALLER, LARGER = "smaller than reported", "larger than reported"
DIRECTION_ONLY = "direction only"
INCONCLUSIVE = "inconclusive (too few questions)"
NOT_REPRODUCED = "not reproduced"
NOT_TESTABLE = "not testable here"
VERDICTS: tuple[str, ...] = (
    REPRODUCED, SMALLER, LARGER, DIRECTION_ONLY, INCONCLUSIVE, NOT_REPRODUCED, NOT_TESTABLE,
)  # fmt: skip
#: A statement of ours (``origin: ours``) has nothing to reproduce: its verdict reads in these
#: words (the rule is the same).
OURS_WORDS: dict[str, str] = {
    REPRODUCED: "holds",
    DIRECTION_ONLY: "holds in part",
    INCONCLUSIVE: "inconclusive",
    NOT_REPRODUCED: "does not hold",
}
#: A flag beside a verdict.
#: Our interval overlaps the paper's range although our estimate lies outside it (the verdict
#: says which side; the flag says the data cannot exclude the range).
CONSISTENT_WITH = "consistent with the paper's range"
SIGNIFICANCE_LEVEL: float = round(1.0 - config.CONFIDENCE, 10)
"""a p-value below it is significant, for the paper and for us alike; one minus CONFIDENCE"""
SMALLEST_EFFECT: float = 0.01
"""the smallest difference of hit@5 treated as a real effect (one percentage point): the
margin of the no-loss and invariance rules, and the gain an implied "> 0" claim must be able to
reach
"""
#: How the power beside a verdict is computed, in words (each :class:`Power`'s ``method``).
POWER_METHOD = (
    "exact power of the verdict's own interval (Tango's score interval) against the claim's own "
    "null: zero for an effect, minus the margin for no loss, plus or minus the margin for "
    "equivalence; the questions fall into the cells of a paired table by a multinomial draw, so "
    "the number of discordant questions varies. The share of discordant questions is a nuisance "
    "the power depends on: the figures take our observed share raised to the effect where the "
    "effect needs more (every discordant question then goes one way, the most favourable case, "
    "so the questions needed are a lower bound) and, beside it, the effect added to our observed "
    "share (power.power); the detectable effect is the smallest distance from the null reaching "
    "80% power. A verdict one question from another says so: one more win for either arm "
    "re-judged from the counts"
)

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


# --- verdicts (pure) -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Power:
    """The power of one paired comparison against its claim's null (:func:`power_of`,
    :data:`POWER_METHOD`; ``side``: one of :data:`regime_core.power.SIDES`).
    ``questions_needed`` is None beyond the search or with nothing to detect;
    ``excludes_reference`` None for a claim other than an estimate or a range."""

    n: int
    discordance: float
    null: float
    side: str
    reference_effect: float
    power: float
    detectable_effect: float | None
    questions_needed: int | None
    excludes_reference: bool | None
    method: str = POWER_METHOD
    #: whether our interval already excludes the claim's null (the verdict is decided: no
    #: questions-needed figure is given beside it)
    decided: bool = False
    #: the discordance the favourable figures use: ``max(observed, abs(effect))``
    favourable_discordance: float | None = None
    #: the questions the effect needs with the effect added to our observed discordance
    questions_needed_observed: int | None = None
    #: the verdict one more win for either arm would give, where it differs ("" otherwise)
    knife_edge: str = ""

    def to_dict(self) -> dict[str, Any]:
        """What ``regime verdicts --json`` prints, its fields in this order."""
        return asdict(self)


@dataclass(frozen=True)
class Judgement:
    """A verdict (one of :data:`VERDICTS`), the reason in one plain sentence, flags beside the
    verdict (:data:`CONSISTENT_WITH`), the power of our comparison (:func:`power_of`) and, for a
    claim judged part by part, each part's judgement."""

    verdict: str
    reason: str
    flags: tuple[str, ...] = ()
    power: Power | None = None
    parts: Mapping[str, Judgement] = field(default_factory=dict)
    #: a statement of ours, not the paper's: its verdict reads in :data:`OURS_WORDS`
    ours: bool = False
    #: what the verdict's words add in their brackets, e.g. why it is inconclusive
    #: ("n = 12 below 30 in every Q-dominant cell")
    detail: str = ""

    @property
    def plain_words(self) -> str:
        """The verdict in a reader's words (:data:`OURS_WORDS` for a statement of ours), without
        its ``detail``: what two judgements of one claim are compared by."""
        return OURS_WORDS.get(self.verdict, self.verdict) if self.ours else self.verdict

    @property
    def words(self) -> str:
        """:attr:`plain_words` with the ``detail`` inside its brackets: "inconclusive (too few
        questions: n = 12 below 30 in every Q-dominant cell)"."""
        words = self.plain_words
        if not self.detail:
            return words
        return (
            f"{words[:-1]}: {self.detail})" if words.endswith(")") else f"{words} ({self.detail})"
        )

    @property
    def label(self) -> str:
        """The verdict's words with its flags, e.g. ``smaller than reported (consistent with
        ...)``."""
        return self.words + "".join(f" ({flag})" for flag in self.flags)

    @property
    def short_label(self) -> str:
        """:attr:`label` without the detail: what a chart row has room for."""
        return self.plain_words + "".join(f" ({flag})" for flag in self.flags)

    def as_ours(self) -> Judgement:
        """The same judgement (and parts) read as a statement of ours."""
        parts = {k: j.as_ours() for k, j in self.parts.items()}
        return Judgement(
            self.verdict, self.reason, self.flags, self.power, parts, ours=True, detail=self.detail
        )


def judge_estimate(paper_value: float, *, estimate: float, ci_lo: float, ci_hi: float) -> Judgement:
    """The ``estimate`` rule of :data:`VERDICT_RULES` (``paper_value`` non-zero).

    >>> judge_estimate(0.046, estimate=0.002, ci_lo=-0.006, ci_hi=0.011).verdict
    'not reproduced'
    >>> judge_estimate(0.056, estimate=0.09, ci_lo=0.07, ci_hi=0.11).verdict
    'larger than reported'
    """
    ours = f"our interval ({interval_text(ci_lo, ci_hi)})"
    holds_value = ci_lo <= paper_value <= ci_hi
    holds_zero = ci_lo <= 0.0 <= ci_hi
    paper = pp(paper_value)
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
    ours = f"our estimate {pp(estimate)} (interval {interval_text(ci_lo, ci_hi)})"
    paper = f"the paper's {interval_text(low, high)}"
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
    ours = f"our interval ({interval_text(ci_lo, ci_hi)})"
    if ci_lo > 0:
        return Judgement(REPRODUCED, f"{ours} lies above zero")
    if ci_hi < 0 or (ci_hi == 0 and ci_lo < 0):
        return Judgement(NOT_REPRODUCED, f"{ours} lies at or below zero")
    if ci_hi < SMALLEST_EFFECT:
        return Judgement(
            NOT_REPRODUCED,
            f"{ours} lies below {pp(SMALLEST_EFFECT)}: at most a negligible gain",
        )
    return Judgement(INCONCLUSIVE, f"{ours} holds both zero and gains above {pp(SMALLEST_EFFECT)}")


def judge_no_loss(*, estimate: float, ci_lo: float, ci_hi: float) -> Judgement:
    """The ``no_loss`` rule of :data:`VERDICT_RULES` (non-inferiority, margin
    :data:`SMALLEST_EFFECT`).

    >>> judge_no_loss(estimate=0.027, ci_lo=0.008, ci_hi=0.047).verdict
    'reproduced'
    >>> judge_no_loss(estimate=-0.02, ci_lo=-0.04, ci_hi=0.001).verdict
    'inconclusive (too few questions)'
    """
    ours = f"our interval ({interval_text(ci_lo, ci_hi)})"
    margin = pp(-SMALLEST_EFFECT)
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
    ours = f"our interval ({interval_text(ci_lo, ci_hi)})"
    band = f"±{100 * SMALLEST_EFFECT:.1f} pp"
    if ci_lo > -SMALLEST_EFFECT and ci_hi < SMALLEST_EFFECT:
        return Judgement(REPRODUCED, f"{ours} lies within {band}")
    if ci_hi <= -SMALLEST_EFFECT or ci_lo >= SMALLEST_EFFECT:
        return Judgement(NOT_REPRODUCED, f"{ours} lies outside {band}: the number changes")
    return Judgement(INCONCLUSIVE, f"{ours} reaches outside {band}")


#: The kernel of each kind judged on a paired comparison of our records (estimate, interval,
#: n), and the fields of the paper's side it takes before our values.
COMPARISON_KERNELS: dict[str, tuple[Callable[..., Judgement], tuple[str, ...]]] = {
    "estimate": (judge_estimate, ("value",)),
    "range": (judge_range, ("low", "high")),
    "positive": (judge_positive, ()),
    "no_loss": (judge_no_loss, ()),
    "equivalence": (judge_equivalence, ()),
}
#: The kinds judged on a paired comparison of our records (estimate, interval, n).
COMPARISON_RULES: tuple[str, ...] = tuple(COMPARISON_KERNELS)


def judge_level(paper_value: float, *, estimate: float, ci_lo: float, ci_hi: float) -> Judgement:
    """One level of the ``level`` rule: the paper's level inside our interval, or which side.

    >>> judge_level(0.842, estimate=0.70, ci_lo=0.66, ci_hi=0.74).verdict
    'smaller than reported'
    """
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
    ours, paper = duration_text(estimate, unit), duration_text(bound, unit)
    if estimate < bound:
        return Judgement(REPRODUCED, f"ours, {ours}, lies under the paper's {paper}")
    return Judgement(NOT_REPRODUCED, f"ours, {ours}, is not under the paper's {paper}")


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


def judge_holds(
    holds: bool,
    parts: Mapping[str, bool] | None = None,
    too_few: Mapping[str, str] | None = None,
) -> Judgement:
    """The ``holds`` rule of :data:`VERDICT_RULES`; ``parts`` maps a label to its own verdict,
    ``too_few`` a label to why its cells are too small to decide ("" when they are not): a
    statement that does not hold where a part it fails on was too small to decide is
    inconclusive, saying why, never "not reproduced".

    >>> judge_holds(False, {"MiniLM": True, "TF-IDF": False}).reason
    'it does not hold as a whole; it holds for MiniLM, not for TF-IDF'
    >>> judge_holds(False, {"MiniLM": False}, {"MiniLM": "n = 12 below 30"}).words
    'inconclusive (too few questions: MiniLM: n = 12 below 30)'
    """
    parts = dict(parts or {})
    yes = [k for k, v in parts.items() if v]
    no = [k for k, v in parts.items() if not v]
    detail = ([f"it holds for {', '.join(yes)}"] if yes else []) + (
        [f"not for {', '.join(no)}"] if no else []
    )
    head = "it holds" if holds else "it does not hold as a whole"
    reason = f"{head}; {', '.join(detail)}" if detail else head
    if holds:
        return Judgement(REPRODUCED, reason)
    undecided = {k: why for k, why in (too_few or {}).items() if why and not parts.get(k, False)}
    if undecided:
        why_undecided = "; ".join(f"{k}: {why}" for k, why in undecided.items())
        return Judgement(
            INCONCLUSIVE, f"{reason}; too few questions to decide it", detail=why_undecided
        )
    if yes:
        return Judgement(DIRECTION_ONLY, reason)
    return Judgement(NOT_REPRODUCED, reason)


def judge_untestable(why: str, context: Mapping[str, Any]) -> Judgement:
    """The ``untestable`` rule of :data:`VERDICT_RULES`: ``why`` with our ``context`` numbers.

    >>> judge_untestable("ours is {n} of {m}", {"n": 212, "m": 1657}).reason
    'ours is 212 of 1,657'
    """
    return Judgement(NOT_TESTABLE, why.format(**{k: format_number(v) for k, v in context.items()}))


def judge_parts(parts: Mapping[str, Judgement]) -> Judgement:
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


# --- power ---------------------------------------------------------------------------------------


#: Per kind of claim: the null our interval must exclude, and on which side (power.SIDES).
_POWER_NULLS: dict[str, tuple[float, str]] = {
    "estimate": (0.0, "greater"),
    "range": (0.0, "greater"),
    "positive": (0.0, "greater"),
    "no_loss": (-SMALLEST_EFFECT, "greater"),
    "equivalence": (SMALLEST_EFFECT, "within"),
}


def power_of(rule: str, effect: float, ours: Comparison) -> Power | None:
    """The power of one paired comparison (``ours``) judged by ``rule``, as :data:`POWER_METHOD`
    says, at ``effect`` (:func:`regime_core.runner.claim_record.reference_effect`). ``None``
    without ``n`` and ``n_discordant``, or for a rule with no null.

    >>> p = power_of("estimate", 0.056, Comparison(0.06, 0.03, 0.09, n=657, n_discordant=62))
    >>> round(p.detectable_effect, 3), p.questions_needed, round(p.power, 2)
    (0.033, 214, 1.0)
    """
    from regime_core.power import detectable_effect, power, questions_needed, smallest_margin

    n, n_discordant = ours.n, ours.n_discordant
    if n is None or n_discordant is None or rule not in _POWER_NULLS:
        return None
    null, side = _POWER_NULLS[rule]
    alternative = abs(float(effect)) if null == 0.0 else 0.0
    discordance = n_discordant / n
    excludes = None
    if rule in ("estimate", "range"):
        excludes = not ours.ci_lo <= effect <= ours.ci_hi  # the paper's own value, not a margin
    if side == "within":
        decided = (ours.ci_lo > -null and ours.ci_hi < null) or ours.ci_hi <= -null
        decided = decided or ours.ci_lo >= null
    else:
        decided = ours.ci_lo > null or ours.ci_hi < null
    observed_needed = None
    if not decided and alternative != 0.0:
        observed_needed = questions_needed(
            alternative, min(1.0, discordance + abs(alternative)), null=null, side=side
        )
    return Power(
        n=int(n),
        discordance=discordance,
        null=null,
        side=side,
        reference_effect=float(effect),
        power=power(n, discordance, alternative, null=null, side=side),
        detectable_effect=(
            detectable_effect(n, discordance)
            if null == 0.0
            else smallest_margin(n, discordance, side=side)
        ),
        questions_needed=questions_needed(alternative, discordance, null=null, side=side),
        excludes_reference=excludes,
        decided=bool(decided),
        favourable_discordance=max(discordance, abs(alternative)),
        questions_needed_observed=observed_needed,
    )


def power_text(power: Power | None) -> str:
    """The power in words (for a no-loss or equivalence claim, the smallest margin it can show;
    where our interval already excludes the paper's value, that instead); the questions needed
    only for a verdict not yet decided, and the knife edge where there is one.

    >>> text = power_text(Power(n=485, discordance=0.01, null=0.0, side="greater",
    ...     reference_effect=0.046, power=1.0, detectable_effect=0.016, questions_needed=171,
    ...     excludes_reference=True))
    >>> text.startswith("our interval already excludes the paper's +4.6 pp"), text[-30:]
    (True, 'detects +1.6 pp with 80% power')
    """
    if power is None:
        return ""
    text = _power_words(power)
    return f"{text}; {power.knife_edge}" if power.knife_edge else text


def _needed(power: Power, what: str) -> str:
    """``<what> needs N questions if ... (a lower bound), M if ...``."""
    favourable = power.favourable_discordance
    if favourable is None:
        favourable = max(power.discordance, abs(power.reference_effect))
    searched = f"more than {format_number(200_000, 'int')}"

    def count(n: int | None) -> str:
        return searched if n is None else format_number(n, "int")

    text = (
        f"{what} needs {count(power.questions_needed)} questions if "
        f"{format_number(favourable, 'pct')} of them differ between the two (the most "
        "favourable case: a lower bound)"
    )
    if power.questions_needed_observed is not None or power.questions_needed is not None:
        observed = format_number(power.discordance, "pct")
        text += f", {count(power.questions_needed_observed)} if our observed {observed} differ"
        text += " besides the effect"
    return text


def _power_words(power: Power) -> str:
    mde = power.detectable_effect
    ref = pp(power.reference_effect)
    null, side = power.null, power.side
    if side == "within":
        head = (
            f"a true difference of zero is shown within ±{pp(mde).lstrip('+')} with 80% power"
            if mde is not None
            else "no margin is shown with 80% power"
        )
        if power.decided:
            return head
        return f"{head}; {_needed(power, f'within ±{pp(null).lstrip(chr(43))}')}"
    if null != 0.0:
        head = (
            f"if the true difference is zero, it rules out a loss of {pp(mde).lstrip('+')} or "
            "more with 80% power"
            if mde is not None
            else "no loss is ruled out with 80% power"
        )
        if power.decided:
            return head
        return f"{head}; {_needed(power, f'ruling out a loss of {pp(-null).lstrip(chr(43))}')}"
    detects = (
        f"the test detects {pp(mde)} with 80% power"
        if mde is not None
        else "no effect reaches 80% power"
    )
    if power.excludes_reference:
        return (
            f"our interval already excludes the paper's {ref}, so the data tell the two apart; "
            f"{detects}"
        )
    if power.decided:
        return f"{detects}; our interval already excludes zero"
    return f"{detects}; {_needed(power, ref)}"
