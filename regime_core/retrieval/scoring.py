"""Exact inner-product scoring of queries against candidate passages: numpy or faiss.

Both backends compute exact inner products over the same float32 vectors. numpy accumulates
them in float64 and rounds each score once to float32 (:func:`numpy_score_block`), so its
scores do not depend on the BLAS kernel (``OPENBLAS_CORETYPE``), on the block of queries a score
is computed in, or on whether the vectors are sparse; faiss sums in float32 with its own kernels
(the same values under every OpenBLAS kernel, measured). The two backends' scores agree to a few
float32 ulps (≤ 5e-7 measured) and two candidates whose scores tie *mathematically* (bag-of-words
vectors do that) may be ordered differently by the two; otherwise the rankings are identical.

The default (:func:`default_scorer`) is the faster one on the project machine
(benchmarks/bench_retrieval.py) for the shape of the candidates: faiss's by-index kernel for
small pools (question mode), numpy's product when the candidates cover the matrix (corpus mode;
faiss's search with k = every passage pays for a full heap sort).
Corpus mode streams either backend's dense product (:func:`numpy_score_block`,
:func:`faiss_score_block`) through :mod:`regime_core.retrieval.corpus_scan`.

Arrays in, arrays out: nothing here knows about examples, arms or rankings.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from regime_core.retrieval.vectors import Vectors, dense, dense_rows, is_sparse, rows_in_blocks

# Queries scored per block in the dense product (corpus_scan subdivides the same blocks).
QUERY_BLOCK = 256

ScoreBlock = Callable[[np.ndarray], np.ndarray]


def is_dense(candidates: np.ndarray, n_passages: int) -> bool:
    """Candidates cover (nearly) the whole matrix: one dense product beats a gather."""
    return candidates.shape[1] * 2 >= n_passages


def default_scorer(candidates: np.ndarray, n_passages: int) -> str:
    """The faster backend for a padded candidate matrix over ``n_passages`` passages.

    >>> default_scorer(np.zeros((685, 9), np.int64), 6641), default_scorer(
    ...     np.zeros((685, 6640), np.int64), 6641)
    ('faiss', 'numpy')
    """
    return "numpy" if is_dense(candidates, n_passages) else "faiss"


# Float64 cells a product may hold at once (64 MiB), and the largest float64 copy of the
# documents kept for a whole scan (256 MiB; larger corpora are converted chunk by chunk).
_F64_CELLS = 2**23
_F64_KEPT_CELLS = 2**25


def exact_products(queries: np.ndarray, documents: np.ndarray) -> np.ndarray:
    """``queries @ documentsᵀ`` of float32 vectors, accumulated in float64, rounded to float32.

    Each product of two float32 numbers is exact in float64, and a sum of ``d`` of them is off
    by at most about ``d · 2⁻⁵³`` of its magnitude; rounding that once to float32 (whose step is
    ``2⁻²⁴``) gives the same value whatever order the BLAS kernel summed in, except when the exact
    value lies within that error of a float32 rounding boundary (about one score in 10⁷). A
    float32 BLAS product instead differs in its last bits between OpenBLAS kernels and, under some
    (Haswell), between blocks of queries of different sizes, which breaks exact ties differently.
    A dimension no query uses adds exact zeros, so it is left out: a bag-of-words block uses under
    a thousand of its tens of thousands (the same scores, in a small part of the time).
    Memory: at most :data:`_F64_CELLS` float64 cells at a time.
    """
    used = np.flatnonzero(np.any(queries != 0, axis=0))
    if len(used) < queries.shape[1]:
        queries, documents = queries[:, used], documents[:, used]
    q64 = np.asarray(queries, dtype=np.float64)
    out = np.empty((len(queries), len(documents)), dtype=np.float32)
    rows = max(1, _F64_CELLS // max(1, documents.shape[1]))
    for start in range(0, len(documents), rows):
        chunk = np.asarray(documents[start : start + rows], dtype=np.float64)
        out[:, start : start + rows] = q64 @ chunk.T
    return out


def numpy_score_block(documents: Vectors) -> ScoreBlock:
    """Every passage's score for a block of queries, in passage order (numpy, accumulated in
    float64: :func:`exact_products`). Sparse documents (CSR) are multiplied as sparse, in float64
    (scipy sums each cell over its terms in index order), so they are never densified and give
    the same scores as their dense form."""
    if is_sparse(documents):
        csr = documents.tocsr().astype(np.float64)

        def sparse_score(queries: np.ndarray) -> np.ndarray:
            product = csr @ np.asarray(queries, dtype=np.float64).T
            return np.ascontiguousarray(np.asarray(product).T, dtype=np.float32)

        return sparse_score
    documents = np.asarray(documents, dtype=np.float32)
    if documents.size <= _F64_KEPT_CELLS:  # converted once for the whole scan
        documents = documents.astype(np.float64)
    return lambda queries: exact_products(queries, documents)


def faiss_score_block(documents: np.ndarray) -> ScoreBlock:
    """An ``IndexFlatIP`` search over every passage, scattered back to passage order."""
    import faiss

    documents = np.ascontiguousarray(documents, dtype=np.float32)
    index = faiss.IndexFlatIP(documents.shape[1])
    index.add(documents)
    n_passages = len(documents)

    def score(queries: np.ndarray) -> np.ndarray:
        dist, rows = index.search(np.ascontiguousarray(queries), n_passages)
        full = np.empty_like(dist)
        np.put_along_axis(full, rows, dist, axis=1)
        return full

    return score


def _score_dense(
    score_block: ScoreBlock, queries: np.ndarray, candidates: np.ndarray
) -> np.ndarray:
    """The columns ``candidates`` of each block's full product (``-inf`` where ``-1``)."""
    scores = np.full(candidates.shape, -np.inf, dtype=np.float32)
    pad = candidates < 0
    safe = np.where(pad, 0, candidates)
    for start in range(0, len(queries), QUERY_BLOCK):
        block = slice(start, start + QUERY_BLOCK)
        scores[block] = np.take_along_axis(score_block(queries[block]), safe[block], axis=1)
    scores[pad] = -np.inf
    return scores


def _pools_numpy(queries: np.ndarray, documents: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """Small pools, numpy: gather each block's candidate rows and take a batched product,
    accumulated in float64 (as :func:`exact_products`), at most :data:`_F64_CELLS` at a time."""
    n, width = candidates.shape
    scores = np.full((n, width), -np.inf, dtype=np.float32)
    pad = candidates < 0
    safe = np.where(pad, 0, candidates)
    step = max(1, min(QUERY_BLOCK, _F64_CELLS // max(1, width * documents.shape[1])))
    for start in range(0, n, step):
        block = slice(start, start + step)
        gathered = documents[safe[block]].astype(np.float64)  # (b, width, d)
        q64 = queries[block].astype(np.float64)[:, :, None]
        scores[block] = np.matmul(gathered, q64)[:, :, 0]
    scores[pad] = -np.inf
    return scores


def _pools_faiss(queries: np.ndarray, documents: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """Small pools, faiss: ``fvec_inner_products_by_idx`` (one inner product per listed pair)."""
    import faiss

    n, width = candidates.shape
    scores = np.full((n, width), -np.inf, dtype=np.float32)
    # Named, contiguous arrays: faiss.swig_ptr does not keep a temporary alive.
    queries = np.ascontiguousarray(queries, dtype=np.float32)
    documents = np.ascontiguousarray(documents, dtype=np.float32)
    labels = np.ascontiguousarray(candidates, dtype=np.int64)
    # faiss's stubs (1.15) lack this SWIG function; faiss.swigfaiss defines it
    faiss.fvec_inner_products_by_idx(  # type: ignore[attr-defined]
        faiss.swig_ptr(scores),
        faiss.swig_ptr(queries),
        faiss.swig_ptr(documents),
        faiss.swig_ptr(labels),
        documents.shape[1],
        n,
        width,
    )
    scores[candidates < 0] = -np.inf
    return scores


_POOL_KERNELS: dict[str, Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]] = {
    "numpy": _pools_numpy,
    "faiss": _pools_faiss,
}


def _score_sparse_pools(
    queries: np.ndarray, documents: Vectors, candidates: np.ndarray, scorer: str
) -> np.ndarray:
    """Small pools over sparse (CSR) documents: per block of :data:`QUERY_BLOCK` queries (the
    dense kernels' own blocks, so every product has the same shape), densify only the rows the
    block names and score them; the values equal the dense path's bit for bit."""
    scores = np.full(candidates.shape, -np.inf, dtype=np.float32)
    for part, rows, local in rows_in_blocks(candidates, QUERY_BLOCK):
        if len(rows):
            scores[part] = _POOL_KERNELS[scorer](queries[part], dense_rows(documents, rows), local)
    return scores


_BLOCK_KERNELS: dict[str, Callable[[Any], ScoreBlock]] = {
    "numpy": numpy_score_block,
    "faiss": faiss_score_block,
}


def score_candidates(
    queries: np.ndarray,
    documents: Vectors,
    candidates: np.ndarray,
    *,
    scorer: str | None = None,
) -> np.ndarray:
    """Exact inner products of each query with its candidates (``-1`` padding → ``-inf``).

    ``scorer=None`` picks the faster backend for the shape: numpy when the candidates cover
    (nearly) the whole matrix, as in corpus mode, faiss for small pools. Small pools gather the
    candidate rows: numpy takes a batched product, faiss ``fvec_inner_products_by_idx`` (the
    kernel behind ``IndexFlatIP``'s ``compute_distance_subset``, without copying the matrix into
    an index). Pools covering the matrix take one dense ``Q·Dᵀ`` per block of queries and pick
    the columns (faiss: an ``IndexFlatIP`` search with k = all passages). ``documents`` may be
    sparse (CSR, :mod:`~regime_core.retrieval.vectors`): small pools then densify only each
    block's candidate rows, with the same scores.
    """
    if not is_sparse(documents):
        documents = np.asarray(documents, dtype=np.float32)
    n_passages = documents.shape[0]
    scorer = default_scorer(candidates, n_passages) if scorer is None else scorer
    queries = np.asarray(queries, dtype=np.float32)
    whole = is_dense(candidates, n_passages)
    if is_sparse(documents) and whole and scorer == "faiss":
        documents = dense(documents)  # faiss multiplies dense vectors only
    if 0 in candidates.shape:
        return np.full(candidates.shape, -np.inf, dtype=np.float32)
    if whole:
        scores = _score_dense(_BLOCK_KERNELS[scorer](documents), queries, candidates)
    elif is_sparse(documents):
        scores = _score_sparse_pools(queries, documents, candidates, scorer)
    else:
        scores = _POOL_KERNELS[scorer](queries, documents, candidates)
    return scores
