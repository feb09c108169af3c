"""Ranks and the tie rule, and queries packed for the metric kernels (:class:`RankedQueries`).

Candidates are ranked by score, descending; **ties are broken by candidate order** (the earlier
candidate ranks first), i.e. a stable descending sort. So, for candidate ``t``::

    rank(t) = 1 + #{j : s_j > s_t} + #{j < t : s_j == s_t}

which is what a TREC run written in :func:`ranking` order *means*. Evaluators (trec_eval,
ir-measures, ranx) ignore the rank column and re-sort by the score column, breaking ties by
document id; a run file agrees with these metrics in every case only if its score column is
tie-free. :func:`run_scores` gives such a column (and is what the tests write).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from regime_core.inputs import Number, check_value

ScoresLike = Sequence[Sequence[float]] | Sequence[np.ndarray] | np.ndarray
GoldLike = Sequence[Sequence[int]] | None


# --- single-query helpers ----------------------------------------------------------------------


def _as_score_vector(scores: Any, where: str = "scores") -> np.ndarray:
    # NaN would sort last without a word, so a NaN score would silently rank last
    array = np.asarray(scores, dtype=np.float64)
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
    return int(ranks(scores)[_check_index(target_idx, len(scores), "target_idx")])


def run_scores(scores: Sequence[float] | np.ndarray) -> np.ndarray:
    """A tie-free score column for a TREC run: ``n_candidates - rank + 1`` per candidate.

    Any evaluator that re-sorts by score then reproduces :func:`ranking` exactly, whatever its
    own tie rule; write the raw scores alongside (e.g. in the run tag or a sidecar) if needed.

    >>> run_scores([0.2, 0.9, 0.2]).tolist()
    [2.0, 3.0, 1.0]
    """
    r = ranks(scores)
    return (r.size - r + 1).astype(np.float64)


def _check_index(index: Any, n_candidates: int, field: str) -> int:
    # a negative index would wrap around to the last candidates without a word
    return check_value(
        Number(low=0, high=n_candidates - 1, integer=True), index, where="metrics", field=field
    )


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
        rows = [_as_score_vector(row, where=f"scores[{i}]") for i, row in enumerate(scores)]
        n_queries = len(rows)
        target_list = list(np.asarray(targets).reshape(-1)) if len(targets) else []
        if len(target_list) != n_queries:
            raise ValueError(
                f"targets: {len(target_list)} target indices for {n_queries} queries in scores"
            )
        if gold is not None and len(gold) != n_queries:
            raise ValueError(f"gold: {len(gold)} gold sets for {n_queries} queries in scores")
        width = max((row.size for row in rows), default=0)
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
