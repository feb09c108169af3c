"""The approximate index (IVF, HNSW) against exact search, on seeded synthetic vectors.

The exact top k comes from an independent implementation: a plain numpy product and stable
argsort, itself checked against :func:`~regime_core.retrieval.corpus_scan.scan_corpus`.
"""

from __future__ import annotations

import dataclasses
import doctest
from typing import Any

import numpy as np
import pytest
from helpers import refused

from regime_core.retrieval import ann
from regime_core.retrieval.ann import AnnIndexConfig, build_index, recall_at_k, search
from regime_core.retrieval.corpus_scan import scan_corpus

K = 10


def _unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


@pytest.fixture(scope="module")
def clustered() -> tuple[np.ndarray, np.ndarray]:
    """3,000 passages and 200 queries in 64 dimensions, around 40 seeded centres: the structure
    embeddings have and an approximate index exploits."""
    rng = np.random.default_rng(7)
    centres = _unit(rng.standard_normal((40, 64)))
    docs = centres[rng.integers(0, 40, 3000)] + 0.15 * rng.standard_normal((3000, 64))
    queries = centres[rng.integers(0, 40, 200)] + 0.15 * rng.standard_normal((200, 64))
    return _unit(docs), _unit(queries)


def _exact(docs: np.ndarray, queries: np.ndarray, k: int = K) -> np.ndarray:
    return np.argsort(-(queries @ docs.T), axis=1, kind="stable")[:, :k]


def test_the_numpy_reference_is_scan_corpus_top_k(clustered: Any) -> None:
    docs, queries = clustered
    n = len(queries)
    scan = scan_corpus(
        queries,
        docs,
        excluded=np.full(n, -1),
        targets=np.zeros(n, dtype=np.int64),
        k=K,
        negatives=False,
    )
    np.testing.assert_array_equal(scan.top_rows, _exact(docs, queries))


def test_ivf_scanning_every_list_is_exact(clustered: Any) -> None:
    docs, queries = clustered
    index = build_index(docs, AnnIndexConfig("ivf", nlist=32, nprobe=32))
    rows, scores = search(index, queries, K)
    exact = _exact(docs, queries)
    assert recall_at_k(rows, exact) == 1.0
    expected = np.take_along_axis(queries @ docs.T, exact, axis=1)
    np.testing.assert_allclose(scores, expected, atol=1e-5)
    assert rows.dtype == np.int64 and scores.dtype == np.float32


def test_ivf_recall_grows_with_nprobe(clustered: Any) -> None:
    docs, queries = clustered
    exact = _exact(docs, queries)
    recalls = []
    for nprobe in (1, 4, 32):
        index = build_index(docs, AnnIndexConfig("ivf", nlist=32, nprobe=nprobe))
        recalls.append(recall_at_k(search(index, queries, K)[0], exact))
    assert recalls == sorted(recalls) and recalls[0] < 1.0 and recalls[-1] == 1.0


def test_hnsw_recall_is_high_on_clustered_vectors(clustered: Any) -> None:
    docs, queries = clustered
    index = build_index(docs, AnnIndexConfig("hnsw", m=16, ef_construction=40, ef_search=64))
    rows, _ = search(index, queries, K)
    assert recall_at_k(rows, _exact(docs, queries)) > 0.9


@pytest.mark.parametrize("kind", ["ivf", "hnsw"])
def test_two_builds_give_identical_results(clustered: Any, kind: str) -> None:
    docs, queries = clustered
    cfg = AnnIndexConfig(kind, nlist=32, nprobe=4, m=16, ef_construction=40, ef_search=16)
    first = search(build_index(docs, cfg), queries, K)
    second = search(build_index(docs, cfg), queries, K)
    np.testing.assert_array_equal(first[0], second[0])
    np.testing.assert_array_equal(first[1], second[1])


def test_default_nlist_builds_without_a_chosen_nlist(clustered: Any) -> None:
    docs, queries = clustered
    index = build_index(docs, AnnIndexConfig("ivf"))
    assert index.nlist == ann.default_nlist(len(docs)) == 76
    assert index.nprobe == 16
    assert recall_at_k(search(index, queries, K)[0], _exact(docs, queries)) > 0.9


def test_search_blocks_and_padding(clustered: Any) -> None:
    docs, queries = clustered
    index = build_index(docs, AnnIndexConfig("hnsw", m=16, ef_construction=40))
    whole = search(index, queries, K)
    blocked = search(index, queries, K, block=7)
    np.testing.assert_array_equal(whole[0], blocked[0])
    np.testing.assert_array_equal(whole[1], blocked[1])
    small = build_index(docs[:5], AnnIndexConfig("hnsw", m=4, ef_construction=8))
    rows, scores = search(small, queries[:3], 8)
    assert (rows[:, 5:] == -1).all() and np.isneginf(scores[:, 5:]).all()
    assert sorted(rows[0, :5]) == [0, 1, 2, 3, 4]


def test_recall_at_k_on_a_hand_made_example() -> None:
    exact = np.array([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, -1, -1]])
    approx = np.array(
        [
            [4, 3, 2, 1],  # all four, in another order: 1
            [5, -1, 99, 6],  # two of four; the -1 pad is a miss: 1/2
            [-1, 10, -1, 9],  # both of the two the corpus had (padding never matches): 1
        ]
    )
    assert recall_at_k(approx, exact) == pytest.approx((1 + 0.5 + 1) / 3)
    assert recall_at_k(exact, exact) == 1.0
    assert recall_at_k(np.full((1, 2), -1), np.array([[0, 1]])) == 0.0


def test_nprobe_beyond_nlist_is_refused_naming_both() -> None:
    # each field's own kind is refused as every config's is (tests/test_inputs_configs.py)
    with refused(ValueError, names=["AnnIndexConfig", "nprobe", "nlist"]):
        AnnIndexConfig(nlist=8, nprobe=9)


def test_config_is_frozen_hashable_and_reads_parameters() -> None:
    cfg = AnnIndexConfig.from_parameters(kind="ivf", nlist=None, nprobe=4, output_dir="x")
    assert (cfg.kind, cfg.nlist, cfg.nprobe) == ("ivf", None, 4)
    assert cfg.config_hash() == AnnIndexConfig("ivf", nprobe=4).config_hash()
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.nprobe = 8  # type: ignore[misc]
    with refused(ValueError, names=["AnnIndexConfig", "'nprobe'", "'many'"]):
        AnnIndexConfig.from_parameters(nprobe="many")


def test_bad_inputs_raise(clustered: Any) -> None:
    docs, _queries = clustered
    with pytest.raises(ValueError, match=r"AnnIndexConfig\.nlist \(50\) must be <= the passages"):
        build_index(docs[:20], AnnIndexConfig("ivf", nlist=50, nprobe=1))
    bad = docs[:10].copy()
    bad[3, 0] = np.nan
    with pytest.raises(ValueError, match="non-finite"):
        build_index(bad, AnnIndexConfig("hnsw"))


def test_doctests_pass() -> None:
    assert doctest.testmod(ann).failed == 0
