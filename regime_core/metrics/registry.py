"""The metric registry: each metric named once (``hit@5``, ``mrr``, ``auc``...), with the
metadata the book's glossary is generated from (:func:`~regime_core.metrics.registry.glossary`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from regime_core import config
from regime_core.inputs import Pattern, check_value
from regime_core.metrics import kernels
from regime_core.metrics.ranked import RankedQueries


@dataclass(frozen=True)
class MetricSpec:
    """One metric family: its kernel and the metadata the glossary is generated from.

    ``cutoff`` says whether ``@k`` is ``"required"``, ``"optional"`` or ``"forbidden"``.
    """

    family: str
    kernel: Callable[..., np.ndarray]
    cutoff: str
    title: str
    formula: str
    example: str
    higher_is_better: bool
    value_range: str
    equivalents: str = ""


# Metrics defined only against negatives (non-gold candidates): undefined for a pool without one.
NEGATIVE_METRICS: tuple[str, ...] = ("auc", "margin", "std_margin")

METRICS: dict[str, MetricSpec] = {
    spec.family: spec
    for spec in (
        MetricSpec(
            "hit",
            kernels.hit_at_k,
            "required",
            "Target hit at k: is the hop-2 target in the top k? With one target per question, "
            "this is the paper's R@k",
            "hit@k = [rank(target) <= k]",
            "scores [0.9, 0.5, 0.7], target 2 -> rank 2 -> hit@1 = 0, hit@2 = 1",
            True,
            "{0, 1}",
            "ir-measures Success@k, ranx hit_rate@k (target as the only relevant passage)",
        ),
        MetricSpec(
            "recall",
            kernels.recall_at_k,
            "required",
            "Recall at k over the gold passages",
            "recall@k = |gold ∩ top_k| / |gold|",
            "gold {0, 2}, ranks 1 and 3 -> recall@2 = 0.5",
            True,
            "[0, 1]",
            "ir-measures Recall@k, ranx recall@k",
        ),
        MetricSpec(
            "all_gold",
            kernels.all_gold_at_k,
            "required",
            "All gold passages in the top k",
            "all_gold@k = [max_{g in gold} rank(g) <= k]",
            "gold {0, 2}, ranks 1 and 3 -> all_gold@2 = 0, all_gold@3 = 1",
            True,
            "{0, 1}",
            "ir-measures Recall@k == 1",
        ),
        MetricSpec(
            "mrr",
            kernels.reciprocal_rank,
            "optional",
            "Reciprocal rank of the target (its mean over queries is the MRR)",
            "mrr = 1 / rank(target); mrr@k = 0 when rank(target) > k",
            "target at rank 2 -> mrr = 0.5, mrr@1 = 0",
            True,
            "(0, 1]",
            "ir-measures RR / RR@k, ranx mrr / mrr@k",
        ),
        MetricSpec(
            "rank",
            kernels.target_rank,
            "forbidden",
            "Rank of the target",
            "rank = 1 + #{j: s_j > s_t} + #{j < t: s_j == s_t}",
            "scores [0.5, 0.9, 0.5], target 2 -> rank 3",
            False,
            "{1, 2, ...}",
        ),
        MetricSpec(
            "auc",
            kernels.auc,
            "forbidden",
            "Per-query AUC of the target against the negatives",
            "auc = (#{n: s_n < s_t} + 0.5 #{n: s_n == s_t}) / #negatives",
            "target 0.6, negatives [0.2, 0.6, 0.9] -> (1 + 0.5) / 3 = 0.5",
            True,
            "[0, 1]",
            "sklearn roc_auc_score per query",
        ),
        MetricSpec(
            "margin",
            kernels.margin_mean,
            "forbidden",
            "Cosine margin: target minus the mean negative (AUC ≈ Φ(margin / σ))",
            "margin = s_t - mean_n(s_n)",
            "target 0.6, negatives [0.2, 0.4] -> 0.3",
            True,
            "[-2, 2] for cosines",
        ),
        MetricSpec(
            "margin_max",
            kernels.margin_max,
            "forbidden",
            "Cosine margin against the hardest negative",
            "margin_max = s_t - max_n(s_n)",
            "target 0.6, negatives [0.2, 0.4] -> 0.2",
            True,
            "[-2, 2] for cosines",
        ),
        MetricSpec(
            "std_margin",
            kernels.standardized_margin,
            "forbidden",
            "Standardised margin (NaN when the negatives have zero spread)",
            "std_margin = (s_t - mean_n(s_n)) / std_n(s_n), population std",
            "target 0.6, negatives [0.2, 0.4] -> 0.3 / 0.1 = 3.0",
            True,
            "real",
        ),
    )
}


def _name_regex() -> str:
    cutoff = "@[1-9][0-9]*"
    by_rule = {"required": cutoff, "optional": f"(?:{cutoff})?", "forbidden": ""}
    return "|".join(f"{family}{by_rule[spec.cutoff]}" for family, spec in METRICS.items())


METRIC_NAME = Pattern(
    _name_regex(),
    "a metric name: "
    + ", ".join(
        {"required": f"{f}@k", "optional": f"{f} or {f}@k", "forbidden": f}[spec.cutoff]
        for f, spec in METRICS.items()
    )
    + " (k an integer >= 1)",
)
"""Every metric name :func:`parse_metric` reads, as the one reader's kind: a family of
:data:`METRICS` with ``@k`` where its ``cutoff`` requires or allows one."""


@dataclass(frozen=True)
class Metric:
    """A metric family plus its cutoff; ``name`` is canonical. Built by :func:`parse_metric`
    (which checks the name) or from a family of :data:`METRICS` in code.

    >>> Metric("hit", 5).name
    'hit@5'
    >>> parse_metric("mrr@10") == Metric("mrr", 10)
    True
    """

    family: str
    k: int | None = None

    @property
    def name(self) -> str:
        return self.family if self.k is None else f"{self.family}@{self.k}"

    @property
    def spec(self) -> MetricSpec:
        return METRICS[self.family]

    def per_query(self, rq: RankedQueries) -> np.ndarray:
        """One value per query (float64)."""
        return self.spec.kernel(rq, self.k)

    def __str__(self) -> str:
        return self.name


def parse_metric(name: str | Metric, field: str = "metrics") -> Metric:
    """``"hit@5"`` -> ``Metric("hit", 5)``; an :class:`~regime_core.inputs.InputError` naming
    ``field`` for an unknown or malformed name."""
    if isinstance(name, Metric):
        return name
    text = check_value(METRIC_NAME, str(name).strip(), where="metrics", field=field)
    family, _, k = text.partition("@")
    return Metric(family, int(k) if k else None)


def default_metrics(k_values: Sequence[int] | None = None) -> list[Metric]:
    """hit/recall/all_gold at each k of ``config.K_VALUES``, then mrr, auc and the margins."""
    ks = config.K_VALUES if k_values is None else tuple(k_values)
    metrics = [Metric(family, k) for family in ("hit", "recall", "all_gold") for k in ks]
    metrics += [Metric(f) for f in ("mrr", "rank", "auc", "margin", "margin_max", "std_margin")]
    return metrics


def glossary() -> list[dict[str, str]]:
    """One row per metric family, for the book's glossary table."""
    return [
        {
            "metric": spec.family + ("@k" if spec.cutoff == "required" else ""),
            "meaning": spec.title,
            "formula": spec.formula,
            "example": spec.example,
            "range": spec.value_range,
            "better": "higher" if spec.higher_is_better else "lower",
            "same as": spec.equivalents,
        }
        for spec in METRICS.values()
    ]


def resolve_metrics(metrics: Sequence[str | Metric]) -> list[Metric]:
    """Names (or one name) -> :class:`Metric` objects, each once (a name asked for twice is
    one column); an :class:`~regime_core.inputs.InputError` for an unknown or malformed name."""
    if isinstance(metrics, str | Metric):
        metrics = [metrics]
    resolved = [parse_metric(m, field=f"metrics[{i}]") for i, m in enumerate(metrics)]
    return list(dict.fromkeys(resolved))


# Defined only against negatives: a query without one would give 0/0 (auc, the margins) or
# an infinite margin_max.
_NEEDS_NEGATIVES = (*NEGATIVE_METRICS, "margin_max")


def check_negatives(negative_counts: np.ndarray, metrics: Sequence[Metric]) -> None:
    """The one check of the entries (:func:`~regime_core.metrics.evaluate_per_query` and its
    summaries twin) that the kernels then trust: ValueError naming the first query without a
    negative (non-gold) candidate when a metric asked for needs one."""
    needing = [m.name for m in metrics if m.family in _NEEDS_NEGATIVES]
    empty = np.flatnonzero(negative_counts == 0)
    if needing and empty.size:
        raise ValueError(
            f"{needing[0]}: query {int(empty[0])} has no negative (non-gold) candidate, "
            f"so {needing[0]} is undefined"
        )
