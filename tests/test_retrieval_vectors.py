"""Sparse (CSR) vectors through retrieval: every kernel gives the dense path's numbers bit for
bit, and the store's compact rows are the dense rows. Synthetic data and the toy world; no
dataset text, no download."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from helpers import FLOAT_TOLERANCE, assert_scores_match, refused, settings
from scipy.sparse import csr_matrix

from regime_core import config
from regime_core.data.toyworld import ToyWorldConfig, generate
from regime_core.encoders import EmbeddingStore
from regime_core.encoders.tfidf import TfidfEncoder
from regime_core.experiments.outcomes import CountingStore
from regime_core.retrieval import (
    combine_query_vectors,
    rank_candidates,
    retrieve_arms,
    score_candidates,
)
from regime_core.retrieval.corpus_scan import scan_corpus
from regime_core.retrieval.geometry import build_geometry
from regime_core.retrieval.pools import document_text
from regime_core.retrieval.scoring import QUERY_BLOCK
from regime_core.retrieval.vectors import (
    checked_vectors,
    dense_rows,
    embed_vectors,
    is_sparse,
    rows_in_blocks,
)
from regime_core.schema import Example


def _sparse_unit_rows(rng: np.random.Generator, n: int, d: int, per_row: int) -> np.ndarray:
    out = np.zeros((n, d), dtype=np.float32)
    for i in range(n):
        cols = rng.choice(d, size=per_row, replace=False)
        out[i, cols] = rng.random(per_row, dtype=np.float32) + 0.01
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out.astype(np.float32)


@pytest.fixture(scope="module")
def world() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    documents = _sparse_unit_rows(rng, 900, 2_000, 12)
    queries = _sparse_unit_rows(rng, QUERY_BLOCK * 2 + 37, 2_000, 5)
    candidates = rng.integers(0, len(documents), size=(len(queries), 11))
    candidates[::7, -3:] = -1  # padding, as ragged pools have
    candidates[5] = -1  # a query without any candidate
    return queries, documents, candidates


@pytest.mark.parametrize("scorer", ["numpy", "faiss"])
def test_small_pools_over_csr_documents_score_exactly_as_dense(world, scorer: str) -> None:
    queries, documents, candidates = world
    expected = score_candidates(queries, documents, candidates, scorer=scorer)
    got = score_candidates(queries, csr_matrix(documents), candidates, scorer=scorer)
    assert got.dtype == np.float32
    assert_scores_match(got[np.isfinite(expected)], expected[np.isfinite(expected)])
    np.testing.assert_array_equal(np.isneginf(got), np.isneginf(expected))
    assert np.isneginf(got[5]).all()


def test_candidates_covering_the_matrix_score_as_dense_without_densifying(world) -> None:
    queries, documents, _ = world
    every = np.tile(np.arange(len(documents)), (40, 1))
    expected = score_candidates(queries[:40], documents, every)
    got = score_candidates(queries[:40], csr_matrix(documents), every)
    assert_scores_match(got, expected)
    # both are float64 sums rounded once to float32: the same ranking, tie for tie
    np.testing.assert_array_equal(rank_candidates(got), rank_candidates(expected))


def test_combining_csr_text_vectors_equals_dense(world) -> None:
    queries, _, _ = world
    n = len(queries) // 2
    parts = [[(i, 1.0), (n + i, config.ALPHA)] for i in range(n)] + [[(3, 1.0)]]
    expected = combine_query_vectors(queries, parts)
    np.testing.assert_array_equal(combine_query_vectors(csr_matrix(queries), parts), expected)


def test_corpus_scan_over_csr_documents_equals_dense(world) -> None:
    queries, documents, _ = world
    excluded = np.arange(len(queries)) % len(documents)
    targets = (excluded + 1) % len(documents)
    a = scan_corpus(queries, documents, excluded=excluded, targets=targets, k=5)
    b = scan_corpus(queries, csr_matrix(documents), excluded=excluded, targets=targets, k=5)
    for field in dataclasses.fields(a):
        x, y = getattr(a, field.name), getattr(b, field.name)
        if isinstance(x, np.ndarray) and x.dtype.kind == "f":  # scores: within tolerance
            assert_scores_match(x, y)
        elif isinstance(x, np.ndarray):  # rows and ranks: exactly
            np.testing.assert_array_equal(x, y)
    for field in dataclasses.fields(a.negatives):
        x, y = getattr(a.negatives, field.name), getattr(b.negatives, field.name)
        if np.asarray(x).dtype.kind == "f":
            np.testing.assert_allclose(x, y, rtol=1e-9, atol=FLOAT_TOLERANCE)
        else:
            np.testing.assert_array_equal(x, y)


def test_helpers_keep_values_and_order() -> None:
    m = np.array([[0, 1, 0], [2, 0, 0], [0, 0, 3]], dtype=np.float32)
    s = csr_matrix(m)
    assert is_sparse(s) and not is_sparse(m)
    np.testing.assert_array_equal(dense_rows(s, [2, 0]), m[[2, 0]])
    assert checked_vectors(s, 3, "texts").dtype == np.float32
    with refused(ValueError, names=["4 texts"]):
        checked_vectors(s, 4, "texts")
    # every vector retrieval scores passes here: a NaN is refused once, not in each kernel
    for bad in (np.array([[np.nan, 1.0]]), csr_matrix(np.array([[0.0, np.inf]]))):
        with refused(ValueError, names=["1 passages", "NaN"]):
            checked_vectors(bad, 1, "passages")
    blocks = rows_in_blocks(np.array([[4, 2, -1], [2, 9, 4]]), 1)
    assert [rows.tolist() for _, rows, _ in blocks] == [[2, 4], [2, 4, 9]]
    assert blocks[0][2].tolist() == [[1, 0, -1]]


# --- the embedding store and the retrieval verbs, on the toy world with TF-IDF -------------------


class DenseOnly:
    """A store that only offers ``embed`` (as a test's fake does): the dense path."""

    def __init__(self, store: EmbeddingStore) -> None:
        self.store = store

    def embed(self, encoder, texts, mode):
        return self.store.embed(encoder, texts, mode)


@pytest.fixture(scope="module")
def toy_tfidf(tmp_path_factory) -> tuple[list[Example], TfidfEncoder, EmbeddingStore]:
    examples = generate(ToyWorldConfig(n_questions=80, seed=3))
    passages = {p.pid: document_text(p) for ex in examples for p in ex.pool}
    encoder = TfidfEncoder(list(passages.values()))
    store = EmbeddingStore(Path(tmp_path_factory.mktemp("store")))
    return examples, encoder, store


def test_the_store_gives_tfidf_rows_as_csr_holding_the_dense_values(toy_tfidf) -> None:
    examples, encoder, store = toy_tfidf
    texts = [*[ex.question for ex in examples][::-1], examples[0].question]
    compact = store.embed_compact(encoder, texts, "query")
    assert is_sparse(compact) and compact.dtype == np.float32
    np.testing.assert_array_equal(compact.toarray(), store.embed(encoder, texts, "query"))
    counting = CountingStore(store)
    assert is_sparse(embed_vectors(counting, encoder, texts, "query"))
    assert counting.n_cached == len(set(texts)) and counting.n_encoded == 0


@pytest.mark.parametrize("pool", config.POOL_MODES)
def test_retrieval_with_compact_tfidf_vectors_equals_the_dense_path(toy_tfidf, pool: str) -> None:
    examples, encoder, store = toy_tfidf
    chosen = settings(pool=pool)
    compact = retrieve_arms(examples, config.ARMS, chosen, encoder=encoder, store=store, depth=None)
    dense = retrieve_arms(
        examples, config.ARMS, chosen, encoder=encoder, store=DenseOnly(store), depth=None
    )
    for arm in config.ARMS:
        a, b = compact[arm], dense[arm]
        np.testing.assert_array_equal(a.target_ranks, b.target_ranks)
        assert_scores_match(np.concatenate(a.top_scores), np.concatenate(b.top_scores))
        assert a.metrics() == pytest.approx(b.metrics(), abs=FLOAT_TOLERANCE)
    b_rel = [ex.bridge.sentences[0] for ex in examples]
    geometries = [
        build_geometry(examples, b_rel, chosen, encoder=encoder, store=s)
        for s in (store, DenseOnly(store))
    ]
    assert is_sparse(geometries[0].document_vectors)
    for weight in (0.0, config.ALPHA, 1.0):
        np.testing.assert_array_equal(*(g.target_ranks(weight) for g in geometries))
