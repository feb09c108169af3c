"""Corpus-mode retrieval in bounded memory: exact scores streamed by blocks of queries.

In ``corpus`` pool mode every question is scored against every passage. Materialising the
``(queries, passages)`` score matrix (and its argsort) costs memory in proportion to
``queries × passages``; :func:`scan_corpus` instead scores one block of queries at a time
against all passages (an exact inner product, numpy BLAS or faiss ``IndexFlatIP``) and keeps
per query only what the callers use:

- the top ``k`` candidates (passage rows and scores), best first, ties in candidate order;
- the exact 1-based rank of the target and of each gold passage,
  ``1 + #{j : s_j > s_g} + #{j before g : s_j == s_g}`` (:func:`regime_core.metrics.rank_of`);
- :class:`~regime_core.metrics.NegativeStats`: what ``auc`` and the margins need from the
  negatives (count below / tied with the target, sum, centred sum of squares, maximum).

Memory is ``O(block × passages + passages × d)``: the block is sized so that its score matrix
stays under :data:`BLOCK_CELLS` cells.

Identical results, not merely close ones
----------------------------------------
The numbers equal those of the dense path (:func:`~regime_core.retrieval.scoring.score_candidates`,
:func:`~regime_core.retrieval.ranking.rank_candidates` and :mod:`regime_core.metrics` over full
rows)
bit for bit, because every step does the same floating-point operations in the same order:

- Scores: numpy's do not depend on the block of queries they are computed in
  (:func:`~regime_core.retrieval.scoring.exact_products` says why). faiss switches
  kernel below ``distance_compute_blas_threshold`` (20) queries, so the blocks here subdivide the
  dense path's blocks of :data:`QUERY_BLOCK` queries and never make a sub-block smaller than that
  threshold unless the dense block itself was.
- Statistics: a block holds each query's *whole* row, so the sum and the centred sum of squares
  of the negatives are computed exactly as :mod:`regime_core.metrics` computes them (float64,
  golds zeroed, the row padded with zeros to the common width, numpy's pairwise sum), not from
  a running sum of squares, which would differ in the last bits (and cancel badly).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from regime_core.metrics import NegativeStats
from regime_core.retrieval.scoring import (
    QUERY_BLOCK,
    faiss_score_block,
    numpy_score_block,
)
from regime_core.retrieval.vectors import Vectors, dense, is_sparse

# Cells (queries × passages) of one block's float32 score matrix: 2**25 cells = 128 MiB.
BLOCK_CELLS = 2**25
# Smallest query block each backend scores with the same kernel as a large one (see above).
_MIN_BLOCK = {"numpy": 2, "faiss": 20}


@dataclass(frozen=True)
class CorpusScan:
    """Per query ``i`` of :func:`scan_corpus`: its best ``k`` candidates (passage rows and
    float32 scores, best first, ties in candidate order; ``-1`` / ``-inf`` pad a row with fewer
    candidates than the width), the 1-based ranks of its target and of each gold (0: padding or
    not a candidate), and the negatives' statistics (None when not asked for)."""

    top_rows: np.ndarray  # (n, width) int64
    top_scores: np.ndarray  # (n, width) float32
    target_ranks: np.ndarray  # (n,) int64
    gold_ranks: np.ndarray  # (n, g) int64
    negatives: NegativeStats | None


def default_block(n_passages: int, scorer: str = "numpy") -> int:
    """Queries per block so that one block's scores stay under :data:`BLOCK_CELLS` cells.

    >>> default_block(6_641), default_block(1_000_000), default_block(10_000_000, "faiss")
    (256, 33, 20)
    """
    fits = BLOCK_CELLS // max(n_passages, 1)
    return max(_MIN_BLOCK[scorer], min(QUERY_BLOCK, fits))


def query_blocks(n: int, block: int, min_block: int = 2) -> Iterator[tuple[int, int]]:
    """``(start, stop)`` sub-blocks of ``max(block, min_block)`` queries or fewer, subdividing
    blocks of :data:`QUERY_BLOCK`; a remainder smaller than ``min_block`` joins its neighbour, so
    a sub-block is smaller than ``min_block`` only where the dense path's block was too.

    >>> list(query_blocks(7, 3))
    [(0, 3), (3, 7)]
    >>> list(query_blocks(258, 300))
    [(0, 256), (256, 258)]
    >>> list(query_blocks(257, 1))[-3:]
    [(252, 254), (254, 256), (256, 257)]
    """
    block = max(block, min_block)
    for outer in range(0, n, QUERY_BLOCK):
        end = min(outer + QUERY_BLOCK, n)
        start = outer
        while start < end:
            stop = min(start + block, end)
            if end - stop < min_block:
                stop = end
            yield start, stop
            start = stop


def _top_positions(scores: np.ndarray, k: int | None) -> np.ndarray:
    """The first ``k`` positions of a stable sort of ``-scores``, without sorting the row.

    Every candidate at or above the k-th largest score is selected, in position order; a stable
    sort of those by ``-score`` keeps ties in position order, so its first ``k`` are exactly the
    first ``k`` of the full stable sort.
    """
    n = scores.size
    if k is None or k >= n:
        return np.argsort(-scores, kind="stable")
    if k == 0:
        return np.zeros(0, dtype=np.int64)
    kth = np.partition(scores, n - k)[n - k]
    selected = np.flatnonzero(scores >= kth)
    return selected[np.argsort(-scores[selected], kind="stable")][:k]


def _rank(scores: np.ndarray, position: int) -> int:
    """``1 + #{s_j > s_t} + #{j < t : s_j == s_t}``: the stable descending sort's rank."""
    s_t = scores[position]
    ahead = np.count_nonzero(scores > s_t) + np.count_nonzero(scores[:position] == s_t)
    return int(ahead) + 1


def scan_corpus(
    queries: np.ndarray,
    documents: Vectors,
    *,
    excluded: np.ndarray,
    targets: np.ndarray,
    golds: np.ndarray | None = None,
    k: int | None = 0,
    scorer: str = "numpy",
    block: int | None = None,
    negatives: bool = True,
) -> CorpusScan:
    """Rank every passage except ``excluded[i]`` for each query, streamed by query blocks.

    Query ``i``'s candidates are the passage rows ``0..N-1`` without ``excluded[i]`` (``-1``:
    none), in row order, which is the tie-breaking order. ``targets[i]`` is the target's row
    (a candidate); ``golds[i]`` the gold rows (``-1`` padding; the target is gold whether listed
    or not; a gold that is not a candidate gets rank 0). The negatives are the candidates that
    are not gold. ``k``: top candidates kept (``None``: all; 0: none). ``negatives=False``
    skips the statistics (ranks only). ``block``: queries per product (default
    :func:`default_block`).
    """
    queries = np.ascontiguousarray(queries, dtype=np.float32)
    # numpy multiplies sparse (CSR) passages as they are; faiss needs them dense, once, here
    if scorer == "faiss" or not is_sparse(documents):
        documents = np.ascontiguousarray(dense(documents))
    n, n_passages = len(queries), documents.shape[0]
    # never the excluded row: an example's target is not its bridge (Example.validate)
    excluded = np.asarray(excluded).astype(np.int64, copy=False)
    targets = np.asarray(targets).astype(np.int64, copy=False)
    gold_rows = (
        np.full((n, 0), -1, np.int64)
        if golds is None
        else np.asarray(golds).astype(np.int64, copy=False)
    )
    n_candidates = n_passages - (excluded >= 0)
    # metrics.RankedQueries pads every row to the widest; its sums see those zeros too.
    width = int(n_candidates.max()) if n else 0
    top_width = width if k is None else min(int(k), width)
    top_rows = np.full((n, top_width), -1, dtype=np.int64)
    top_scores = np.full((n, top_width), -np.inf, dtype=np.float32)
    target_ranks = np.zeros(n, dtype=np.int64)
    gold_ranks = np.zeros(gold_rows.shape, dtype=np.int64)
    stats = {
        name: np.zeros(n, dtype=dtype)
        for name, dtype in (
            ("target_score", np.float64),
            ("count", np.int64),
            ("below", np.int64),
            ("tied", np.int64),
            ("total", np.float64),
            ("centred_ss", np.float64),
            ("maximum", np.float64),
        )
    }
    if n == 0:
        return CorpusScan(
            top_rows,
            top_scores,
            target_ranks,
            gold_ranks,
            NegativeStats(**stats) if negatives else None,
        )
    if block is None:
        block = default_block(n_passages, scorer)
    score_block = (numpy_score_block if scorer == "numpy" else faiss_score_block)(documents)

    for start, stop in query_blocks(n, block, _MIN_BLOCK[scorer]):
        scores = score_block(queries[start:stop])
        for r, i in enumerate(range(start, stop)):
            ex = int(excluded[i])
            cand = np.delete(scores[r], ex) if ex >= 0 else scores[r]

            def position(row: int, ex: int = ex) -> int:
                return row - 1 if 0 <= ex < row else row

            t = position(int(targets[i]))
            target_ranks[i] = _rank(cand, t)
            gold_positions = {t}
            for j, row in enumerate(gold_rows[i]):
                if row >= 0 and row != ex:
                    gold_ranks[i, j] = _rank(cand, position(int(row)))
                    gold_positions.add(position(int(row)))
            if top_width:
                top = _top_positions(cand, top_width)
                top_rows[i, : top.size] = np.where((ex >= 0) & (top >= ex), top + 1, top)
                top_scores[i, : top.size] = cand[top]
            if negatives:
                _negative_stats(cand, sorted(gold_positions), t, width, stats, i)
        # Free this block before the next product allocates its own: else two are alive.
        del scores, cand
    return CorpusScan(
        top_rows=top_rows,
        top_scores=top_scores,
        target_ranks=target_ranks,
        gold_ranks=gold_ranks,
        negatives=NegativeStats(**stats) if negatives else None,
    )


def _negative_stats(
    cand: np.ndarray,
    gold_positions: list[int],
    target: int,
    width: int,
    out: dict[str, np.ndarray],
    i: int,
) -> None:
    """Fill ``out[...][i]`` with the negatives' statistics, computed as metrics.py does."""
    scores = np.zeros(width, dtype=np.float64)
    scores[: cand.size] = cand
    s_t = scores[target]
    gold = np.asarray(gold_positions, dtype=np.int64)
    count = cand.size - gold.size
    golds_below = np.count_nonzero(scores[gold] < s_t)
    golds_tied = np.count_nonzero(scores[gold] == s_t)
    out["target_score"][i] = s_t
    out["count"][i] = count
    out["below"][i] = np.count_nonzero(scores[: cand.size] < s_t) - golds_below
    out["tied"][i] = np.count_nonzero(scores[: cand.size] == s_t) - golds_tied
    # metrics.margin_mean: np.where(negatives, scores, 0.0).sum() over the padded row
    scores[gold] = 0.0
    total = scores.sum()
    out["total"][i] = total
    if count == 0:
        out["maximum"][i] = -np.inf
        return
    mean = total / count
    # metrics.standardized_margin: np.where(negatives, scores - mean, 0.0), squared, summed
    centred = scores - mean
    centred[gold] = 0.0
    centred[cand.size :] = 0.0
    out["centred_ss"][i] = (centred**2).sum()
    negative = np.ones(cand.size, dtype=bool)
    negative[gold] = False
    out["maximum"][i] = cand[negative].max()
