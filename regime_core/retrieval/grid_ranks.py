"""Target ranks for many weightings of ``B_rel``: each weight's exact ranks, with what the weights
share computed once.

Question pools (:func:`pool_grid_ranks`): each block of questions densifies its question,
``B_rel`` and candidate vectors once for every weight, then each weight costs its combined
queries and one call of the pool kernel (the same float32 values through the same kernel as
:func:`~regime_core.retrieval.score_candidates`, so the same scores bit for bit).

Corpus pools (:func:`grid_target_ranks`): no exact scan per weight.

Under the query ``normalise(f(q_i) + w·f(B_i))`` every passage's score is, up to the float32
rounding of the query vector, ``(f(q_i)·d + w·f(B_i)·d) / ‖f(q_i) + w·f(B_i)‖``. So for a grid
of weights the two products ``Pq = f(q)·d`` and ``PB = f(B)·d`` are computed once (float64) and
each weight costs a few vector operations per passage instead of a ``d``-long product.

The ranks are the exact ones of :func:`~regime_core.retrieval.corpus_scan.scan_corpus` (tested
against it), because an approximate score only ever decides a comparison it cannot get wrong:

- ``u = c / ‖c‖`` with ``c = f(q) + w₃₂·f(B)`` in float64 is the direction; ``q_used`` the
  float32 query :func:`~regime_core.retrieval.combine_query_vectors` actually makes
  (:func:`~regime_core.retrieval.queries.combine_union_vectors`, the same bits). By
  Cauchy–Schwarz ``|q_used·d − u·d| ≤ δ·‖d‖`` with ``δ = ‖q_used − u‖``; the exact score rounds
  its float64 sum once to float32 (``≤ 2⁻²⁴`` of its magnitude), and the float64 products carry
  ``O(dim·2⁻⁵³)`` relative error. ``eps`` (doubled for safety) bounds the sum of these, so every
  passage's exact score ``s_j`` is within ``eps`` of its approximation ``a_j``.
- Passages with ``a_j > a_t + 2·eps`` certainly score above the target (``s_j > s_t``), those
  with ``a_j < a_t − 2·eps`` certainly below; the others (near-ties, the target among them) are
  scored exactly, in one call of the scan's own kernel, and ranked by the scan's rule
  ``1 + #{s_j > s_t} + #{j before t : s_j == s_t}``. When the target is the only one (the
  common case), that rule gives ``1 + #{a_j > a_t + 2·eps}`` without any exact score.
- A zero combined query, any non-finite value, or a bound that is not finite: that query's
  whole row is scored exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from regime_core.retrieval.corpus_scan import BLOCK_CELLS, _rank
from regime_core.retrieval.queries import combine_union_vectors
from regime_core.retrieval.scoring import (
    _F64_CELLS,
    _POOL_KERNELS,
    QUERY_BLOCK,
    default_scorer,
    exact_products,
)
from regime_core.retrieval.vectors import Vectors, dense, dense_rows, is_sparse, rows_in_blocks

_F32_UNIT = 2.0**-23  # twice float32's rounding error (2^-24 of the magnitude)
_F64_UNIT = 2.0**-53
_F32_SAFE = 1e37  # beyond this a float32 score may overflow: score the row exactly


class _Documents:
    """The passages as the scan multiplies them: float32 values, float64 products."""

    def __init__(self, documents: Vectors) -> None:
        self.sparse = is_sparse(documents)
        if self.sparse:
            self.csr = documents.tocsr().astype(np.float64)
            norms2 = np.asarray(self.csr.multiply(self.csr).sum(axis=1)).ravel()
            self.shape = self.csr.shape
        else:
            self.d32 = np.ascontiguousarray(dense(documents), dtype=np.float32)
            self.shape = self.d32.shape
            norms2 = np.zeros(self.shape[0])
            rows = max(1, _F64_CELLS // max(1, self.shape[1]))
            for start in range(0, self.shape[0], rows):
                chunk = self.d32[start : start + rows].astype(np.float64)
                norms2[start : start + rows] = np.einsum("ij,ij->i", chunk, chunk)
        with np.errstate(invalid="ignore", over="ignore"):
            # a little above the largest norm (its own float64 rounding)
            self.dmax = float(np.sqrt(norms2.max())) * (1 + 1e-9) if len(norms2) else 0.0

    def products64(self, vectors: np.ndarray) -> np.ndarray:
        """``(b, m)`` float64 products of float32 ``vectors`` with every passage."""
        v64 = np.asarray(vectors, dtype=np.float32).astype(np.float64)
        if self.sparse:
            return np.ascontiguousarray(np.asarray(self.csr @ v64.T).T)
        out = np.empty((len(v64), self.shape[0]))
        rows = max(1, _F64_CELLS // max(1, self.shape[1]))
        for start in range(0, self.shape[0], rows):
            out[:, start : start + rows] = v64 @ self.d32[start : start + rows].astype(np.float64).T
        return out

    def exact(self, query: np.ndarray, rows: np.ndarray | None) -> np.ndarray:
        """The scan's float32 scores of one query against ``rows`` (None: every passage)."""
        if self.sparse:
            csr = self.csr if rows is None else self.csr[rows]
            product = csr @ np.asarray(query, dtype=np.float64)[:, None]
            return np.asarray(product, dtype=np.float32).ravel()
        docs = self.d32 if rows is None else self.d32[rows]
        return exact_products(query[None, :], docs)[0]


def _full_rank(docs: _Documents, query: np.ndarray, ex: int, target: int) -> int:
    """The scan's rank from the query's whole exact row (``scan_corpus``'s own steps)."""
    scores = docs.exact(query, None)
    cand = np.delete(scores, ex) if ex >= 0 else scores
    return _rank(cand, target - 1 if 0 <= ex < target else target)


def pool_grid_ranks(
    question_vectors: Vectors,
    b_rel_vectors: Vectors,
    documents: Vectors,
    candidates: np.ndarray,
    targets: np.ndarray,
    weights: np.ndarray,
) -> np.ndarray:
    """``(g, n)`` 1-based ranks of candidate position ``targets[i]`` among ``candidates[i]``
    (passage rows, ``-1`` padding) under ``normalise(f(q_i) + weights[r, i]·f(B_i))``, equal to
    :func:`~regime_core.retrieval.score_candidates` and
    :func:`~regime_core.retrieval.rank_candidates` run once per weight row: ties go to the
    earlier candidate, so a rank is ``1 + #{s_j > s_t} + #{j < t : s_j == s_t}``. Per block of
    :data:`~regime_core.retrieval.scoring.QUERY_BLOCK` questions (the blocks in which
    ``score_candidates`` densifies sparse passages) the vectors are densified once for all rows.
    """
    w = np.asarray(weights, dtype=np.float64)
    kernel = _POOL_KERNELS[default_scorer(candidates, documents.shape[0])]
    ranks = np.zeros(w.shape, dtype=np.int64)
    for part, rows, local in rows_in_blocks(candidates, QUERY_BLOCK):
        questions = np.arange(question_vectors.shape[0])[part]
        q, b = dense_rows(question_vectors, questions), dense_rows(b_rel_vectors, questions)
        docs = dense_rows(documents, rows)
        real, at = local >= 0, np.arange(local.shape[1])
        target = np.asarray(targets[part], dtype=np.int64)[:, None]
        for r in range(w.shape[0]):
            scores = kernel(combine_union_vectors(q, b, w[r, part]), docs, local)
            s_t = np.take_along_axis(scores, target, axis=1)
            ahead = (scores > s_t) | ((scores == s_t) & (at < target))
            ranks[r, part] = 1 + np.count_nonzero(ahead & real, axis=1)
    return ranks


def grid_target_ranks(
    question_vectors: Vectors,
    b_rel_vectors: Vectors,
    documents: Vectors,
    weights: np.ndarray,
    *,
    excluded: np.ndarray,
    targets: np.ndarray,
    block: int | None = None,
) -> np.ndarray:
    """``(g, n)`` 1-based ranks of passage row ``targets[i]`` among every passage but
    ``excluded[i]`` (``-1``: none) under ``normalise(f(q_i) + weights[r, i]·f(B_i))``, equal to
    :func:`~regime_core.retrieval.corpus_scan.scan_corpus` run once per weight row (module
    docstring). ``targets`` and ``excluded`` are checked by the caller (passage rows, the
    target a candidate). ``block``: questions per product (default: four float64 ``(block,
    passages)`` matrices, the two products and two scratch ones, under
    :data:`~regime_core.retrieval.corpus_scan.BLOCK_CELLS` cells).
    """
    w = np.asarray(weights, dtype=np.float64)
    n = question_vectors.shape[0]
    docs = _Documents(documents)
    n_passages = docs.shape[0]
    excluded = np.asarray(excluded, dtype=np.int64)
    targets = np.asarray(targets, dtype=np.int64)
    ranks = np.zeros(w.shape, dtype=np.int64)
    if block is None:
        block = max(1, (BLOCK_CELLS // 4) // max(n_passages, 1))
    for start in range(0, n, block):
        part = _Block.of(docs, question_vectors, b_rel_vectors, excluded, targets, start, block)
        for r in range(w.shape[0]):
            stop = start + part.size
            ranks[r, start:stop] = _block_ranks(docs, part, w[r, start:stop])
    return ranks


@dataclass(frozen=True)
class _Block:
    """A block of questions: their vectors and float64 products with every passage (computed
    once for all the weights), their excluded and target rows."""

    questions: Vectors
    b_rel: Vectors
    q64: np.ndarray
    b64: np.ndarray
    qn: np.ndarray
    bn: np.ndarray
    pq: np.ndarray
    pb: np.ndarray
    excluded: np.ndarray
    targets: np.ndarray
    approx: np.ndarray  # (b, m) scratch of each weight's approximate scores
    distance: np.ndarray  # (b, m) scratch of their magnitudes, then distances to the target's

    @property
    def size(self) -> int:
        return len(self.targets)

    @classmethod
    def of(
        cls,
        docs: _Documents,
        question_vectors: Vectors,
        b_rel_vectors: Vectors,
        excluded: np.ndarray,
        targets: np.ndarray,
        start: int,
        block: int,
    ) -> _Block:
        stop = min(start + block, question_vectors.shape[0])
        questions, b_rel = question_vectors[start:stop], b_rel_vectors[start:stop]
        q32, b32 = dense(questions), dense(b_rel)
        q64, b64 = q32.astype(np.float64), b32.astype(np.float64)
        return cls(
            questions=questions,
            b_rel=b_rel,
            q64=q64,
            b64=b64,
            qn=np.linalg.norm(q64, axis=1),
            bn=np.linalg.norm(b64, axis=1),
            pq=docs.products64(q32),
            pb=docs.products64(b32),
            excluded=excluded[start:stop],
            targets=targets[start:stop],
            approx=np.empty((stop - start, docs.shape[0])),
            distance=np.empty((stop - start, docs.shape[0])),
        )


def _block_ranks(docs: _Documents, part: _Block, weights: np.ndarray) -> np.ndarray:
    """The block's ranks at one weight per question (the module docstring's steps)."""
    b, dim = part.size, docs.shape[1]
    w32 = np.asarray(weights, dtype=np.float64).astype(np.float32)
    used = combine_union_vectors(part.questions, part.b_rel, w32)  # the scan's very queries
    wd = w32.astype(np.float64)
    c = part.q64 + wd[:, None] * part.b64
    cn = np.linalg.norm(c, axis=1)
    qn, bn = part.qn, part.bn
    rows = np.arange(b)
    has_ex = part.excluded >= 0
    ex_cells = (rows[has_ex], part.excluded[has_ex])
    tg = part.targets
    with np.errstate(all="ignore"):
        u = c / cn[:, None]
        delta = np.linalg.norm(used.astype(np.float64) - u, axis=1)
        # (pq + w·pb) / ‖c‖, the same roundings computed in place (two (b, m) buffers per
        # weight, not a dozen temporaries: the block's passes are what a grid row costs)
        approx = np.multiply(part.pb, wd[:, None], out=part.approx)
        approx += part.pq
        approx /= cn[:, None]
        # the excluded passage is no candidate: its zero moves neither the maximum nor the
        # finiteness below (a NaN or inf candidate makes the maximum NaN or inf), and its
        # counts are taken back
        approx[ex_cells] = 0.0
        distance = np.abs(approx, out=part.distance)
        amax = np.max(distance, axis=1)
        err64 = (
            2 * (dim + 8) * _F64_UNIT * ((qn + wd * bn) * docs.dmax / cn + amax)
            + dim * 2 * _F64_UNIT * np.linalg.norm(used, axis=1) * docs.dmax
        )
        eps = 2 * (delta * docs.dmax + _F32_UNIT * (amax + delta * docs.dmax) + err64 + 1e-12)
        a_t = approx[rows, tg]
        above = a_t + 2 * eps
        ahead = np.count_nonzero(approx > above[:, None], axis=1) - (has_ex & (above < 0.0))
        distance = np.abs(np.subtract(approx, a_t[:, None], out=distance), out=distance)
        near = distance <= (2 * eps)[:, None]
        near[ex_cells] = False
    exact_row = (
        ~np.isfinite(amax)
        | ~np.isfinite(eps)
        | ~np.isfinite(cn)
        | (cn == 0)
        | ~np.any(used != 0, axis=1)
        | (amax + eps > _F32_SAFE)
    )
    target_near = near[rows, tg]
    # the target alone within 2·eps of itself: every other candidate is certainly above it
    # (counted in ``ahead``) or below it, so its rank needs no exact score
    ranks = (1 + ahead).astype(np.int64)
    for i in np.flatnonzero(exact_row | ~target_near | (np.count_nonzero(near, axis=1) > 1)):
        t = int(tg[i])
        if exact_row[i] or not target_near[i]:
            ranks[i] = _full_rank(docs, used[i], int(part.excluded[i]), t)
            continue
        rows_near = np.flatnonzero(near[i])
        scores = docs.exact(used[i], rows_near)
        s_t = scores[np.searchsorted(rows_near, t)]
        tied_before = np.count_nonzero((scores == s_t) & (rows_near < t))
        ranks[i] = 1 + int(ahead[i]) + np.count_nonzero(scores > s_t) + tied_before
    return ranks
