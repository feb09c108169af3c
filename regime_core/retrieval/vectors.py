"""Vectors as retrieval holds them: a dense float32 array, or a scipy CSR matrix of float32.

A lexical encoder's vectors (TF-IDF) are vocabulary-wide and almost all zeros: HotpotQA's
question pools densify to 6,613 × 42,011 float32, about 1.1 GB. The embedding store keeps such
rows as CSR (:meth:`regime_core.encoders.store.EmbeddingStore.embed_compact`), and retrieval
keeps them so: every kernel densifies only the rows it is about to use
(:func:`dense_rows`), a block at a time. Densifying a row copies its float32 values, so a kernel
sees exactly the numbers it would have seen in the dense matrix, and its results are identical
bit for bit (the scoring and query kernels keep their blocks; ``tests/test_retrieval_vectors.py``
compares every retrieval result both ways).

Dense encoders' vectors stay plain arrays; every function here passes them through.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, TypeAlias

import numpy as np

from regime_core.encoders.base import Encoder
from regime_core.encoders.store import Mode  # at run time: the API pages resolve the hints

#: A dense ``(n, d)`` float32 array or a ``scipy.sparse.csr_matrix`` (float32) of the same shape.
Vectors: TypeAlias = Any


class EmbeddingSource(Protocol):
    """What retrieval needs from :class:`regime_core.encoders.EmbeddingStore`: dense vectors
    (a store may also offer ``embed_compact``, see :func:`embed_vectors`)."""

    def embed(self, encoder: Encoder, texts: Sequence[str], mode: Mode) -> np.ndarray: ...


def is_sparse(vectors: Vectors) -> bool:
    """Whether ``vectors`` is a scipy sparse matrix (not a dense array)."""
    return not isinstance(vectors, np.ndarray) and hasattr(vectors, "tocsr")


def embed_vectors(
    store: EmbeddingSource, encoder: Encoder, texts: Sequence[str], mode: Mode
) -> Vectors:
    """``texts``' vectors in their most compact exact form: the store's ``embed_compact`` when
    it has one (CSR for a sparse encoder), else its dense ``embed`` (a test's fake store)."""
    compact = getattr(store, "embed_compact", None)
    if compact is None:
        return store.embed(encoder, texts, mode)
    return compact(encoder, texts, mode)


def checked_vectors(vectors: Vectors, n: int, what: str) -> Vectors:
    """``vectors`` as float32 (dense or CSR), after checking it holds ``n`` finite rows of one
    dimension: what an embedding store returned for ``n`` ``what``. Every vector retrieval
    scores passes here, so the kernels downstream trust that their scores are finite."""
    if is_sparse(vectors):
        vectors = vectors.tocsr().astype(np.float32, copy=False)
    else:
        vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim != 2 or vectors.shape[0] != n:
        raise ValueError(
            f"the embedding store returned {vectors.shape} for {n} {what}; expected ({n}, d)"
        )
    # a NaN or inf vector would score NaN and rank wherever the sort puts it, without a word
    if not np.all(np.isfinite(vectors.data if is_sparse(vectors) else vectors)):
        raise ValueError(f"the embedding store returned NaN or inf values for the {n} {what}")
    return vectors


def dense_rows(vectors: Vectors, rows: np.ndarray | Sequence[int]) -> np.ndarray:
    """The rows ``rows`` of ``vectors`` as a dense C-contiguous float32 array (a copy)."""
    picked = vectors[np.asarray(rows, dtype=np.int64)]
    if is_sparse(picked):
        return picked.toarray().astype(np.float32, copy=False)
    return np.ascontiguousarray(picked, dtype=np.float32)


def dense(vectors: Vectors) -> np.ndarray:
    """All of ``vectors`` as a dense float32 array (no copy when it already is one)."""
    if is_sparse(vectors):
        return vectors.toarray().astype(np.float32, copy=False)
    return np.asarray(vectors, dtype=np.float32)


def rows_in_blocks(
    candidates: np.ndarray, block: int
) -> list[tuple[slice, np.ndarray, np.ndarray]]:
    """For each block of ``block`` queries: its slice, the distinct passage rows its
    candidates name (sorted), and the candidates renumbered into those rows (``-1`` kept)."""
    out = []
    for start in range(0, len(candidates), block):
        part = slice(start, start + block)
        cands = candidates[part]
        real = cands >= 0
        rows, local = np.unique(cands[real], return_inverse=True)
        renumbered = np.full(cands.shape, -1, dtype=np.int64)
        renumbered[real] = local
        out.append((part, rows, renumbered))
    return out
