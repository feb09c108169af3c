"""The two claims of the abstract judged on the ablations run (pure kernels).

- **the α rule** (its record section ``alpha_rule``): "one rule, α = 0.25, transfers across datasets
  and encoders". Per dataset × encoder, routed hit@k at the main α minus routed hit@k at the *best*
  α of the grid for that pair (:func:`alpha_regret`), paired per question (McNemar). The best α is
  chosen on the same questions, so it is optimistic for the best α and makes the rule harder to
  pass; ties go to the α closest to the main one (then the smaller α).
- **pool invariance** (its record section ``pool_invariance``): "the router's gain does not depend
  on how the candidate pool is built". Per dataset, the per-question difference between routed − q
  with corpus pools and routed − q with question pools (values −2..2; :func:`gain_difference`: a
  permutation test and a percentile-bootstrap interval), on the same questions: every pool mode is
  evaluated on the main setting's sample.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from regime_core.router.evaluation import (
    COMPARISON_FIELDS,
    DEFAULT_BOOTSTRAP,
    Bootstrap,
    RoutingOutcome,
    comparison_numbers,
    paired_hits,
)
from regime_core.stats import PairedComparison, compare_paired

#: The fields of each paired comparison an ablation row records (``n``: the questions compared).
ROW_FIELDS: tuple[str, ...] = (*COMPARISON_FIELDS, "n")


def flat_columns(name: str, c: PairedComparison) -> dict[str, Any]:
    """:data:`ROW_FIELDS` of a paired comparison as the flat columns ``<name>_<field>`` of a frame
    (records nest them)."""
    return {f"{name}_{key}": value for key, value in {**comparison_numbers(c), "n": c.n}.items()}


def choose_best_alpha(
    hit_counts: Mapping[float, int], *, reference: float
) -> tuple[float, tuple[float, ...]]:
    """The α of the grid whose routed hit count is highest, and every α reaching that count.

    Counts are compared exactly (integers). Ties go to the α closest to ``reference`` (the main
    α), then to the smaller α; distances are compared rounded to 12 decimals, so two grid points
    equally far from the reference on paper tie in floating point too.

    >>> choose_best_alpha({0.0: 70, 0.25: 75, 0.5: 75, 1.0: 74}, reference=0.25)
    (0.25, (0.25, 0.5))
    >>> choose_best_alpha({0.0: 75, 0.25: 70, 0.5: 75}, reference=0.25)
    (0.0, (0.0, 0.5))
    """
    best = max(int(c) for c in hit_counts.values())
    tied = tuple(sorted(float(a) for a, c in hit_counts.items() if int(c) == best))
    chosen = min(tied, key=lambda a: (round(abs(a - float(reference)), 12), a))
    return chosen, tied


@dataclass(frozen=True)
class AlphaRegret:
    """Routed hit@k at the rule's α against routed hit@k at the best α of the grid, on the same
    questions: ``comparison`` is rule − best (never positive: the best is chosen on these
    questions), paired per question with the score interval and p."""

    alpha: float
    best_alpha: float
    tied: tuple[float, ...]  # every α of the grid reaching the best routed hit count
    comparison: PairedComparison

    def to_row(self) -> dict[str, Any]:
        return {
            "alpha": self.alpha,
            "best_alpha": self.best_alpha,
            "alphas_tied": len(self.tied),
            "hit_routed_rule": self.comparison.mean_a,
            "hit_routed_best": self.comparison.mean_b,
            **flat_columns("rule_vs_best", self.comparison),
        }


def alpha_regret(
    routed_hits: Mapping[float, Any],
    *,
    alpha: float,
    bootstrap: Bootstrap = DEFAULT_BOOTSTRAP,
) -> AlphaRegret:
    """The regret of the rule ``alpha`` against the best α of the grid (:func:`choose_best_alpha`)
    for one dataset × encoder; ``routed_hits`` maps each α of the grid to the router's hits
    (booleans, one per question, the same questions for every α); pure."""
    hits = {float(a): np.asarray(h, dtype=bool) for a, h in routed_hits.items()}
    best, tied = choose_best_alpha(
        {a: int(h.sum()) for a, h in hits.items()}, reference=float(alpha)
    )
    comparison = paired_hits(hits[float(alpha)], hits[best], ("rule", "best"), bootstrap=bootstrap)
    return AlphaRegret(float(alpha), best, tied, comparison)


def gain_difference(
    ids_a: Sequence[str],
    gain_a: Any,
    ids_b: Sequence[str],
    gain_b: Any,
    *,
    labels: tuple[str, str] = ("a", "b"),
    bootstrap: Bootstrap = DEFAULT_BOOTSTRAP,
) -> PairedComparison:
    """Two settings' per-question gains (routed − q hits, each in −1..1) against each other,
    aligned by question id: ``gain_a − gain_b`` per question (values in −2..2), so not a McNemar
    comparison: the sign-flip permutation test
    (:func:`regime_core.stats.compare_paired` ``test="permutation"``) with a percentile
    bootstrap interval of the mean difference. The two settings hold the same distinct
    questions (the ablations' pool modes route the same samples).

    >>> c = gain_difference(["x", "y"], [1, 0], ["y", "x"], [0, 1], bootstrap=Bootstrap(100))
    >>> c.diff, c.n
    (0.0, 2)
    """
    a = np.asarray(gain_a, dtype=float)
    b = np.asarray(gain_b, dtype=float)
    position = {qid: i for i, qid in enumerate(ids_b)}
    b_aligned = b[[position[qid] for qid in ids_a]]
    return compare_paired(
        a,
        b_aligned,
        test="permutation",
        resamples=bootstrap.resamples,
        confidence=bootstrap.confidence,
        seed=bootstrap.seed,
        label_a=labels[0],
        label_b=labels[1],
    )


def routed_gain(outcome: RoutingOutcome) -> np.ndarray:
    """Routed − q per question (−1, 0 or 1)."""
    return outcome.hits["routed"].astype(np.int64) - outcome.hits["q"].astype(np.int64)
