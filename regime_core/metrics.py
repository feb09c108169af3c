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
Candidates are ranked by score, descending; **ties are broken by candidate order** (the earlier
candidate ranks first), i.e. a stable descending sort. So, for candidate ``t``::

    rank(t) = 1 + #{j : s_j > s_t} + #{j < t : s_j == s_t}

which is what a TREC run written in :func:`ranking` order *means*. Evaluators (trec_eval,
ir-measures, ranx) ignore the rank column and re-sort by the score column, breaking ties by
document id; a run file agrees with these metrics in every case only if its score column is
tie-free. :func:`run_scores` gives such a column (and is what the tests write).

Metrics
-------
Each metric is named once (``hit@5``, ``recall@5``, ``all_gold@5``, ``mrr``, ``mrr@10``,
``rank``, ``auc``, ``margin``, ``margin_max``, ``std_margin``); :func:`parse_metric` turns a
name into a validated :class:`Metric`, and :data:`METRICS` (one :class:`MetricSpec` per family,
with formula and example) is what the book's glossary is generated from (:func:`glossary`).

>>> evaluate([[0.9, 0.5, 0.7], [0.1, 0.8]], targets=[2, 1], metrics=["hit@1", "mrr"])
{'hit@1': 0.5, 'mrr': 0.75}
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

ScoresLike = Sequence[Sequence[float]] | Sequence[np.ndarray] | np.ndarray
GoldLike = Sequence[Sequence[int]] | None


# --- single-query helpers ----------------------------------------------------------------------


def _as_score_vector(scores: Any, where: str = "scores") -> np.ndarray:
    array = np.asarray(scores, dtype=np.float64)
    if array.ndim != 1:
        raise ValueError(
            f"{where}: expected a 1-D array of candidate scores, got shape {array.shape}"
        )
    if array.size == 0:
        raise ValueError(f"{where}: a query needs at least one candidate score")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{where}: scores must be finite (found NaN or inf)")
    return array


def ranks(scores: Sequence[float] | np.ndarray) -> np.ndarray:
    """1-based rank of every candidate (score descending, ties by candidate order).

    >>> ranks([0.2, 0.9, 0.2, 0.5]).tolist()
    [3, 1, 4, 2]
    """
    s = _as_score_vector(scores)
    order = np.argsort(-s, kind="stable")
    out = np.empty(s.size, dtype=np.int64)
    out[order] = np.arange(1, s.size + 1)
    return out


def ranking(scores: Sequence[float] | np.ndarray) -> np.ndarray:
    """Candidate indices in rank order: the order in which a TREC run lists them.

    >>> ranking([0.2, 0.9, 0.2, 0.5]).tolist()
    [1, 3, 0, 2]
    """
    return np.argsort(-_as_score_vector(scores), kind="stable")


def rank_of(scores: Sequence[float] | np.ndarray, target_idx: int) -> int:
    """1-based rank of candidate ``target_idx``: ``1 + #{s_j > s_t} + #{j < t, s_j == s_t}``.

    >>> rank_of([0.5, 0.9, 0.5], 2)  # ties with candidate 0, which comes first
    3
    """
    s = _as_score_vector(scores)
    t = _check_index(target_idx, s.size, "target_idx")
    ahead = np.count_nonzero(s > s[t]) + np.count_nonzero(s[:t] == s[t])
    return int(ahead) + 1


def run_scores(scores: Sequence[float] | np.ndarray) -> np.ndarray:
    """A tie-free score column for a TREC run: ``n_candidates - rank + 1`` per candidate.

    Any evaluator that re-sorts by score then reproduces :func:`ranking` exactly, whatever its
    own tie rule; write the raw scores alongside (e.g. in the run tag or a sidecar) if needed.

    >>> run_scores([0.2, 0.9, 0.2]).tolist()
    [2.0, 3.0, 1.0]
    """
    r = ranks(scores)
    return (r.size - r + 1).astype(np.float64)


def _check_index(index: Any, n_candidates: int, where: str) -> int:
    if isinstance(index, bool) or not isinstance(index, int | np.integer):
        raise ValueError(f"{where}: expected an integer candidate index, got {index!r}")
    if not 0 <= int(index) < n_candidates:
        raise ValueError(f"{where}: index {index} is outside 0..{n_candidates - 1}")
    return int(index)


# --- the packed representation ---------------------------------------------------------------


@dataclass(frozen=True)
class RankedQueries:
    """Queries packed for the kernels: padded ``(Q, C)`` arrays plus masks.

    ``scores`` is padded with ``-inf``; ``valid`` marks real candidates; ``ranks`` holds 1-based
    ranks (padding ranks after every real candidate); ``gold`` marks gold candidates;
    ``target`` is the target index per query. Build it with :meth:`build`.
    """

    scores: np.ndarray  # (Q, C) float64
    valid: np.ndarray  # (Q, C) bool
    ranks: np.ndarray  # (Q, C) int64
    gold: np.ndarray  # (Q, C) bool
    target: np.ndarray  # (Q,) int64

    @property
    def n_queries(self) -> int:
        return int(self.scores.shape[0])

    @property
    def target_score(self) -> np.ndarray:
        return self.scores[np.arange(self.n_queries), self.target]

    @property
    def target_rank(self) -> np.ndarray:
        return self.ranks[np.arange(self.n_queries), self.target]

    @property
    def negatives(self) -> np.ndarray:
        """(Q, C) mask of real, non-gold candidates."""
        return self.valid & ~self.gold

    @classmethod
    def build(cls, scores: ScoresLike, targets: Sequence[int] | np.ndarray, gold: GoldLike = None):
        """Validate and pack; raises ValueError naming the query index of any bad record."""
        rows = [
            _as_score_vector(row, where=f"scores[{i}]") for i, row in enumerate(_iter_rows(scores))
        ]
        n_queries = len(rows)
        if n_queries == 0:
            raise ValueError("scores: no queries given")
        target_list = list(np.asarray(targets).reshape(-1)) if len(targets) else []
        if len(target_list) != n_queries:
            raise ValueError(
                f"targets: {len(target_list)} target indices for {n_queries} queries in scores"
            )
        if gold is not None and len(gold) != n_queries:
            raise ValueError(f"gold: {len(gold)} gold sets for {n_queries} queries in scores")
        width = max(row.size for row in rows)
        padded = np.full((n_queries, width), -np.inf)
        valid = np.zeros((n_queries, width), dtype=bool)
        gold_mask = np.zeros((n_queries, width), dtype=bool)
        target = np.empty(n_queries, dtype=np.int64)
        for i, row in enumerate(rows):
            padded[i, : row.size] = row
            valid[i, : row.size] = True
            target[i] = _check_index(target_list[i], row.size, f"targets[{i}]")
            if gold is None:
                gold_mask[i, target[i]] = True
                continue
            for g in gold[i]:
                gold_mask[i, _check_index(g, row.size, f"gold[{i}]")] = True
            if not gold_mask[i, target[i]]:
                raise ValueError(f"gold[{i}]: must contain the target index {target[i]}")
        # Stable sort of the negated scores: ties keep candidate order; padding (-inf, last
        # columns) sorts after every finite score.
        order = np.argsort(-padded, axis=1, kind="stable")
        rank_matrix = np.empty_like(order)
        np.put_along_axis(
            rank_matrix, order, np.broadcast_to(np.arange(1, width + 1), order.shape), axis=1
        )
        return cls(scores=padded, valid=valid, ranks=rank_matrix, gold=gold_mask, target=target)


def _iter_rows(scores: ScoresLike) -> list[Any]:
    if isinstance(scores, np.ndarray):
        if scores.ndim != 2:
            raise ValueError(
                f"scores: a NumPy array must be 2-D (queries x candidates), got {scores.shape}"
            )
        return list(scores)
    return list(scores)


# --- kernels: RankedQueries (+ k) -> one value per query -------------------------------------


def _require_negatives(rq: RankedQueries, metric: str) -> np.ndarray:
    negatives = rq.negatives
    counts = negatives.sum(axis=1)
    if np.any(counts == 0):
        bad = int(np.flatnonzero(counts == 0)[0])
        raise ValueError(
            f"{metric}: query {bad} has no negative (non-gold) candidate, so {metric} is undefined"
        )
    return negatives


def hit_at_k(rq: RankedQueries, k: int) -> np.ndarray:
    """1 if the target ranks in the top k, else 0: ``[rank(t) <= k]`` (the paper's R@k)."""
    return (rq.target_rank <= k).astype(np.float64)


def recall_at_k(rq: RankedQueries, k: int) -> np.ndarray:
    """Fraction of the gold passages in the top k: ``|gold ∩ top_k| / |gold|``."""
    in_top = rq.gold & (rq.ranks <= k)
    return in_top.sum(axis=1) / rq.gold.sum(axis=1)


def all_gold_at_k(rq: RankedQueries, k: int) -> np.ndarray:
    """1 if every gold passage is in the top k: ``[max_{g in gold} rank(g) <= k]``."""
    worst_gold_rank = np.where(rq.gold, rq.ranks, 0).max(axis=1)
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
    negatives = _require_negatives(rq, "auc")
    s_t = rq.target_score[:, None]
    below = np.count_nonzero(negatives & (rq.scores < s_t), axis=1)
    tied = np.count_nonzero(negatives & (rq.scores == s_t), axis=1)
    return (below + 0.5 * tied) / negatives.sum(axis=1)


def margin_mean(rq: RankedQueries, k: None = None) -> np.ndarray:
    """Cosine margin against the mean negative: ``s_t - mean_n(s_n)``.

    The default margin: if negative scores are roughly Gaussian with spread σ, then
    ``AUC ≈ Φ(margin / σ)``, a monotone function of this margin (the T1 theorem's form).
    """
    negatives = _require_negatives(rq, "margin")
    mean_negative = np.where(negatives, rq.scores, 0.0).sum(axis=1) / negatives.sum(axis=1)
    return rq.target_score - mean_negative


def margin_max(rq: RankedQueries, k: None = None) -> np.ndarray:
    """Cosine margin against the hardest negative: ``s_t - max_n(s_n)``; > 0 iff the target
    outscores every negative (ties by candidate order aside)."""
    negatives = _require_negatives(rq, "margin_max")
    hardest = np.where(negatives, rq.scores, -np.inf).max(axis=1)
    return rq.target_score - hardest


def standardized_margin(rq: RankedQueries, k: None = None) -> np.ndarray:
    """``(s_t - mean_n(s_n)) / std_n(s_n)`` with the population std (ddof=0).

    NaN where the negatives all score the same (std 0, e.g. a single negative);
    :func:`evaluate` averages over the queries where it is defined.
    """
    negatives = _require_negatives(rq, "std_margin")
    count = negatives.sum(axis=1)
    mean_negative = np.where(negatives, rq.scores, 0.0).sum(axis=1) / count
    centred = np.where(negatives, rq.scores - mean_negative[:, None], 0.0)
    std_negative = np.sqrt((centred**2).sum(axis=1) / count)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (rq.target_score - mean_negative) / std_negative
    return np.where(std_negative > 0, out, np.nan)


# --- registry ------------------------------------------------------------------------------


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


METRICS: dict[str, MetricSpec] = {
    spec.family: spec
    for spec in (
        MetricSpec(
            "hit",
            hit_at_k,
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
            recall_at_k,
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
            all_gold_at_k,
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
            reciprocal_rank,
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
            target_rank,
            "forbidden",
            "Rank of the target",
            "rank = 1 + #{j: s_j > s_t} + #{j < t: s_j == s_t}",
            "scores [0.5, 0.9, 0.5], target 2 -> rank 3",
            False,
            "{1, 2, ...}",
        ),
        MetricSpec(
            "auc",
            auc,
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
            margin_mean,
            "forbidden",
            "Cosine margin: target minus the mean negative (AUC ≈ Φ(margin / σ))",
            "margin = s_t - mean_n(s_n)",
            "target 0.6, negatives [0.2, 0.4] -> 0.3",
            True,
            "[-2, 2] for cosines",
        ),
        MetricSpec(
            "margin_max",
            margin_max,
            "forbidden",
            "Cosine margin against the hardest negative",
            "margin_max = s_t - max_n(s_n)",
            "target 0.6, negatives [0.2, 0.4] -> 0.2",
            True,
            "[-2, 2] for cosines",
        ),
        MetricSpec(
            "std_margin",
            standardized_margin,
            "forbidden",
            "Standardised margin (NaN when the negatives have zero spread)",
            "std_margin = (s_t - mean_n(s_n)) / std_n(s_n), population std",
            "target 0.6, negatives [0.2, 0.4] -> 0.3 / 0.1 = 3.0",
            True,
            "real",
        ),
    )
}

_NAME_PATTERN = re.compile(r"^(?P<family>[a-z_]+)(?:@(?P<k>\d+))?$")


@dataclass(frozen=True)
class Metric:
    """A metric family plus its cutoff, validated on construction; ``name`` is canonical.

    >>> Metric("hit", 5).name
    'hit@5'
    >>> parse_metric("mrr@10") == Metric("mrr", 10)
    True
    """

    family: str
    k: int | None = None

    def __post_init__(self) -> None:
        spec = METRICS.get(self.family)
        if spec is None:
            raise ValueError(f"unknown metric {self.family!r}; known: {', '.join(METRICS)}")
        if self.k is None and spec.cutoff == "required":
            raise ValueError(f"metric {self.family!r} needs a cutoff, e.g. '{self.family}@5'")
        if self.k is not None and spec.cutoff == "forbidden":
            raise ValueError(f"metric {self.family!r} takes no cutoff; write '{self.family}'")
        if self.k is not None and (
            isinstance(self.k, bool) or not isinstance(self.k, int | np.integer) or self.k < 1
        ):
            raise ValueError(
                f"metric {self.family!r}: cutoff k must be an integer >= 1, got {self.k!r}"
            )

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


def parse_metric(name: str | Metric) -> Metric:
    """``"hit@5"`` -> ``Metric("hit", 5)``; raises ValueError for unknown or malformed names."""
    if isinstance(name, Metric):
        return name
    match = _NAME_PATTERN.match(str(name).strip())
    if match is None:
        raise ValueError(
            f"cannot parse metric name {name!r}; expected 'family' or 'family@k', e.g. 'hit@5'"
        )
    k = match.group("k")
    return Metric(match.group("family"), None if k is None else int(k))


def default_metrics(k_values: Sequence[int] | None = None) -> list[Metric]:
    """hit/recall/all_gold at each k of ``config.K_VALUES``, then mrr, auc and the margins."""
    from regime_core.config import K_VALUES

    ks = K_VALUES if k_values is None else tuple(k_values)
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


# --- public verbs -----------------------------------------------------------------------------


def _resolve(metrics: Sequence[str | Metric]) -> list[Metric]:
    if isinstance(metrics, str | Metric):
        metrics = [metrics]
    resolved = [parse_metric(m) for m in metrics]
    if not resolved:
        raise ValueError("metrics: give at least one metric name, e.g. ['hit@5', 'mrr']")
    names = [m.name for m in resolved]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"metrics: duplicate names {duplicates}")
    return resolved


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
    resolved = _resolve(metrics)
    rq = RankedQueries.build(scores, targets, gold)
    if query_ids is not None and len(query_ids) != rq.n_queries:
        raise ValueError(f"query_ids: {len(query_ids)} ids for {rq.n_queries} queries")
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


# --- the same metrics from per-query summaries (no score rows) -------------------------------


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


def _require_summary_negatives(s: QuerySummaries, metric: str) -> NegativeStats:
    counts = s.negatives.count
    if np.any(counts == 0):
        bad = int(np.flatnonzero(counts == 0)[0])
        raise ValueError(
            f"{metric}: query {bad} has no negative (non-gold candidate), so {metric} is undefined"
        )
    return s.negatives


def _summary_mean_negative(neg: NegativeStats) -> np.ndarray:
    return neg.total / neg.count


def _summary_std_margin(s: QuerySummaries, k: None = None) -> np.ndarray:
    neg = _require_summary_negatives(s, "std_margin")
    mean_negative = _summary_mean_negative(neg)
    std_negative = np.sqrt(neg.centred_ss / neg.count)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (neg.target_score - mean_negative) / std_negative
    return np.where(std_negative > 0, out, np.nan)


def _summary_auc(s: QuerySummaries, k: None = None) -> np.ndarray:
    neg = _require_summary_negatives(s, "auc")
    return (neg.below + 0.5 * neg.tied) / neg.count


def _summary_margin(s: QuerySummaries, k: None = None) -> np.ndarray:
    neg = _require_summary_negatives(s, "margin")
    return neg.target_score - _summary_mean_negative(neg)


def _summary_margin_max(s: QuerySummaries, k: None = None) -> np.ndarray:
    neg = _require_summary_negatives(s, "margin_max")
    return neg.target_score - neg.maximum


def _summary_recall(s: QuerySummaries, k: int) -> np.ndarray:
    gold = s.gold_ranks >= 1
    return (gold & (s.gold_ranks <= k)).sum(axis=1) / gold.sum(axis=1)


def _summary_rr(s: QuerySummaries, k: int | None) -> np.ndarray:
    rr = 1.0 / s.target_rank
    return rr if k is None else np.where(s.target_rank <= k, rr, 0.0)


# Each kernel repeats the float operations of its score-row twin above, in the same order, so
# the values are identical (tests/test_corpus_scan.py compares them bit for bit).
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
    resolved = _resolve(metrics)
    n = len(summaries.target_rank)
    if summaries.gold_ranks.shape[0] != n or len(summaries.negatives.count) != n:
        raise ValueError("summaries: target ranks, gold ranks and statistics differ in length")
    if not np.all(np.any(summaries.gold_ranks == summaries.target_rank[:, None], axis=1)):
        raise ValueError("summaries: every query's gold ranks must include its target's rank")
    if query_ids is not None and len(query_ids) != n:
        raise ValueError(f"query_ids: {len(query_ids)} ids for {n} queries")
    index = pd.Index(list(query_ids) if query_ids is not None else range(n), name="qid")
    return pd.DataFrame(
        {m.name: SUMMARY_KERNELS[m.family](summaries, m.k) for m in resolved}, index=index
    )
