"""The same metrics from per-query summaries instead of score rows (corpus mode, bounded
memory): :class:`NegativeStats`, :class:`QuerySummaries` and one kernel per metric family that
repeats the float operations of its score-row twin, so the values are bit-identical.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from regime_core.metrics.registry import Metric, check_negatives, resolve_metrics


@dataclass(frozen=True)
class NegativeStats:
    """What ``auc`` and the margins need from one query's negatives, per query (float64).

    ``target_score``; ``count`` negatives, ``below`` / ``tied`` of them scoring below / equal
    to the target; ``total`` = Σ s_n and ``centred_ss`` = Σ (s_n - total/count)² computed as
    :func:`auc`, :func:`margin_mean` and :func:`standardized_margin` compute them (so the
    metrics are bit-identical); ``maximum`` = max s_n (``-inf`` without a negative).
    :func:`regime_core.retrieval.corpus_scan.scan_corpus` streams them without keeping score rows.
    """

    target_score: np.ndarray
    count: np.ndarray
    below: np.ndarray
    tied: np.ndarray
    total: np.ndarray
    centred_ss: np.ndarray
    maximum: np.ndarray

    def subset(self, keep: np.ndarray) -> NegativeStats:
        """The statistics of the queries ``keep`` (indices or a boolean mask)."""
        return NegativeStats(
            **{name: getattr(self, name)[keep] for name in self.__dataclass_fields__}
        )


@dataclass(frozen=True)
class QuerySummaries:
    """Per query: the target's rank, the gold ranks (0: padding or not a candidate; the target
    must be among them) and the negatives' statistics: all any metric of :data:`METRICS` needs.
    """

    target_rank: np.ndarray  # (Q,) int64
    gold_ranks: np.ndarray  # (Q, G) int64
    negatives: NegativeStats


def _summary_mean_negative(neg: NegativeStats) -> np.ndarray:
    return neg.total / neg.count


def _summary_std_margin(s: QuerySummaries, k: None = None) -> np.ndarray:
    neg = s.negatives
    mean_negative = _summary_mean_negative(neg)
    std_negative = np.sqrt(neg.centred_ss / neg.count)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (neg.target_score - mean_negative) / std_negative
    return np.where(std_negative > 0, out, np.nan)


def _summary_auc(s: QuerySummaries, k: None = None) -> np.ndarray:
    neg = s.negatives
    return (neg.below + 0.5 * neg.tied) / neg.count


def _summary_margin(s: QuerySummaries, k: None = None) -> np.ndarray:
    neg = s.negatives
    return neg.target_score - _summary_mean_negative(neg)


def _summary_margin_max(s: QuerySummaries, k: None = None) -> np.ndarray:
    neg = s.negatives
    return neg.target_score - neg.maximum


def _summary_recall(s: QuerySummaries, k: int) -> np.ndarray:
    gold = s.gold_ranks >= 1
    return (gold & (s.gold_ranks <= k)).sum(axis=1) / gold.sum(axis=1)


def _summary_rr(s: QuerySummaries, k: int | None) -> np.ndarray:
    rr = 1.0 / s.target_rank
    return rr if k is None else np.where(s.target_rank <= k, rr, 0.0)


# Each kernel repeats the float operations of its score-row twin in metrics.kernels, in the same
# order, so the values are identical (tests/test_retrieval_corpus_scan.py compares them bit for
# bit).
SUMMARY_KERNELS: dict[str, Callable[..., np.ndarray]] = {
    "hit": lambda s, k: (s.target_rank <= k).astype(np.float64),
    "recall": _summary_recall,
    "all_gold": lambda s, k: (s.gold_ranks.max(axis=1) <= k).astype(np.float64),
    "mrr": _summary_rr,
    "rank": lambda s, k=None: s.target_rank.astype(np.float64),
    "auc": _summary_auc,
    "margin": _summary_margin,
    "margin_max": _summary_margin_max,
    "std_margin": _summary_std_margin,
}


def evaluate_summaries_per_query(
    summaries: QuerySummaries,
    metrics: Sequence[str | Metric],
    *,
    query_ids: Sequence[str] | None = None,
) -> pd.DataFrame:
    """:func:`evaluate_per_query` from :class:`QuerySummaries` instead of score rows: the same
    table, bit for bit, for candidates scored in bounded memory (corpus mode)."""
    resolved = resolve_metrics(metrics)
    check_negatives(summaries.negatives.count, resolved)
    n = len(summaries.target_rank)
    index = pd.Index(list(query_ids) if query_ids is not None else range(n), name="qid")
    return pd.DataFrame(
        {m.name: SUMMARY_KERNELS[m.family](summaries, m.k) for m in resolved}, index=index
    )
