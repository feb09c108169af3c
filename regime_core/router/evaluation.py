"""Scoring a routing policy: hit@k of always-q, always-union, the router and the oracle.

Routed hit@k uses the router's decision per question: ``hit_routed = hit_union`` where it says
union, else ``hit_q``. The oracle router takes the better of the two per question, so
``oracle − routed`` is what a perfect router would add. Every comparison is paired per question
(:func:`paired_hits`: a :class:`Bootstrap` CI of the mean difference, the McNemar p).
Everything here is a pure function of per-question outcomes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from regime_core import config
from regime_core.stats import PairedComparison, compare_paired

# The four routing policies every outcome reports, and the paired comparisons between them.
POLICIES: tuple[str, ...] = ("q", "union", "routed", "oracle")
COMPARISONS: dict[str, tuple[str, str]] = {
    "routed_vs_q": ("routed", "q"),
    "union_vs_q": ("union", "q"),
    "oracle_vs_q": ("oracle", "q"),
    "oracle_vs_routed": ("oracle", "routed"),  # the oracle gap
    # what a router is for: beating the policy that needs no router at all
    "routed_vs_union": ("routed", "union"),
}
"""the paired comparisons of the router chapter: a policy minus another

- routed_vs_q: routed minus always-q
- union_vs_q: always-union minus always-q
- oracle_vs_q: the oracle (the better of q and union per question) minus always-q
- oracle_vs_routed: the oracle gap: what a perfect router would add
- routed_vs_union: routed minus always-union, the policy that needs no router
"""
#: The fields of a paired comparison that records keep (differences as fractions).
COMPARISON_FIELDS: tuple[str, ...] = (
    "diff",
    "ci_lo",
    "ci_hi",
    "p_value",
    "n_a_better",
    "n_b_better",
)


@dataclass(frozen=True)
class Bootstrap:
    """The bootstrap behind every confidence interval here: ``resamples`` paired resamples, a
    ``confidence``-level percentile interval, drawn from ``seed`` (the McNemar p is exact)."""

    resamples: int = config.BOOTSTRAP_RESAMPLES
    confidence: float = config.CONFIDENCE
    seed: int = config.SEED


DEFAULT_BOOTSTRAP = Bootstrap()


#: Kept beside the p where the comparison has them (a McNemar comparison of hits): the exact
#: conditional p and the mid-p, for readers who use them; no verdict reads them.
OTHER_P_FIELDS: tuple[str, ...] = ("p_exact", "p_mid")


def comparison_numbers(c: PairedComparison) -> dict[str, Any]:
    """The :data:`COMPARISON_FIELDS` of a paired comparison, for a record, and the
    :data:`OTHER_P_FIELDS` it has."""
    numbers = {name: getattr(c, name) for name in COMPARISON_FIELDS}
    numbers.update({k: getattr(c, k) for k in OTHER_P_FIELDS if getattr(c, k) is not None})
    return numbers


def paired_hits(
    a: ArrayLike,
    b: ArrayLike,
    labels: tuple[str, str],
    *,
    bootstrap: Bootstrap = DEFAULT_BOOTSTRAP,
    test: str = "mcnemar",
) -> PairedComparison:
    """Policy ``a`` against policy ``b`` on the same questions' hits (booleans; per-question
    values for another ``test`` of :func:`~regime_core.stats.compare_paired`): the bootstrap CI
    of the mean difference and the ``test``'s p (McNemar); ``labels`` names ``(a, b)``."""
    return compare_paired(
        np.asarray(a, dtype=float),
        np.asarray(b, dtype=float),
        test=test,
        resamples=bootstrap.resamples,
        confidence=bootstrap.confidence,
        seed=bootstrap.seed,
        label_a=labels[0],
        label_b=labels[1],
    )


@dataclass(frozen=True)
class RoutingOutcome:
    """hit@k of always-q, always-union, the router and the oracle router on one dataset, with
    paired comparisons (bootstrap CI of the mean difference, McNemar p)."""

    dataset: str
    k: int
    hits: Mapping[str, np.ndarray]  # policy -> (n,) bool
    probability: np.ndarray  # p(union) per question (out of fold when cross-fitted)
    routed_union: np.ndarray  # (n,) bool: the router said union
    comparisons: Mapping[str, PairedComparison]

    @property
    def n(self) -> int:
        return int(self.routed_union.size)

    def comparison(self, name: str) -> PairedComparison:
        return self.comparisons[name]

    def to_numbers(self) -> dict[str, Any]:
        numbers: dict[str, Any] = {"n": self.n, "share_union": float(self.routed_union.mean())}
        for policy in POLICIES:
            numbers[f"hit@{self.k}_{policy}"] = float(np.mean(self.hits[policy]))
        for name, c in self.comparisons.items():
            numbers[name] = comparison_numbers(c)
        return numbers


def evaluate_routing(
    hit_q: ArrayLike,
    hit_union: ArrayLike,
    routed_union: ArrayLike,
    probability: ArrayLike,
    *,
    dataset: str,
    k: int = config.HEADLINE_K,
    bootstrap: Bootstrap = DEFAULT_BOOTSTRAP,
) -> RoutingOutcome:
    """Score a routing decision per question against the fixed policies; pure.

    ``hit_routed = where(routed_union, hit_union, hit_q)``, ``hit_oracle = hit_q | hit_union``.
    """
    q = np.asarray(hit_q, dtype=bool)
    u = np.asarray(hit_union, dtype=bool)
    routed = np.asarray(routed_union, dtype=bool)
    p = np.asarray(probability, dtype=np.float64)
    hits = {"q": q, "union": u, "routed": np.where(routed, u, q), "oracle": q | u}
    comparisons = {
        name: paired_hits(hits[a], hits[b], (a, b), bootstrap=bootstrap)
        for name, (a, b) in COMPARISONS.items()
    }
    return RoutingOutcome(dataset, int(k), hits, p, routed, comparisons)


def subset_outcome(
    outcome: RoutingOutcome, mask: ArrayLike, *, bootstrap: Bootstrap = DEFAULT_BOOTSTRAP
) -> RoutingOutcome | None:
    """The same decisions scored on the questions ``mask`` keeps (None when it keeps none)."""
    keep = np.asarray(mask, dtype=bool)
    if not keep.any():
        return None
    return evaluate_routing(
        outcome.hits["q"][keep],
        outcome.hits["union"][keep],
        outcome.routed_union[keep],
        outcome.probability[keep],
        dataset=outcome.dataset,
        k=outcome.k,
        bootstrap=bootstrap,
    )
