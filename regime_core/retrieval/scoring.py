"""Exact inner-product scoring of queries against candidate passages: numpy or faiss.

Both backends compute exact inner products over the same float32 vectors. They sum in a
different order, so scores agree to a few float32 ulps (≤ 5e-7 measured) and two candidates
whose scores tie *mathematically* (bag-of-words vectors do that) may be ordered differently;
otherwise the rankings are identical. The default (:func:`default_scorer`) is the faster one on
the project machine (benchmarks/bench_retrieval.py) for the shape of the candidates: faiss's
by-index kernel for small pools (question mode), numpy's dense BLAS product when the candidates
cover the matrix (corpus mode; faiss's search with k = every passage pays for a full heap sort).
Corpus mode streams either backend's dense product (:func:`numpy_score_block`,
:func:`faiss_score_block`) through :mod:`regime_core.retrieval.corpus_scan`.

Arrays in, arrays out: nothing here knows about examples, arms or rankings.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from regime_core.retrieval.vectors import Vectors, dense, dense_rows, is_sparse, rows_in_blocks

SCORERS: tuple[str, ...] = ("numpy", "faiss")

# Queries scored per block in the dense product (corpus_scan subdivides the same blocks).
QUERY_BLOCK = 256

ScoreBlock = Callable[[np.ndarray], np.ndarray]


def check_scorer(scorer: str) -> str:
    """``scorer`` if it names a backend of :data:`SCORERS`, else ValueError."""
    if scorer not in SCORERS:
        raise ValueError(f"scorer {scorer!r} is not one of {SCORERS}")
    return scorer


def check_dimensions(queries: np.ndarray, documents: np.ndarray) -> None:
    """Query and document vectors must be 2-d with one dimension (one encoder made both)."""
    if queries.ndim != 2 or documents.ndim != 2 or queries.shape[1] != documents.shape[1]:
        raise ValueError(
            f"query vectors {queries.shape} and document vectors {documents.shape} must be "
            "2-d with the same dimension (were they encoded by the same encoder?)"
        )


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


def numpy_score_block(documents: np.ndarray) -> ScoreBlock:
    """``queries @ documentsᵀ`` (float32 BLAS): every passage's score, in passage order."""
    return lambda queries: queries @ documents.T


def faiss_score_block(documents: np.ndarray) -> ScoreBlock:
    """An ``IndexFlatIP`` search over every passage, scattered back to passage order."""
    import faiss

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
    """Small pools, numpy: gather each block's candidate rows and take a batched product."""
    n, width = candidates.shape
    scores = np.full((n, width), -np.inf, dtype=np.float32)
    pad = candidates < 0
    safe = np.where(pad, 0, candidates)
    for start in range(0, n, QUERY_BLOCK):
        block = slice(start, start + QUERY_BLOCK)
        gathered = documents[safe[block]]  # (b, width, d)
        scores[block] = np.matmul(gathered, queries[block][:, :, None])[:, :, 0]
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
    faiss.fvec_inner_products_by_idx(
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


def score_candidates_numpy(
    queries: np.ndarray, documents: np.ndarray, candidates: np.ndarray
) -> np.ndarray:
    """``scores[i, j] = ⟨queries[i], documents[candidates[i, j]]⟩``, ``-inf`` where ``-1``.

    Small pools gather the candidate rows and take a batched product; pools covering the
    matrix (corpus mode) take one dense ``Q·Dᵀ`` per block of queries and pick the columns.
    """
    n, width = candidates.shape
    if n == 0 or width == 0:
        return np.full((n, width), -np.inf, dtype=np.float32)
    if not is_dense(candidates, len(documents)):
        return _pools_numpy(queries, documents, candidates)
    return _score_dense(numpy_score_block(documents), queries, candidates)


def score_candidates_faiss(
    queries: np.ndarray, documents: np.ndarray, candidates: np.ndarray
) -> np.ndarray:
    """Same contract as :func:`score_candidates_numpy`, computed by faiss (exact).

    Small pools: ``fvec_inner_products_by_idx``, the kernel behind ``IndexFlatIP``'s
    ``compute_distance_subset`` (inner products with the listed rows only, ``-inf`` for ``-1``),
    without copying the matrix into an index. Corpus mode: an ``IndexFlatIP`` ``search`` with
    k = all passages, whose scores are scattered back to passage order.
    """
    n, width = candidates.shape
    if n == 0 or width == 0:
        return np.full((n, width), -np.inf, dtype=np.float32)
    if not is_dense(candidates, len(documents)):
        return _pools_faiss(queries, documents, candidates)
    documents = np.ascontiguousarray(documents, dtype=np.float32)
    queries = np.ascontiguousarray(queries, dtype=np.float32)
    return _score_dense(faiss_score_block(documents), queries, candidates)


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


_SCORER_KERNELS: dict[str, Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]] = {
    "numpy": score_candidates_numpy,
    "faiss": score_candidates_faiss,
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
    (nearly) the whole matrix, as in corpus mode, faiss for small pools. ``documents`` may be
    sparse (CSR, :mod:`~regime_core.retrieval.vectors`): small pools then densify only each
    block's candidate rows, with the same scores.
    """
    if not is_sparse(documents):
        documents = np.asarray(documents, dtype=np.float32)
    n_passages = documents.shape[0]
    scorer = check_scorer(default_scorer(candidates, n_passages) if scorer is None else scorer)
    queries = np.asarray(queries, dtype=np.float32)
    if is_sparse(documents) and is_dense(candidates, n_passages):
        documents = dense(documents)  # candidates cover the matrix: one dense product, as before
    check_dimensions(queries, documents)
    if candidates.shape[0] != queries.shape[0]:
        raise ValueError(f"{candidates.shape[0]} candidate rows for {queries.shape[0]} queries")
    if is_sparse(documents):
        scores = _score_sparse_pools(queries, documents, candidates, scorer)
    else:
        scores = _SCORER_KERNELS[scorer](queries, documents, candidates)
    real = candidates >= 0
    if not np.all(np.isfinite(scores[real])):
        raise ValueError("non-finite retrieval scores: the encoder returned NaN or inf vectors")
    return scores
