"""Approximate top-k inner-product search (faiss IVF or HNSW) for corpora too large to scan.

Nothing the project records uses this module: every number of the book comes from the exact
scan (:func:`~regime_core.retrieval.corpus_scan.scan_corpus`), which ranks every passage. An
approximate index trades a little recall for speed on very large corpora; it is a tool for
users and for ``benchmarks/bench_scale.py --index``, which reports its recall against the exact
scan on the same vectors. Measure that recall on your own vectors before trusting an index.

- ``ivf`` (``IndexIVFFlat``): k-means splits the passages into ``nlist`` lists; a query scans
  the ``nprobe`` lists whose centroids score highest. ``nprobe = nlist`` scans every list, so
  it returns the exact top k (up to the order of tied scores).
- ``hnsw`` (``IndexHNSWFlat``): a navigable graph of ``m`` links per node, built with a beam of
  ``ef_construction`` and searched with a beam of ``ef_search``. No training; more memory.

Both store the vectors uncompressed and score by inner product (cosine on unit vectors).
Arrays in, arrays out: nothing here knows about examples, arms or rankings.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from regime_core.config import SEED, ConfigMixin
from regime_core.inputs import Choice, Nullable
from regime_core.inputs.configs import declared, integer

if TYPE_CHECKING:
    import faiss

ANN_KINDS: tuple[str, ...] = ("ivf", "hnsw")
# Queries per faiss search call: the result block and faiss's per-query heaps stay small.
SEARCH_BLOCK = 4096
# k-means trains on at most this many sampled passages per list (faiss's own cap is 256): about
# 64 per list keeps the centroids stable while training stays a fraction of the build.
TRAIN_POINTS_PER_LIST = 64
# faiss warns below 39 training points per list; the default nlist never asks for fewer.
MIN_POINTS_PER_LIST = 39


def default_nlist(n_passages: int) -> int:
    """``round(4 √N)`` lists (faiss's rule of thumb: 4 to 16 √N), capped so that every list
    has at least :data:`MIN_POINTS_PER_LIST` passages to train on, and at least 1.

    >>> default_nlist(200_000), default_nlist(3_000), default_nlist(10)
    (1789, 76, 1)
    """
    return max(1, min(round(4 * math.sqrt(n_passages)), n_passages // MIN_POINTS_PER_LIST))


@dataclass(frozen=True)
class AnnIndexConfig(ConfigMixin):
    """An approximate index: its kind and the parameters of that kind (the others are unused).

    ``nlist=None`` takes :func:`default_nlist` of the corpus at build time. ``seed`` seeds the
    k-means training sample and faiss's k-means (IVF) and the random levels of the graph (HNSW),
    so a build is reproducible. The search defaults are above faiss's (``nprobe`` 1,
    ``ef_search`` 16), which miss much of the exact top k; raise them to find more of it, lower
    them for speed, and measure with :func:`recall_at_k` (``benchmarks/bench_scale.py --index``).
    """

    NONE_IS_VALUE: ClassVar[frozenset[str]] = frozenset({"nlist"})

    kind: str = declared("hnsw", Choice(ANN_KINDS))
    nlist: int | None = declared(None, Nullable(integer(1)))
    nprobe: int = declared(16, integer(1))
    m: int = declared(32, integer(2))
    ef_construction: int = declared(80, integer(1))
    ef_search: int = declared(64, integer(1))
    seed: int = declared(SEED, integer())

    def validate(self) -> None:
        if self.nlist is not None and self.nprobe > self.nlist:
            raise ValueError(
                f"AnnIndexConfig.nprobe ({self.nprobe}) must be <= nlist ({self.nlist}): "
                "nprobe = nlist already scans every list"
            )


def _matrix(name: str, vectors: np.ndarray) -> np.ndarray:
    """``vectors`` as a contiguous float32 matrix, else ValueError if a value is not finite (faiss
    would rank NaN or inf vectors silently)."""
    array = np.ascontiguousarray(vectors, dtype=np.float32)
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name}: non-finite values (NaN or inf vectors)")
    return array


def build_index(documents: np.ndarray, cfg: AnnIndexConfig) -> faiss.Index:
    """An inner-product faiss index of the ``(N, d)`` passage vectors, row ``i`` = id ``i``.

    IVF trains its k-means on a seeded sample of at most :data:`TRAIN_POINTS_PER_LIST` ×
    ``nlist`` rows (sorted, so the sample is the same whatever faiss does with threads), with
    faiss's k-means seed set too, then adds every row. HNSW adds every row in order, its level
    generator seeded. faiss uses its default threads; two builds gave identical indexes on our
    machine, but faiss promises a bit-identical HNSW graph only with one thread
    (``faiss.omp_set_num_threads(1)``).

    Raises ValueError for an empty or non-finite matrix, or ``nlist`` above ``N``.
    """
    import faiss

    documents = _matrix("documents", documents)
    n, d = documents.shape
    if cfg.kind == "ivf":
        nlist = cfg.nlist if cfg.nlist is not None else default_nlist(n)
        if nlist > n:
            raise ValueError(f"AnnIndexConfig.nlist ({nlist}) must be <= the passages ({n})")
        quantizer = faiss.IndexFlatIP(d)
        ivf = faiss.IndexIVFFlat(quantizer, d, nlist, faiss.METRIC_INNER_PRODUCT)
        ivf.cp.seed = cfg.seed
        ivf.cp.spherical = True  # unit centroids: assignment by cosine, as the scores are
        rng = np.random.default_rng(cfg.seed)
        size = min(n, TRAIN_POINTS_PER_LIST * nlist)
        sample = np.sort(rng.choice(n, size=size, replace=False)) if size < n else slice(None)
        ivf.train(np.ascontiguousarray(documents[sample]))
        ivf.add(documents)
        ivf.nprobe = min(cfg.nprobe, nlist)
        return ivf
    hnsw = faiss.IndexHNSWFlat(d, cfg.m, faiss.METRIC_INNER_PRODUCT)
    # faiss's stubs (1.15) name neither HNSW.rng nor RandomGenerator; both exist in the SWIG module
    hnsw.hnsw.rng = faiss.RandomGenerator(cfg.seed)  # type: ignore[attr-defined]
    hnsw.hnsw.efConstruction = cfg.ef_construction
    hnsw.add(documents)
    hnsw.hnsw.efSearch = cfg.ef_search
    return hnsw


def search(
    index: faiss.Index, queries: np.ndarray, k: int, *, block: int = SEARCH_BLOCK
) -> tuple[np.ndarray, np.ndarray]:
    """The approximate top ``k`` of each query: ``(rows, scores)``, both ``(n, k)``.

    ``rows`` are int64 passage rows, best first; ``scores`` their float32 inner products.
    Where the index finds fewer than ``k`` passages (a small corpus, or IVF lists that hold too
    few) faiss pads with row ``-1``; its score is set to ``-inf`` (faiss gives ``-FLT_MAX``), as
    :class:`~regime_core.retrieval.corpus_scan.CorpusScan` pads. Queries go to faiss ``block``
    at a time, so memory beyond the result is one block's.
    """
    queries = _matrix("queries", queries)
    n = len(queries)
    rows = np.empty((n, k), dtype=np.int64)
    scores = np.empty((n, k), dtype=np.float32)
    for start in range(0, n, block):
        stop = min(start + block, n)
        scores[start:stop], rows[start:stop] = index.search(queries[start:stop], k)
    scores[rows < 0] = -np.inf
    return rows, scores


def recall_at_k(approx_rows: np.ndarray, exact_rows: np.ndarray) -> float:
    """Mean over queries of ``|A_i ∩ E_i| / |E_i|``, the share of the exact top k found.

    ``A_i`` and ``E_i`` are the sets of passage rows of row ``i`` of ``approx_rows`` and
    ``exact_rows`` (both ``(n, k)``), without ``-1`` padding: a ``-1`` the index returned is a
    miss, never a match, and ``|E_i|`` is ``k`` unless the corpus had fewer than ``k``
    candidates, so an index that returns the exact top k scores 1.0. Order within the top k does
    not count. A different passage with a score *tied* with the exact k-th counts as a miss
    (continuous embeddings make such ties rare).

    Not :func:`regime_core.metrics.recall_at_k`, the share of a query's gold passages in its
    ranking: this one measures an index against exact search, not retrieval against labels.

    >>> round(recall_at_k(np.array([[3, 1, -1], [7, 8, 9]]), np.array([[1, 2, 3], [9, 8, 7]])), 4)
    0.8333
    """
    approx = np.asarray(approx_rows)
    exact = np.asarray(exact_rows)
    valid = exact >= 0
    sizes = valid.sum(axis=1)
    found = np.zeros(len(exact), dtype=np.int64)
    # blocks of queries bound the (queries, k, k) comparison
    step = max(1, 2**22 // max(exact.shape[1] ** 2, 1))
    for start in range(0, len(exact), step):
        e, a = exact[start : start + step], approx[start : start + step]
        hit = (e[:, :, None] == a[:, None, :]).any(axis=2) & valid[start : start + step]
        found[start : start + step] = hit.sum(axis=1)
    return float(np.mean(found / sizes))
