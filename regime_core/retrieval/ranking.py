"""Rankings: candidates ordered by score, ties by candidate order, and their metrics.

:func:`rank_candidates` is a stable sort of ``-score``: ties keep candidate order, the rule
:func:`regime_core.metrics.rank_of` documents. A :class:`Ranking` holds one arm's ranks, top
lists and what its metrics (:mod:`regime_core.metrics`: hit@k, recall@k, MRR, AUC, margins) are
computed from. It is built from dense scores over padded candidate rows (question mode) or from
a bounded-memory scan (:func:`~regime_core.retrieval.corpus_scan.scan_corpus`, corpus mode),
with bit-identical results.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from regime_core import config
from regime_core import metrics as m
from regime_core.metrics import NegativeStats, QuerySummaries
from regime_core.retrieval.corpus_scan import CorpusScan, scan_corpus
from regime_core.retrieval.pools import CandidatePools, CorpusCandidates
from regime_core.retrieval.queries import MISSING_B_REL, ArmPlan
from regime_core.schema import Example


def rank_candidates(scores: np.ndarray) -> np.ndarray:
    """Positions of each row's candidates, best first: a stable sort of ``-score``.

    Ties keep candidate order; ``-inf`` (padding) sorts last.

    >>> rank_candidates(np.array([[0.2, 0.5, 0.5, -np.inf]], dtype=np.float32))
    array([[1, 2, 0, 3]])
    """
    return np.argsort(-scores, axis=1, kind="stable")


def _position(rows: np.ndarray, row: int) -> int:
    """Where passage ``row`` sits in a candidate list, -1 if it is not a candidate."""
    hits = np.flatnonzero(rows == row)
    return int(hits[0]) if hits.size else -1


@dataclass(frozen=True)
class Ranking:
    """One arm's hop-2 rankings for a set of examples.

    Per query ``i`` (examples the arm could not build a query for are in ``missing``, not here):

    - ``top_pids[i]`` / ``top_scores[i]``: the best ``k`` candidates, best first (ties in
      candidate order); ``k=None`` keeps every candidate.
    - ``candidate_rows[i]`` / ``candidate_scores[i]``: every candidate (rows of the passage
      matrix ``passage_pids``) in candidate order with its score (what per-query AUC and margins
      are computed from); ``passage_pids[row]`` names them. In ``corpus`` mode the scores are
      not kept (they would cost queries × passages floats): ``candidate_scores`` is empty,
      ``candidate_rows`` is built on access, and ``negatives`` holds the statistics of the
      negatives' scores that AUC and the margins need (:class:`~regime_core.metrics.NegativeStats`),
      so every metric is the same, bit for bit.
    - ``target_ranks[i]``: 1-based rank of the hop-2 target among all candidates.
    - ``gold_pids[i]`` / ``gold_ranks[i]``: the example's gold passages (bridge included) and
      their 1-based ranks, 0 for a gold that is not a candidate (the bridge when excluded).
    """

    arm: str
    pool: str
    encoder: str
    alpha: float
    exclude_bridge: bool
    scorer: str
    k: int | None
    query_ids: tuple[str, ...]
    target_pids: tuple[str, ...]
    target_ranks: np.ndarray
    gold_pids: tuple[tuple[str, ...], ...]
    gold_ranks: tuple[np.ndarray, ...]
    top_pids: tuple[tuple[str, ...], ...]
    top_scores: tuple[np.ndarray, ...]
    passage_pids: tuple[str, ...] = field(repr=False)
    candidate_rows: Sequence[np.ndarray] = field(repr=False)
    candidate_scores: tuple[np.ndarray, ...] = field(repr=False)
    missing: tuple[tuple[str, str], ...] = ()
    negatives: NegativeStats | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.query_ids)

    @property
    def n_missing_b_rel(self) -> int:
        """Examples left out because they have no B_rel (for ``union`` and ``knockout``)."""
        return sum(1 for _, reason in self.missing if reason == MISSING_B_REL)

    def missing_counts(self) -> dict[str, int]:
        """How many examples were left out, by reason."""
        return dict(sorted(Counter(reason for _, reason in self.missing).items()))

    def summaries(self) -> QuerySummaries:
        """Target rank, gold ranks (0: not a candidate) and negatives' statistics per query;
        only for rankings that kept statistics instead of scores (corpus mode)."""
        if self.negatives is None:
            raise ValueError(
                "this ranking kept its candidate scores, not summaries; use candidate_scores"
            )
        width = max((len(g) for g in self.gold_ranks), default=0) + 1
        gold = np.zeros((len(self.query_ids), width), dtype=np.int64)
        for i, ranks in enumerate(self.gold_ranks):
            gold[i, : len(ranks)] = ranks
        # the target is gold (metrics.RankedQueries requires it; ranking_metrics adds it)
        listed = np.any(gold[:, :-1] == np.asarray(self.target_ranks)[:, None], axis=1)
        gold[:, -1] = np.where(listed, 0, self.target_ranks)
        return QuerySummaries(
            target_rank=np.asarray(self.target_ranks, dtype=np.int64),
            gold_ranks=gold,
            negatives=self.negatives,
        )

    def positions(self) -> tuple[list[int], list[list[int]]]:
        """Target and gold positions in each query's candidate list (non-candidates dropped)."""
        row_of = {pid: row for row, pid in enumerate(self.passage_pids)}
        targets: list[int] = []
        golds: list[list[int]] = []
        for rows, target, gold in zip(
            self.candidate_rows, self.target_pids, self.gold_pids, strict=True
        ):
            targets.append(_position(rows, row_of[target]))
            positions = [_position(rows, row_of[g]) for g in gold]
            golds.append([pos for pos in positions if pos >= 0])
        return targets, golds

    def per_query_metrics(
        self,
        k_values: Sequence[int] = config.K_VALUES,
        metrics: Sequence[str] | None = None,
    ) -> pd.DataFrame:
        """One row per query (index: query id), one column per metric of
        :mod:`regime_core.metrics` (default: ``default_metrics(k_values)``: hit@k, recall@k,
        all_gold@k, mrr, rank, auc, margin, margin_max, std_margin).

        Every metric sees the query's *candidates* only. With the bridge excluded (the default),
        the golds are the example's gold passages minus the bridge, so ``recall@k`` and
        ``all_gold@k`` ask how many of the *remaining* golds are in the top k: for a two-passage
        question they equal ``hit@k``; they differ for questions with more golds (MuSiQue 3-
        and 4-hop, 2Wiki bridge-comparison). The negatives of ``auc`` and the margins are the
        non-gold candidates. ``mrr`` uses the full ranking, not the run's depth ``k``.
        """
        names = (
            [x.name for x in m.default_metrics(tuple(k_values))]
            if metrics is None
            else list(metrics)
        )
        if self.negatives is not None:
            return m.evaluate_summaries_per_query(self.summaries(), names, query_ids=self.query_ids)
        targets, golds = self.positions()
        return m.evaluate_per_query(
            list(self.candidate_scores), targets, names, gold=golds, query_ids=self.query_ids
        )

    def metrics(
        self,
        k_values: Sequence[int] = config.K_VALUES,
        metrics: Sequence[str] | None = None,
    ) -> dict[str, float]:
        """``{"n": queries ranked, metric: mean over queries, ...}``; see
        :meth:`per_query_metrics`. Means skip undefined values (``std_margin`` with zero spread);
        with no query every mean is NaN."""
        table = self.per_query_metrics(k_values, metrics)
        out: dict[str, float] = {"n": len(self.query_ids)}
        for name in table.columns:
            values = table[name].to_numpy(dtype=float)
            defined = values[~np.isnan(values)]
            out[name] = float(defined.mean()) if defined.size else float("nan")
        return out


# --- building a Ranking ---------------------------------------------------------------------


@dataclass(frozen=True)
class RankingRun:
    """What names one arm's ranking besides its queries: the arm, the encoder's name, α, the
    scoring backend and the depth ``k`` of the top lists (``None``: every candidate)."""

    arm: str
    encoder: str
    alpha: float
    scorer: str
    k: int | None


def _gold_pids(ex: Example) -> tuple[str, ...]:
    return tuple(dict.fromkeys(ex.gold_pids)) or (ex.bridge_pid, ex.target_pid)


def _ranking(
    examples: Sequence[Example],
    plan: ArmPlan,
    pools: CandidatePools,
    run: RankingRun,
    golds: Sequence[tuple[str, ...]],
    ranked: CorpusScan,
    candidate_rows: Sequence[np.ndarray],
    candidate_scores: tuple[np.ndarray, ...],
) -> Ranking:
    """The :class:`Ranking` of ``plan``'s kept examples (``golds``: their gold pids) from the
    ranks and top lists of either path, as padded matrices (``-1`` / ``-inf`` padding)."""
    pids = pools.passage_pids
    real = [rows >= 0 for rows in ranked.top_rows]
    return Ranking(
        arm=run.arm,
        pool=pools.mode,
        encoder=run.encoder,
        alpha=run.alpha,
        exclude_bridge=pools.exclude_bridge,
        scorer=run.scorer,
        k=run.k,
        query_ids=tuple(examples[i].id for i in plan.kept),
        target_pids=tuple(examples[i].target_pid for i in plan.kept),
        target_ranks=ranked.target_ranks,
        gold_pids=tuple(golds),
        gold_ranks=tuple(ranked.gold_ranks[r, : len(g)].copy() for r, g in enumerate(golds)),
        top_pids=tuple(
            tuple(pids[row] for row in rows[ok])
            for rows, ok in zip(ranked.top_rows, real, strict=True)
        ),
        top_scores=tuple(s[ok].copy() for s, ok in zip(ranked.top_scores, real, strict=True)),
        passage_pids=pids,
        candidate_rows=candidate_rows,
        candidate_scores=candidate_scores,
        missing=plan.missing,
        negatives=ranked.negatives,
    )


def build_ranking(
    examples: Sequence[Example],
    plan: ArmPlan,
    pools: CandidatePools,
    scores: np.ndarray,
    order: np.ndarray,
    run: RankingRun,
) -> Ranking:
    """The Ranking of dense ``scores`` over the padded candidates of ``plan``'s kept examples
    (row ``r`` for ``plan.kept[r]``), ``order`` being :func:`rank_candidates` of them."""
    row_of = pools.row_of()
    golds = [_gold_pids(examples[i]) for i in plan.kept]
    n = len(plan.kept)
    width = order.shape[1] if run.k is None else min(run.k, order.shape[1])
    top_rows = np.full((n, width), -1, dtype=np.int64)
    top_scores = np.full((n, width), -np.inf, dtype=np.float32)
    target_ranks = np.zeros(n, dtype=np.int64)
    gold_ranks = np.zeros((n, max((len(g) for g in golds), default=0)), dtype=np.int64)
    candidate_rows: list[np.ndarray] = []
    candidate_scores: list[np.ndarray] = []
    for r, i in enumerate(plan.kept):
        rows = pools.candidates[i]
        n_cand = len(rows)
        cand_scores = scores[r, :n_cand].copy()
        # Padding is -inf and sorts last, so the first n_cand positions are the real ones.
        ranked = order[r, :n_cand]
        rank_of_position = np.empty(n_cand, dtype=np.int64)
        rank_of_position[ranked] = np.arange(1, n_cand + 1)

        def rank(pid: str, rows: np.ndarray = rows, ranks: np.ndarray = rank_of_position) -> int:
            """1-based rank; 0: the passage is not a candidate (the excluded bridge)."""
            pos = _position(rows, row_of[pid])
            return int(ranks[pos]) if pos >= 0 else 0

        target_ranks[r] = rank(examples[i].target_pid)
        gold_ranks[r, : len(golds[r])] = [rank(pid) for pid in golds[r]]
        top = ranked if run.k is None else ranked[: run.k]
        top_rows[r, : top.size] = rows[top]
        top_scores[r, : top.size] = cand_scores[top]
        candidate_rows.append(rows)
        candidate_scores.append(cand_scores)
    dense = CorpusScan(top_rows, top_scores, target_ranks, gold_ranks, negatives=None)
    return _ranking(
        examples, plan, pools, run, golds, dense, tuple(candidate_rows), tuple(candidate_scores)
    )


def scan_ranking(
    examples: Sequence[Example],
    plan: ArmPlan,
    pools: CandidatePools,
    queries: np.ndarray,
    doc_vectors: np.ndarray,
    run: RankingRun,
) -> Ranking:
    """Corpus mode in bounded memory (:func:`~regime_core.retrieval.corpus_scan.scan_corpus`):
    the same Ranking as :func:`build_ranking` over dense scores, with statistics instead of
    scores."""
    if pools.excluded_rows is None:
        raise ValueError("scan_ranking needs corpus-mode pools (candidate_pools(..., 'corpus'))")
    row_of = pools.row_of()
    kept = list(plan.kept)
    golds = [_gold_pids(examples[i]) for i in kept]
    gold_rows = np.full((len(kept), max((len(g) for g in golds), default=0)), -1, np.int64)
    for r, gold in enumerate(golds):
        gold_rows[r, : len(gold)] = [row_of[pid] for pid in gold]
    excluded = pools.excluded_rows[kept] if kept else np.zeros(0, np.int64)
    scan = scan_corpus(
        queries,
        doc_vectors,
        excluded=excluded,
        targets=np.array([row_of[examples[i].target_pid] for i in kept], dtype=np.int64),
        golds=gold_rows,
        k=run.k,
        scorer=run.scorer,
    )
    candidates = CorpusCandidates(len(pools.passages), excluded)
    return _ranking(examples, plan, pools, run, golds, scan, candidates, ())
