"""The words a finding is written in: :class:`Records` (the records it reads, a missing
record or key an error that names it, so a strict build fails rather than printing a wrong
sentence), the number formats and the wording of an interval and its direction."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from regime_core import config
from regime_core.runner.records import Record
from regime_core.runner.wording import format_number, interval_end, pp

if TYPE_CHECKING:
    from regime_core.runner.verdicts import ClaimVerdict


class Records:
    """The records a finding reads, by run id, with short accessors for its numbers; and the
    claims' verdicts, by claim id, for a finding that reads them."""

    def __init__(
        self,
        records: Mapping[str, Record],
        verdicts: Mapping[str, ClaimVerdict] | None = None,
    ) -> None:
        self._records = records
        self._verdicts = verdicts

    def record(self, run: str) -> Record:
        return self._records[run]  # every run of Finding.runs, read by page_record

    def verdicts(self) -> Mapping[str, ClaimVerdict]:
        if self._verdicts is None:
            raise KeyError("no verdicts of the claims; the finding needs them")
        return self._verdicts

    def get(self, run: str, key: str) -> Any:
        return self.record(run).number(key)

    def node(self, run: str, key: str) -> Mapping[str, Any]:
        return self.record(run).node(key)


def pct(x: float) -> str:
    return format_number(x, "pct")


def count(x: float) -> str:
    return format_number(x, "int")


#: the name of an interval of confidence :data:`~regime_core.config.CONFIDENCE`
CI = f"{round(100 * config.CONFIDENCE)}% CI"


def holm_levels(family: Mapping[str, Any]) -> dict[str, float]:
    """The confidence of each Holm-level interval of a record's Holm family, by its path there
    (:func:`regime_core.multiplicity.family_confidences`, at the judge's level)."""
    from regime_core.multiplicity import family_confidences
    from regime_core.runner.judge import SIGNIFICANCE_LEVEL

    return family_confidences(family, SIGNIFICANCE_LEVEL)


def ours_interval(c: Any) -> str:
    """A claim's comparison (:class:`regime_core.runner.ours.Comparison`) as
    :func:`holm_interval` says it: a Holm-level interval at its level with the 95% CI beside it,
    or the 95% CI alone outside a Holm family."""
    node = {"diff": c.estimate, "ci_lo": c.ci_lo, "ci_hi": c.ci_hi}
    if c.ci_nominal is not None:
        node.update(ci_lo_unadjusted=c.ci_nominal[0], ci_hi_unadjusted=c.ci_nominal[1])
    return holm_interval(node, c.confidence if c.holm else None)


def holm_interval(c: Mapping[str, Any], confidence: float | None, effect: str = "diff") -> str:
    """``+11.3 pp (99.44% Holm-level interval +5.0 to +17.6 pp; 95% CI +6.9 to +15.7 pp)``: a
    Holm-level interval at its level, with the 95% CI beside it where the record keeps it; a
    comparison outside any Holm family (``confidence`` None) as :func:`interval` says it."""
    from regime_core.vocabulary import interval_label

    if confidence is None:
        return interval(c, effect)

    text = estimate_interval(
        c[effect], c["ci_lo"], c["ci_hi"], interval_label(confidence, holm=True)
    )
    if "ci_lo_unadjusted" in c and "ci_hi_unadjusted" in c:
        lo = interval_end(float(c["ci_lo_unadjusted"]), unit=False)
        hi = interval_end(float(c["ci_hi_unadjusted"]))
        text = f"{text[:-1]}; {CI} {lo} to {hi})"
    return text


def estimate_interval(estimate: float, ci_lo: float, ci_hi: float, what: str = CI) -> str:
    """``+6.6 pp (95% CI +4.5 to +9.1 pp)``: an estimate and its interval, fractions in, the
    unit written once (``what`` names the interval: a Holm-adjusted one says so)."""
    lo, hi = interval_end(float(ci_lo), unit=False), interval_end(float(ci_hi))
    return f"{pp(estimate)} ({what} {lo} to {hi})"


def interval(c: Mapping[str, Any], effect: str = "diff", what: str = CI) -> str:
    """:func:`estimate_interval` of a comparison node (its ``effect``, ``ci_lo`` and
    ``ci_hi``)."""
    return estimate_interval(c[effect], c["ci_lo"], c["ci_hi"], what)


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
    return row.get("comparisons", {}).get(name) if isinstance(row, Mapping) else None


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
    #: it reads the claims' verdicts too (the book's, judged once per build)
    judged: bool = False
