"""The public verbs over score rows: :func:`evaluate_per_query` and :func:`evaluate`."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from regime_core.metrics.ranked import GoldLike, RankedQueries, ScoresLike
from regime_core.metrics.registry import Metric, check_negatives, resolve_metrics


def evaluate_per_query(
    scores: ScoresLike,
    targets: Sequence[int] | np.ndarray,
    metrics: Sequence[str | Metric],
    *,
    gold: GoldLike = None,
    query_ids: Sequence[str] | None = None,
) -> pd.DataFrame:
    """One row per query, one float column per metric (canonical names), in the given order.

    >>> evaluate_per_query([[0.9, 0.5, 0.7]], [2], ["rank", "auc"]).iloc[0].tolist()
    [2.0, 0.5]
    """
    resolved = resolve_metrics(metrics)
    rq = RankedQueries.build(scores, targets, gold)
    check_negatives(rq.negatives.sum(axis=1), resolved)
    index = pd.Index(list(query_ids) if query_ids is not None else range(rq.n_queries), name="qid")
    return pd.DataFrame({m.name: m.per_query(rq) for m in resolved}, index=index)


def evaluate(
    scores: ScoresLike,
    targets: Sequence[int] | np.ndarray,
    metrics: Sequence[str | Metric],
    *,
    gold: GoldLike = None,
) -> dict[str, float]:
    """Mean of each metric over queries (``std_margin``: over the queries where it is defined).

    >>> evaluate([[0.9, 0.5, 0.7]], [2], ["hit@1", "hit@2"])
    {'hit@1': 0.0, 'hit@2': 1.0}
    """
    table = evaluate_per_query(scores, targets, metrics, gold=gold)
    return {name: _mean_where_defined(table[name].to_numpy()) for name in table.columns}


def _mean_where_defined(values: np.ndarray) -> float:
    defined = values[~np.isnan(values)]
    return float(defined.mean()) if defined.size else float("nan")
