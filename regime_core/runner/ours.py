"""Our side of a claim, typed: one value per kind of claim, made where it enters (read from a
results record by :func:`regime_core.runner.claim_record.claim_values`, or built by the
robustness run), checked there and trusted after: judged
(:func:`~regime_core.runner.claim_record.judge_values`), said in words (``text``) and printed
(``summary``, the ``ours`` of ``regime verdicts --json``).

===============================================  ==============================================
kind of claim (``rule``)                         our side
===============================================  ==============================================
estimate, range, positive, no_loss, equivalence  :class:`Comparison`, or :class:`Parts` of them
level                                            :class:`Levels` (a :class:`Level` per part)
bound                                            :class:`Bound`
share                                            :class:`Share`
holds                                            :class:`Holds`
untestable                                       :class:`Untestable` (our numbers beside it)
===============================================  ==============================================

>>> Comparison(0.066, 0.045, 0.091, p=1e-6, n=657).text()
'+6.6 pp (95% CI +4.5 pp to +9.1 pp), p < 0.001'
>>> Share(3, 10, direction=9).text(), Share(3, 10).summary()["estimate"]
('3 of 10 cells (direction: 9 of 10)', 0.3)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from regime_core import config
from regime_core.runner.records import Scalar
from regime_core.runner.wording import duration_text, format_number, interval_text, pp
from regime_core.vocabulary import interval_label

#: Our side's fields in ``regime verdicts --json`` (absent values are null).
OURS_FIELDS: tuple[str, ...] = ("estimate", "ci_lo", "ci_hi", "p", "n")
#: Our side of an untestable claim that has no number of ours to show.
NO_NUMBER_OF_OURS = "no number of ours"

Summary = dict[str, Scalar | None]


def _summary(**found: Scalar | None) -> Summary:
    return {name: found.get(name) for name in OURS_FIELDS}


@dataclass(frozen=True, slots=True)
class Comparison:
    """A paired comparison: the estimate (a difference of hit rates), its interval, and where
    the record has them its p-value, its questions and how many of them differ between the two
    arms (what its power needs)."""

    estimate: float
    ci_lo: float
    ci_hi: float
    p: float | None = None
    n: int | None = None
    n_discordant: int | None = None
    #: the interval's confidence: the book's, or for a Holm-level interval the level Holm tested
    #: the comparison at (``holm``), with the book's own interval beside it (``ci_nominal``)
    confidence: float = config.CONFIDENCE
    holm: bool = False
    ci_nominal: tuple[float, float] | None = None
    #: the questions won by each arm (``n_a_better``, ``n_b_better``) where the record keeps
    #: them: what a knife-edge verdict is re-judged from
    wins: tuple[int, int] | None = None

    def __post_init__(self) -> None:
        if not self.ci_lo <= self.ci_hi:
            raise ValueError(f"ci_lo {self.ci_lo} > ci_hi {self.ci_hi}")
        n, discordant = self.n, self.n_discordant
        if n is not None and discordant is not None and (n <= 0 or not 0 <= discordant <= n):
            raise ValueError(f"n_discordant {discordant} of n {n} questions is not a share")

    def text(self) -> str:
        """``+6.6 pp (95% CI +4.5 pp to +9.1 pp), p < 0.001``; a Holm-level interval says so,
        with its level and the 95% CI beside it, and its p is Holm's."""
        label = interval_label(self.confidence, holm=self.holm)
        inside = f"{label} {interval_text(self.ci_lo, self.ci_hi)}"
        if self.ci_nominal is not None:
            inside += f"; {interval_label(config.CONFIDENCE)} {interval_text(*self.ci_nominal)}"
        text = f"{pp(self.estimate)} ({inside})"
        if self.p is None:
            return text
        p_text = format_number(self.p, "p")
        return f"{text}, Holm {p_text}" if self.holm else f"{text}, {p_text}"

    def summary(self) -> Summary:
        return _summary(
            estimate=self.estimate, ci_lo=self.ci_lo, ci_hi=self.ci_hi, p=self.p, n=self.n
        )


@dataclass(frozen=True, slots=True)
class Parts:
    """A comparison claim judged part by part (a dataset, an encoder each)."""

    parts: Mapping[str, Comparison]

    def text(self) -> str:
        return "; ".join(
            f"{label} {pp(c.estimate)} ({interval_text(c.ci_lo, c.ci_hi)})"
            for label, c in self.parts.items()
        )

    def summary(self) -> Summary:
        return _summary()


@dataclass(frozen=True, slots=True)
class Level:
    """A level (a hit rate) of ``n`` questions with its exact (Clopper–Pearson) interval."""

    estimate: float
    ci_lo: float
    ci_hi: float
    n: int

    @classmethod
    def of_rate(cls, rate: float, n: int) -> Level:
        """The level ``rate`` of ``n`` questions (``n`` > 0; the hits are ``round(rate · n)``)
        with its interval at the book's confidence."""
        from scipy.stats import binomtest

        ci = binomtest(round(rate * n), n).proportion_ci(config.CONFIDENCE, method="exact")
        return cls(rate, float(ci.low), float(ci.high), n)


@dataclass(frozen=True, slots=True)
class Levels:
    """The levels of a level claim, by part (the policies whose hit@5 the paper reports)."""

    parts: Mapping[str, Level]

    def text(self) -> str:
        return ", ".join(
            f"{label} {format_number(v.estimate, 'frac')}" for label, v in self.parts.items()
        )

    def summary(self) -> Summary:
        return _summary()


@dataclass(frozen=True, slots=True)
class Bound:
    """A measurement judged against the paper's bound, in the bound's ``unit``."""

    estimate: float
    unit: str = "s"

    def text(self) -> str:
        return duration_text(self.estimate, self.unit)

    def summary(self) -> Summary:
        return _summary(estimate=self.estimate)


@dataclass(frozen=True, slots=True)
class Share:
    """How many of our cells meet the threshold, and (optional) the weaker direction-only
    criterion."""

    passing: int
    total: int
    direction: int | None = None

    def text(self) -> str:
        text = f"{self.passing} of {self.total} cells"
        if self.direction is not None:
            text += f" (direction: {self.direction} of {self.total})"
        return text

    def summary(self) -> Summary:
        """The share as an estimate, of ``total`` cells (none without a cell)."""
        if not self.total:
            return _summary()
        return _summary(estimate=self.passing / self.total, n=self.total)


@dataclass(frozen=True, slots=True)
class Holds:
    """A yes/no statement our run decides, whole and by part."""

    holds: bool
    parts: Mapping[str, bool]
    #: by part, why its cells are too small to decide it ("" when they are not)
    too_few: Mapping[str, str] = field(default_factory=dict)

    def text(self) -> str:
        text = "yes" if self.holds else "no"
        if self.parts:
            shown = ", ".join(f"{k}: {'yes' if v else 'no'}" for k, v in self.parts.items())
            text += f" ({shown})"
        return text

    def summary(self) -> Summary:
        return _summary()


@dataclass(frozen=True, slots=True)
class Untestable:
    """Our numbers shown beside a claim our data cannot test (none, for a human annotation)."""

    numbers: Mapping[str, Scalar]

    def text(self) -> str:
        if not self.numbers:
            return NO_NUMBER_OF_OURS
        return ", ".join(f"{name} {format_number(value)}" for name, value in self.numbers.items())

    def summary(self) -> Summary:
        found = _summary(**{k: v for k, v in self.numbers.items() if k in OURS_FIELDS})
        n = found["n"]
        return found if n is None else {**found, "n": int(n)}


#: Our side of any claim.
Ours = Comparison | Parts | Levels | Bound | Share | Holds | Untestable
