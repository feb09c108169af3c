"""Metric kernels: :class:`~regime_core.metrics.ranked.RankedQueries` (+ cutoff ``k``) -> one
float per query. Rank metrics (hit, recall, all_gold, reciprocal rank, rank) and the metrics of
the target against the negatives, the non-gold candidates (AUC and the cosine margins).
The kernels trust their arrays: :func:`~regime_core.metrics.evaluate_per_query` checks them once.
"""

from __future__ import annotations

import numpy as np

from regime_core.metrics.ranked import RankedQueries


def hit_at_k(rq: RankedQueries, k: int) -> np.ndarray:
    """1 if the target ranks in the top k, else 0: ``[rank(t) <= k]`` (the paper's R@k)."""
    return (rq.target_rank <= k).astype(np.float64)


def recall_at_k(rq: RankedQueries, k: int) -> np.ndarray:
    """Fraction of the gold passages in the top k: ``|gold ∩ top_k| / |gold|``."""
    in_top = rq.gold & (rq.ranks <= k)
    return in_top.sum(axis=1) / rq.gold.sum(axis=1)


def all_gold_at_k(rq: RankedQueries, k: int) -> np.ndarray:
    """1 if every gold passage is in the top k: ``[max_{g in gold} rank(g) <= k]``."""
    worst_gold_rank = np.where(rq.gold, rq.ranks, 0).max(axis=1, initial=0)
    return (worst_gold_rank <= k).astype(np.float64)


def reciprocal_rank(rq: RankedQueries, k: int | None) -> np.ndarray:
    """``1 / rank(t)``, or 0 when a cutoff k is given and ``rank(t) > k``; its mean is the MRR."""
    rr = 1.0 / rq.target_rank
    if k is not None:
        rr = np.where(rq.target_rank <= k, rr, 0.0)
    return rr


def target_rank(rq: RankedQueries, k: None = None) -> np.ndarray:
    """The target's 1-based rank (ties by candidate order)."""
    return rq.target_rank.astype(np.float64)


def auc(rq: RankedQueries, k: None = None) -> np.ndarray:
    """Per-query AUC of the target against the negatives, ties counting one half.

    ``AUC = (#{n : s_n < s_t} + 0.5 #{n : s_n == s_t}) / #negatives``: the probability that the
    target outscores a random negative; it is the ROC AUC of that query's scores with the
    target labelled positive and the negatives negative.
    """
    negatives = rq.negatives
    s_t = rq.target_score[:, None]
    below = np.count_nonzero(negatives & (rq.scores < s_t), axis=1)
    tied = np.count_nonzero(negatives & (rq.scores == s_t), axis=1)
    return (below + 0.5 * tied) / negatives.sum(axis=1)


def margin_mean(rq: RankedQueries, k: None = None) -> np.ndarray:
    """Cosine margin against the mean negative: ``s_t - mean_n(s_n)``.

    The default margin: if negative scores are roughly Gaussian with spread σ, then
    ``AUC ≈ Φ(margin / σ)``, a monotone function of this margin (the T1 theorem's form).
    """
    negatives = rq.negatives
    mean_negative = np.where(negatives, rq.scores, 0.0).sum(axis=1) / negatives.sum(axis=1)
    return rq.target_score - mean_negative


def margin_max(rq: RankedQueries, k: None = None) -> np.ndarray:
    """Cosine margin against the hardest negative: ``s_t - max_n(s_n)``; > 0 iff the target
    outscores every negative (ties by candidate order aside)."""
    negatives = rq.negatives
    hardest = np.where(negatives, rq.scores, -np.inf).max(axis=1, initial=-np.inf)
    return rq.target_score - hardest


def standardized_margin(rq: RankedQueries, k: None = None) -> np.ndarray:
    """``(s_t - mean_n(s_n)) / std_n(s_n)`` with the population std (ddof=0).

    NaN where the negatives all score the same (std 0, e.g. a single negative);
    :func:`evaluate` averages over the queries where it is defined.
    """
    negatives = rq.negatives
    count = negatives.sum(axis=1)
    mean_negative = np.where(negatives, rq.scores, 0.0).sum(axis=1) / count
    centred = np.where(negatives, rq.scores - mean_negative[:, None], 0.0)
    std_negative = np.sqrt((centred**2).sum(axis=1) / count)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (rq.target_score - mean_negative) / std_negative
    return np.where(std_negative > 0, out, np.nan)
