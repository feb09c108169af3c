"""The ledger as a whole: every comparison claim re-judged from its counts under another interval
method, and a Holm correction across the ledger's comparison claims.

A claim judged on a paired difference of hit@5 keeps, in its record, the four counts the interval
is a function of (``n_a_better``, ``n_b_better``, ``n`` beside ``ci_lo``), so its verdict under
any interval of :data:`INTERVAL_METHODS` follows from the record without rerunning anything:

- :func:`verdicts_by_method` judges every comparison claim under each method (the book's list of
  choices made after seeing results shows the claims whose verdict depends on it);
- :func:`ledger_holm` keeps each claim's own verdict and adds the ledger-wide view: Holm's
  step-down procedure over the p-values of the comparison claims, each against its claim's own
  null (zero for an effect, minus the margin for no loss, both margins for equivalence; a claim
  of several parts holds only if every part does, so its p is the largest of its parts'), each
  claim re-judged with its intervals at the level Holm tested it
  (:func:`regime_core.multiplicity.holm_levels`). A verdict *survives* when it is the same there.

Holm rather than Benjamini–Hochberg: each claim is read on its own ("this statement of the paper
holds"), so the error to control is that of any one verdict being wrong, not the share of wrong
ones among the significant. Pure: claims and records in, dataclasses out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy import stats as scipy_stats

from regime_core import config
from regime_core.multiplicity import holm, holm_levels
from regime_core.paper import Claim
from regime_core.runner.claim_record import judge_values
from regime_core.runner.judge import COMPARISON_RULES, SIGNIFICANCE_LEVEL, SMALLEST_EFFECT
from regime_core.runner.ours import Comparison, Parts
from regime_core.runner.records import Record

#: The intervals a comparison claim can be re-judged with, in the order the book used them.
INTERVAL_METHODS: tuple[str, ...] = ("conditional_exact", "score_cc", "score")
#: The method the book's verdicts use now (``config.CONTINUITY_CORRECTION``).
CURRENT_METHOD: str = "score_cc" if config.CONTINUITY_CORRECTION else "score"
SURVIVES, DOES_NOT_SURVIVE = "survives", "does not survive"


@dataclass(frozen=True, slots=True)
class Counts:
    """One paired comparison's counts, read beside its interval in a record."""

    estimate: float
    n_a_better: int
    n_b_better: int
    n: int
    #: where it sits in the record (the node of its ``ci_lo``)
    node: str


def _counts(record: Record, keys: Mapping[str, Any]) -> Counts | None:
    """The counts of a claim's comparison: each named by the claim's keys (``n_a_better``,
    ``n_b_better``, ``n``), else read beside its ``ci_lo``; None when one is in neither."""
    node = str(keys["ci_lo"]).rsplit(".", 1)[0]
    if not _of_hit_rates(record, node):
        return None
    found = []
    for name in ("n_a_better", "n_b_better", "n"):
        key = str(keys[name]) if name in keys else f"{node}.{name}"
        if not record.has(key):
            return None
        found.append(int(record.number(key)))
    b, c, n = found
    return Counts(float(record.number(str(keys["estimate"]))), b, c, n, node)


#: The tests whose comparison is not a paired difference of hit rates (its interval is a
#: bootstrap of real-valued differences): such a claim is not re-judged from counts.
_NOT_HIT_RATES: tuple[str, ...] = ("sign", "permutation")


def _of_hit_rates(record: Record, node: str) -> bool:
    """Whether the comparison at ``node`` is a difference of hit rates: neither it nor the row
    above it names a bootstrap interval or a test of real values (``ci_method``, ``test``)."""
    parts = node.split(".")
    for depth in (len(parts), len(parts) - 1):
        prefix = ".".join(parts[:depth])
        for name in ("ci_method", "test"):
            key = f"{prefix}.{name}"
            if record.has(key):
                value = str(record.number(key))
                if value == "bootstrap_percentile" or value.startswith(_NOT_HIT_RATES):
                    return False
    return True


def claim_counts(claim: Claim, record: Record) -> dict[str, Counts] | None:
    """The counts of each part of a comparison claim (one part, labelled ``""``, for a claim of
    one comparison); None for another kind of claim or when a part has no counts (an interval
    that is not a function of them, such as a bootstrap)."""
    if claim.rule not in COMPARISON_RULES:
        return None
    ours = claim.ours
    parts = ours.get("parts", {"": ours})
    found = {str(label): _counts(record, keys) for label, keys in parts.items()}
    if any(c is None for c in found.values()):
        return None
    return {label: c for label, c in found.items() if c is not None}


def interval_of(method: str, c: Counts, confidence: float) -> tuple[float, float]:
    """The interval of ``method`` (a key of :data:`INTERVAL_METHODS`) at ``confidence``."""
    from regime_core.coverage import conditional_exact_interval
    from regime_core.stats import score_interval

    if method == "conditional_exact":
        lo, hi = conditional_exact_interval(c.n_a_better, c.n_b_better, c.n, confidence=confidence)
    elif method in ("score", "score_cc"):
        lo, hi = score_interval(
            c.n_a_better, c.n_b_better, c.n, confidence=confidence, continuity=method == "score_cc"
        )
    else:
        raise ValueError(f"method: unknown interval {method!r}; choose one of {INTERVAL_METHODS}")
    return float(lo), float(hi)


def p_of(method: str, c: Counts) -> float:
    """The two-sided p of no difference that ``method``'s interval inverts (the exact
    conditional McNemar p for the conditional exact interval)."""
    from regime_core.stats import score_test

    if method == "conditional_exact":
        m = c.n_a_better + c.n_b_better
        if m == 0:
            return 1.0
        return float(scipy_stats.binomtest(c.n_a_better, m, 0.5).pvalue)
    return score_test(c.n_a_better, c.n_b_better, c.n, continuity=method == "score_cc").p_value


def _values(
    counts: Mapping[str, Counts], method: str, confidence: Mapping[str, float]
) -> Comparison | Parts:
    def one(label: str, c: Counts) -> Comparison:
        lo, hi = interval_of(method, c, confidence[label])
        discordant = c.n_a_better + c.n_b_better
        # the conditional exact interval can miss its own estimate by rounding; it holds it
        ends = (min(lo, c.estimate), max(hi, c.estimate))
        return Comparison(c.estimate, *ends, p_of(method, c), c.n, discordant)

    if list(counts) == [""]:
        return one("", counts[""])
    return Parts({label: one(label, c) for label, c in counts.items()})


def rejudge(
    claim: Claim,
    counts: Mapping[str, Counts],
    method: str,
    confidence: float | Mapping[str, float] = config.CONFIDENCE,
) -> str:
    """The verdict (in the words a reader sees, without the detail in its brackets, which
    differs with the level) of ``claim`` with every interval made by
    ``method`` from ``counts`` (:func:`claim_counts`) at ``confidence`` (one, or one per part)."""
    levels = confidence if isinstance(confidence, Mapping) else dict.fromkeys(counts, confidence)
    return judge_values(claim, _values(counts, method, levels)).plain_words


@dataclass(frozen=True)
class MethodVerdicts:
    """A comparison claim's verdict under each interval method (by method)."""

    claim_id: str
    verdicts: dict[str, str]

    @property
    def differs(self) -> bool:
        return len(set(self.verdicts.values())) > 1


def verdicts_by_method(
    claims: Sequence[Claim],
    records: Mapping[str, Record],
    methods: Sequence[str] = INTERVAL_METHODS,
) -> list[MethodVerdicts]:
    """Every comparison claim with counts judged under each of ``methods`` at the book's
    confidence; a claim whose comparison is Holm-adjusted within its run is judged at the level
    Holm tested it, its run's family re-tested with each method's p (:func:`_holm_family`)."""
    out = []
    for claim in claims:
        record = records[claim.run]
        counts = claim_counts(claim, record)
        if counts is None:
            continue
        verdicts = {}
        in_holm_family = any("p_holm" in record.node(c.node) for c in counts.values())
        for method in methods:
            confidence: float | dict[str, float] = config.CONFIDENCE
            if in_holm_family:
                levels = _holm_family(record, counts, method)
                confidence = {label: 1.0 - level for label, level in levels.items()}
            verdicts[method] = rejudge(claim, counts, method, confidence)
        out.append(MethodVerdicts(claim.id, verdicts))
    return out


def _holm_family(record: Record, counts: Mapping[str, Counts], method: str) -> dict[str, float]:
    """The Holm level of each part in its run's family: every node holding ``p_holm`` under the
    same top-level key of the record (T3's ``comparisons``), re-tested with ``method``'s p."""
    top = next(iter(counts.values())).node.split(".", 1)[0]
    family: list[tuple[str, Counts]] = []

    def walk(node: Mapping[str, Any], path: str) -> None:
        if "p_holm" in node and all(k in node for k in ("n_a_better", "n_b_better", "n")):
            c = Counts(0.0, int(node["n_a_better"]), int(node["n_b_better"]), int(node["n"]), path)
            family.append((path, c))
            return
        for key, value in node.items():
            if isinstance(value, Mapping):
                walk(value, f"{path}.{key}")

    walk(record.node(top), top)
    p = np.array([p_of(method, c) for _, c in family])
    levels = dict(
        zip([path for path, _ in family], holm_levels(p, SIGNIFICANCE_LEVEL), strict=True)
    )
    return {label: float(levels[c.node]) for label, c in counts.items()}


# --- the ledger-wide Holm correction -----------------------------------------------------------


def null_p(claim: Claim, c: Counts, method: str = CURRENT_METHOD) -> float:
    """The two-sided p of one comparison against its claim's own null, the test whose inversion
    is the claim's interval: at zero (an effect), at minus the margin (no loss: only a result
    above it rejects), at both margins (equivalence: the larger of the two)."""
    from regime_core.stats import score_test

    continuity = method == "score_cc"

    def one_sided(delta0: float, above: bool) -> float:
        t = score_test(c.n_a_better, c.n_b_better, c.n, delta0=delta0, continuity=continuity)
        wins = t.statistic > 0 if above else t.statistic < 0
        return min(1.0, t.p_value) if wins else 1.0

    if claim.rule == "no_loss":
        return one_sided(-SMALLEST_EFFECT, above=True)
    if claim.rule == "equivalence":
        return max(one_sided(-SMALLEST_EFFECT, True), one_sided(SMALLEST_EFFECT, False))
    return p_of(method, c)


@dataclass(frozen=True, slots=True)
class LedgerEntry:
    """One comparison claim in the ledger-wide Holm family: its p against its own null (the
    largest of its parts'), Holm-adjusted p, the level Holm tested it at, its own verdict, the
    verdict with its intervals at that level and whether the verdict survives."""

    claim_id: str
    p: float
    p_holm: float
    holm_level: float
    verdict: str
    verdict_at_holm_level: str
    survives: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def ledger_holm(
    claims: Sequence[Claim],
    records: Mapping[str, Record],
    verdicts: Mapping[str, str],
    method: str = CURRENT_METHOD,
) -> list[LedgerEntry]:
    """Holm across the ledger's comparison claims with counts (the module's docstring);
    ``verdicts`` maps a claim id to its own verdict words. Claims without counts are not in
    the family."""
    family = []
    for claim in claims:
        counts = claim_counts(claim, records[claim.run])
        if counts is not None:
            family.append((claim, counts, max(null_p(claim, c, method) for c in counts.values())))
    if not family:
        return []
    p = np.array([entry[2] for entry in family])
    adjusted = holm(p)
    levels = holm_levels(p, SIGNIFICANCE_LEVEL)
    out = []
    for (claim, counts, p_claim), p_adj, level in zip(family, adjusted, levels, strict=True):
        at_level = rejudge(claim, counts, method, 1.0 - float(level))
        own = verdicts[claim.id]
        out.append(
            LedgerEntry(
                claim.id,
                float(p_claim),
                float(p_adj),
                float(level),
                own,
                at_level,
                SURVIVES if at_level == own else DOES_NOT_SURVIVE,
            )
        )
    return out


def ledger_sentence(entries: Sequence[LedgerEntry], labels: Mapping[str, str]) -> str:
    """The landing page's one sentence on the ledger-wide correction, e.g. "Corrected with Holm
    across the 14 comparison claims, 11 verdicts stand; A and B become inconclusive."
    ``labels`` names each claim for a reader."""
    if not entries:
        return ""
    fallen = [e for e in entries if e.survives == DOES_NOT_SURVIVE]
    head = (
        f"Corrected with Holm's procedure across all {len(entries)} comparison claims (so that "
        f"the chance of any false significant result among them stays at "
        f"{SIGNIFICANCE_LEVEL:.0%}), {len(entries) - len(fallen)} verdicts stand"
    )
    if not fallen:
        return head + "."
    changes = "; ".join(
        f"{labels.get(e.claim_id, e.claim_id)} becomes {e.verdict_at_holm_level}" for e in fallen
    )
    return f"{head}; {changes}."
