"""Retrieval metrics: pure, vectorised kernels over score arrays, and a registry naming each once.

Inputs, per query
-----------------
* ``scores``: one float score per candidate passage (higher is better). Queries may have
  different numbers of candidates, so the public functions take a *sequence of 1-D arrays* (a
  rectangular 2-D array also works). Internally they are packed into a padded ``(Q, C)`` array
  plus a boolean ``valid`` mask (:class:`RankedQueries`); padded cells never rank, count or score.
* ``targets``: the index (into that query's candidates) of the hop-2 target passage.
* ``gold`` (optional): the indices of every gold passage of the query (for ``recall@k`` and
  ``all_gold@k``); it defaults to ``{target}`` and must contain the target. The *negatives* of
  ``auc`` and the margins are the candidates that are not gold.

Ranks and ties
--------------
Candidates are ranked by score, descending; **ties are broken by candidate order**:
``rank(t) = 1 + #{j : s_j > s_t} + #{j < t : s_j == s_t}``, a stable descending sort. What that
means for TREC run files and other evaluators: :mod:`~regime_core.metrics.ranked`.

Metrics
-------
Each metric is named once (``hit@5``, ``recall@5``, ``all_gold@5``, ``mrr``, ``mrr@10``,
``rank``, ``auc``, ``margin``, ``margin_max``, ``std_margin``); :func:`parse_metric` turns a
name into a validated :class:`Metric`, and :data:`METRICS` (one :class:`MetricSpec` per family,
with formula and example) is what the book's glossary is generated from
(:func:`~regime_core.metrics.registry.glossary`).

>>> evaluate([[0.9, 0.5, 0.7], [0.1, 0.8]], targets=[2, 1], metrics=["hit@1", "mrr"])
{'hit@1': 0.5, 'mrr': 0.75}

Modules
-------
:mod:`~regime_core.metrics.ranked` (ranks, the tie rule, the packed queries),
:mod:`~regime_core.metrics.kernels` (one value per query), :mod:`~regime_core.metrics.registry`
(names, metadata, glossary), :mod:`~regime_core.metrics.evaluation` (the verbs over score rows),
:mod:`~regime_core.metrics.summaries` (the same metrics from per-query summaries). Every public
name is importable from here (``from regime_core.metrics import evaluate``).
"""

from regime_core.metrics.evaluation import evaluate, evaluate_per_query
from regime_core.metrics.kernels import (
    all_gold_at_k,
    auc,
    hit_at_k,
    margin_max,
    margin_mean,
    recall_at_k,
    reciprocal_rank,
    standardized_margin,
    target_rank,
)
from regime_core.metrics.ranked import (
    GoldLike,
    RankedQueries,
    ScoresLike,
    rank_of,
    ranking,
    ranks,
    run_scores,
)
from regime_core.metrics.registry import (
    METRICS,
    NEGATIVE_METRICS,
    Metric,
    MetricSpec,
    default_metrics,
    glossary,
    parse_metric,
    resolve_metrics,
)
from regime_core.metrics.summaries import (
    SUMMARY_KERNELS,
    NegativeStats,
    QuerySummaries,
    evaluate_summaries_per_query,
)

__all__ = [
    "METRICS",
    "NEGATIVE_METRICS",
    "SUMMARY_KERNELS",
    "GoldLike",
    "Metric",
    "MetricSpec",
    "NegativeStats",
    "QuerySummaries",
    "RankedQueries",
    "ScoresLike",
    "all_gold_at_k",
    "auc",
    "default_metrics",
    "evaluate",
    "evaluate_per_query",
    "evaluate_summaries_per_query",
    "glossary",
    "hit_at_k",
    "margin_max",
    "margin_mean",
    "parse_metric",
    "rank_of",
    "ranking",
    "ranks",
    "recall_at_k",
    "reciprocal_rank",
    "resolve_metrics",
    "run_scores",
    "standardized_margin",
    "target_rank",
]
