"""UnionGeometry.target_ranks_many equals the per-weight loop exactly (corpus and pool modes)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from regime_core.retrieval import rank_candidates, score_candidates
from regime_core.retrieval.geometry import UnionGeometry
from regime_core.retrieval.queries import combine_union_vectors


def _unit(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    x = rng.standard_normal((n, d)).astype(np.float32)
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def _geometry(q, b, docs, excluded, positions) -> UnionGeometry:
    n = q.shape[0]
    return UnionGeometry(
        query_ids=tuple(f"q{i}" for i in range(n)),
        question_vectors=q,
        b_rel_vectors=b,
        document_vectors=docs,
        candidates=None,
        target_positions=np.asarray(positions, dtype=np.int64),
        pool="corpus",
        excluded_rows=np.asarray(excluded, dtype=np.int64),
    )


def _loop(geometry: UnionGeometry, weights: np.ndarray) -> np.ndarray:
    return np.stack([geometry.target_ranks(w) for w in weights])


def _tied_world(seed: int = 0):
    rng = np.random.default_rng(seed)
    n, m, d = 12, 60, 16
    docs = _unit(rng, m, d)
    docs[10:20] = docs[5]  # duplicate passages: exact ties
    q = _unit(rng, n, d)
    b = _unit(rng, n, d)
    q[0] = docs[5]  # a question equal to a (duplicated) passage
    b[1] = docs[7]
    excluded = rng.integers(-1, m, n)
    excluded[:3] = -1
    excluded[3] = 5
    positions = rng.integers(0, m - 1, n)
    positions[0] = 5  # the target is one of the duplicates
    positions[3], positions[4], excluded[4] = 2, 40, 3  # target before / after the excluded row
    positions = np.where(excluded == -1, np.minimum(positions, m - 1), positions)
    return q, b, docs, excluded, positions


GRID = np.round(0.05 * np.arange(41), 2)


def test_dense_ties_equal_the_loop() -> None:
    g = _geometry(*_tied_world())
    weights = np.repeat(GRID[:, None], g.n, axis=1)
    assert np.array_equal(g.target_ranks_many(weights), _loop(g, weights))


def test_sparse_documents_equal_the_loop() -> None:
    q, b, docs, excluded, positions = _tied_world(1)
    docs = docs.copy()
    docs[np.abs(docs) < 0.3] = 0.0
    g = _geometry(q, b, sp.csr_matrix(docs), excluded, positions)
    weights = np.repeat(GRID[:, None], g.n, axis=1)
    assert np.array_equal(g.target_ranks_many(weights), _loop(g, weights))


def test_zero_combined_query_and_per_question_weights() -> None:
    q, b, docs, excluded, positions = _tied_world(2)
    b = b.copy()
    b[2] = -q[2]  # q + 1·b = 0 exactly at weight 1
    g = _geometry(q, b, docs, excluded, positions)
    rng = np.random.default_rng(3)
    weights = np.vstack([np.zeros(g.n), np.ones(g.n), rng.uniform(0, 2, (5, g.n))])
    got = g.target_ranks_many(weights)
    assert np.array_equal(got, _loop(g, weights))
    assert got[1, 2] == positions[2] + 1  # every score 0: candidate order


def test_random_worlds_equal_the_loop() -> None:
    for seed in range(5):
        rng = np.random.default_rng(100 + seed)
        n, m, d = 30, 400, 24
        q, b, docs = _unit(rng, n, d), _unit(rng, n, d), _unit(rng, m, d)
        excluded = rng.integers(-1, m, n)
        positions = rng.integers(0, m - 1, n)
        g = _geometry(q, b, docs, excluded, positions)
        weights = rng.uniform(0, 2, (7, n))
        assert np.array_equal(g.target_ranks_many(weights), _loop(g, weights))


def _pool_world(seed: int, sparse: bool) -> UnionGeometry:
    """Question pools of 9 candidates (``-1`` padding on some) over 300 passages, with duplicated
    passages and a question equal to one: exact ties, the target among them."""
    rng = np.random.default_rng(seed)
    n, m, d, width = 300, 300, 16, 9  # n > QUERY_BLOCK: two blocks
    docs = _unit(rng, m, d)
    docs[10:14] = docs[5]
    q, b = _unit(rng, n, d), _unit(rng, n, d)
    candidates = np.stack([rng.choice(m, width, replace=False) for _ in range(n)])
    candidates[0, :4] = [10, 5, 11, 12]  # four equal passages
    q[0] = docs[5]
    candidates[1::7, -2:] = -1
    positions = rng.integers(0, width - 2, n)
    positions[0] = 2
    if sparse:
        docs[np.abs(docs) < 0.3] = 0.0
    return UnionGeometry(
        query_ids=tuple(f"q{i}" for i in range(n)),
        question_vectors=sp.csr_matrix(q) if sparse else q,
        b_rel_vectors=sp.csr_matrix(b) if sparse else b,
        document_vectors=sp.csr_matrix(docs) if sparse else docs,
        candidates=candidates,
        target_positions=positions,
        pool="question",
    )


def _scored_loop(g: UnionGeometry, weights: np.ndarray) -> np.ndarray:
    """The per-weight reference: combine, score every candidate, stable-sort, find the target."""
    assert g.candidates is not None
    rows = []
    for w in weights:
        queries = combine_union_vectors(g.question_vectors, g.b_rel_vectors, w)
        order = rank_candidates(score_candidates(queries, g.document_vectors, g.candidates))
        rows.append(np.argmax(order == g.target_positions[:, None], axis=1) + 1)
    return np.stack(rows)


def test_question_pools_equal_the_scored_loop_with_ties() -> None:
    for seed, sparse in ((0, False), (1, True)):
        g = _pool_world(seed, sparse)
        grid = np.repeat(GRID[:, None], g.n, axis=1)
        per_question = np.random.default_rng(seed).uniform(0, 2, (4, g.n))
        for weights in (grid, per_question):
            assert np.array_equal(g.target_ranks_many(weights), _scored_loop(g, weights))
        # at weight 0 the question is the four equal passages: tied first, the target third
        assert g.target_ranks_many(grid[:1])[0, 0] == 3
