"""Corpus retrieval in bounded memory equals the dense path.

The dense path (``score_candidates`` + ``rank_candidates`` over a padded queries × candidates
matrix, then :mod:`regime_core.metrics` over the full score rows) is the independent reference:
every test compares the streamed kernel, the summary metrics, ``retrieve_arms`` in corpus mode
and ``UnionGeometry.target_ranks`` against it — ranks, rows, hits and counts exactly, float
scores and margins within ``helpers.FLOAT_TOLERANCE`` — on random cases with many exact ties,
with padding (queries with and without an excluded row), several block sizes, and on a real
prepared dataset. The numeric tests run under two OpenBLAS kernels in CI (``.ci/run``).
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any

import numpy as np
import pytest
from helpers import assert_metrics_match, assert_scores_match, settings

from regime_core import config
from regime_core.experiments.outcomes import ranking_metrics
from regime_core.metrics import (
    METRICS,
    SUMMARY_KERNELS,
    QuerySummaries,
    default_metrics,
    evaluate_per_query,
    evaluate_summaries_per_query,
)
from regime_core.retrieval import (
    candidate_pools,
    document_text,
    plan_arm,
    rank_candidates,
    retrieve_arms,
    score_candidates,
    trec_run_lines,
)
from regime_core.retrieval.corpus_scan import default_block, query_blocks, scan_corpus
from regime_core.retrieval.ranking import RankingRun, build_ranking

METRIC_NAMES = [m.name for m in default_metrics((1, 3, 5))] + ["mrr@2"]


def _vectors(rng: np.random.Generator, n: int, d: int, ties: bool) -> np.ndarray:
    """Unit vectors; with ``ties``, 0/1 entries over few dimensions, so many scores tie exactly."""
    if ties:
        x = (rng.random((n, d)) < 0.3).astype(np.float32)
        x[x.sum(axis=1) == 0, 0] = 1.0
    else:
        x = rng.standard_normal((n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _case(seed: int, n: int, n_passages: int, d: int, ties: bool, mixed: bool) -> dict[str, Any]:
    """A random corpus case: excluded rows (some -1 when ``mixed``: ragged, padded rows),
    targets, and up to 3 golds per query (-1 padding, sometimes the excluded row)."""
    rng = np.random.default_rng(seed)
    docs = _vectors(rng, n_passages, d, ties)
    if ties:  # duplicate passages: identical scores at different positions
        docs[1::7] = docs[0]
    queries = _vectors(rng, n, d, ties)
    excluded = rng.integers(0, n_passages, n)
    if mixed:
        excluded[rng.random(n) < 0.4] = -1
    targets = np.array([rng.choice([r for r in range(n_passages) if r != e]) for e in excluded])
    golds = np.full((n, 3), -1, dtype=np.int64)
    for i in range(n):
        extra = rng.choice(n_passages, size=int(rng.integers(0, 3)), replace=False)
        row = list(dict.fromkeys([int(targets[i]), *map(int, extra)]))
        if rng.random() < 0.3 and excluded[i] >= 0:
            row = [*row[:2], int(excluded[i])]  # a gold that is not a candidate: rank 0
        golds[i, : len(row)] = row
    return {
        "docs": docs,
        "queries": queries,
        "excluded": excluded,
        "targets": targets,
        "golds": golds,
    }


def _dense(case: dict[str, Any], scorer: str) -> dict[str, Any]:
    """The reference: the dense path over padded candidate rows, and metrics over full rows."""
    n_passages = len(case["docs"])
    rows = [
        np.array([r for r in range(n_passages) if r != e], dtype=np.int64) for e in case["excluded"]
    ]
    width = max(len(r) for r in rows)
    padded = np.full((len(rows), width), -1, dtype=np.int64)
    for i, r in enumerate(rows):
        padded[i, : len(r)] = r
    scores = score_candidates(case["queries"], case["docs"], padded, scorer=scorer)
    order = rank_candidates(scores)
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(1, width + 1)[None, :].repeat(len(rows), 0), 1)
    targets, gold_positions, gold_ranks = [], [], []
    for i, r in enumerate(rows):
        pos = {int(row): p for p, row in enumerate(r)}
        targets.append(pos[int(case["targets"][i])])
        golds = [pos[int(g)] for g in case["golds"][i] if g >= 0 and int(g) in pos]
        gold_positions.append(sorted(set(golds) | {targets[-1]}))
        gold_ranks.append(
            [ranks[i, pos[int(g)]] if g >= 0 and int(g) in pos else 0 for g in case["golds"][i]]
        )
    table = evaluate_per_query(
        [scores[i, : len(r)] for i, r in enumerate(rows)],
        targets,
        METRIC_NAMES,
        gold=gold_positions,
    )
    return {
        "rows": rows,
        "scores": scores,
        "order": order,
        "target_ranks": ranks[np.arange(len(rows)), targets],
        "gold_ranks": np.array(gold_ranks, dtype=np.int64),
        "table": table,
    }


def _summaries(scan) -> QuerySummaries:
    # the target is gold: listed in golds by _case, so the gold ranks include its rank
    assert scan.negatives is not None
    return QuerySummaries(scan.target_ranks, scan.gold_ranks, scan.negatives)


@pytest.mark.parametrize("scorer", ["numpy", "faiss"])
@pytest.mark.parametrize(
    ("seed", "n", "n_passages", "ties", "mixed", "block"),
    [
        (0, 40, 60, True, True, None),
        (1, 40, 60, False, True, 3),
        (2, 259, 30, True, False, 7),  # two dense blocks; a 3-query tail
        (3, 257, 30, False, True, 1),  # a 1-query dense tail block (gemv in both paths)
        (4, 25, 9, True, True, 2),
        # ragged rows of 55 and 56 candidates: numpy's pairwise sum groups them differently,
        # so the sums must see the padding zeros exactly as metrics.RankedQueries pads
        (5, 30, 56, False, True, None),
        (6, 20, 301, False, True, 4),
    ],
)
def test_scan_equals_the_dense_path(scorer, seed, n, n_passages, ties, mixed, block):
    case = _case(seed, n, n_passages, 16, ties, mixed)
    ref = _dense(case, scorer)
    for k in (0, 1, 5, n_passages - 1, n_passages + 3, None):
        scan = scan_corpus(
            case["queries"],
            case["docs"],
            excluded=case["excluded"],
            targets=case["targets"],
            golds=case["golds"],
            k=k,
            scorer=scorer,
            block=block,
        )
        np.testing.assert_array_equal(scan.target_ranks, ref["target_ranks"])
        np.testing.assert_array_equal(scan.gold_ranks, ref["gold_ranks"])
        for i, rows in enumerate(ref["rows"]):
            depth = len(rows) if k is None else min(k, len(rows))
            top = ref["order"][i, :depth]
            real = scan.top_rows[i] >= 0
            np.testing.assert_array_equal(scan.top_rows[i][real], rows[top])
            assert_scores_match(scan.top_scores[i][real], ref["scores"][i, top])
        table = evaluate_summaries_per_query(_summaries(scan), METRIC_NAMES)
        assert_metrics_match(table, ref["table"])
    if ties:  # the case really has ties at the target (else the tie rule is untested)
        t = ref["scores"][
            np.arange(n),
            [r.tolist().index(t) for r, t in zip(ref["rows"], case["targets"], strict=True)],
        ]
        assert np.any(np.sum(ref["scores"] == t[:, None], axis=1) > 1)


def test_ranks_only_and_rejections():
    case = _case(5, 12, 20, 8, True, True)
    full = scan_corpus(
        case["queries"], case["docs"], excluded=case["excluded"], targets=case["targets"]
    )
    fast = scan_corpus(
        case["queries"],
        case["docs"],
        excluded=case["excluded"],
        targets=case["targets"],
        negatives=False,
    )
    np.testing.assert_array_equal(fast.target_ranks, full.target_ranks)
    assert fast.negatives is None and fast.top_rows.shape == (12, 0)


def test_blocks_subdivide_the_dense_blocks_and_fit_the_budget():
    for n, block, min_block in [(1000, 33, 2), (513, 100, 20), (257, 1, 2), (5, 2, 20)]:
        blocks = list(query_blocks(n, block, min_block))
        assert blocks[0][0] == 0 and blocks[-1][1] == n
        assert all(a[1] == b[0] for a, b in itertools.pairwise(blocks))
        for start, stop in blocks:
            assert start // 256 == (stop - 1) // 256  # never straddles a dense block
            dense_size = min(256, n - start // 256 * 256)
            assert stop - start >= min(min_block, dense_size)
    assert default_block(1_000_000) * 1_000_000 <= 2**25
    assert default_block(10) == 256


def test_summary_kernels_cover_every_metric():
    assert set(SUMMARY_KERNELS) == set(METRICS)


# --- retrieve_arms and UnionGeometry in corpus mode -------------------------------------------


class _Store:
    """Encodes with the encoder itself, keeping what it encoded: the bounded path and its dense
    reference then read the same vectors, each list of texts encoded once per test."""

    def __init__(self) -> None:
        self.encoded: dict[tuple[int, str, tuple[str, ...]], np.ndarray] = {}

    def embed(self, encoder: Any, texts, mode: str) -> np.ndarray:
        key = (id(encoder), mode, tuple(texts))
        if key not in self.encoded:
            encode = encoder.encode_queries if mode == "query" else encoder.encode_documents
            self.encoded[key] = encode(list(texts))
        return self.encoded[key].copy()  # a caller writing into its vectors changes no other's


def _dense_rankings(examples, arms, encoder, *, k, scorer, store=None):
    """retrieve_arms as it was before bounded corpus mode: padded dense scores, argsort."""
    store = store or _Store()
    pools = candidate_pools(examples, "corpus")
    padded = pools.padded()
    docs = store.embed(encoder, [document_text(p) for p in pools.passages], "document")
    out = {}
    for arm in arms:
        plan = plan_arm(examples, arm, [ex.relation_sentence for ex in examples], settings())
        texts = plan.texts()
        queries = plan.query_vectors(
            store.embed(encoder, texts, "query"), {t: row for row, t in enumerate(texts)}
        )
        scores = score_candidates(queries, docs, padded[list(plan.kept)], scorer=scorer)
        run = RankingRun(arm=arm, encoder=encoder.name, alpha=config.ALPHA, scorer=scorer, k=k)
        out[arm] = build_ranking(examples, plan, pools, scores, rank_candidates(scores), run)
    return out


def _assert_same_rankings(new, old) -> None:
    assert new.candidate_scores == () and new.negatives is not None  # nothing queries × passages
    assert new.query_ids == old.query_ids and new.missing == old.missing
    assert new.top_pids == old.top_pids
    for a, b in zip(new.top_scores, old.top_scores, strict=True):
        assert_scores_match(a, b)
    np.testing.assert_array_equal(new.target_ranks, old.target_ranks)
    assert new.gold_pids == old.gold_pids
    for a, b in zip(new.gold_ranks, old.gold_ranks, strict=True):
        np.testing.assert_array_equal(a, b)
    new_lines = [line.split() for line in trec_run_lines(new, "t")]
    old_lines = [line.split() for line in trec_run_lines(old, "t")]
    assert [[*r[:4], r[5]] for r in new_lines] == [[*r[:4], r[5]] for r in old_lines]
    assert_scores_match([float(r[4]) for r in new_lines], [float(r[4]) for r in old_lines])
    if len(new):
        assert_metrics_match(new.per_query_metrics(), old.per_query_metrics())
        for k in config.K_VALUES:
            assert_metrics_match(ranking_metrics(new, k), ranking_metrics(old, k))
        assert [list(new.candidate_rows[i]) for i in range(len(new))] == [
            list(old.candidate_rows[i]) for i in range(len(old))
        ]


@pytest.mark.parametrize("scorer", ["numpy", "faiss"])
@pytest.mark.parametrize("k", [3, None])
def test_retrieve_arms_corpus_equals_the_dense_path(scorer, k):
    from regime_core.encoders import get_encoder

    examples = _toy_examples()
    texts = [document_text(p) for ex in examples for p in ex.pool]
    encoder = get_encoder("tfidf", corpus=texts)  # bag of words: many exact ties
    new = retrieve_arms(
        examples,
        config.ARMS,
        settings(pool="corpus"),
        encoder=encoder,
        store=_Store(),
        scorer=scorer,
        depth=k,
    )
    old = _dense_rankings(examples, config.ARMS, encoder, k=k, scorer=scorer)
    for arm in config.ARMS:
        _assert_same_rankings(new[arm], old[arm])


def _toy_examples():
    from regime_core.data.toyworld.generator import ToyWorldConfig, generate

    # 60 questions, about 500 distinct passages: corpus mode over all of them
    return generate(ToyWorldConfig(n_questions=60))


def test_corpus_pools_store_one_excluded_row_per_example():
    examples = _toy_examples()
    pools = candidate_pools(examples, "corpus")
    n = len(pools.passages)
    assert pools.excluded_rows is not None and pools.excluded_rows.shape == (len(examples),)
    for ex, rows, excluded in zip(examples, pools.candidates, pools.excluded_rows, strict=True):
        assert pools.passages[excluded].pid == ex.bridge_pid
        np.testing.assert_array_equal(rows, np.delete(np.arange(n), excluded))
    np.testing.assert_array_equal(pools.widths(), n - 1)
    assert [list(r) for r in pools.candidates[:2]] == [list(pools.candidates[i]) for i in (0, 1)]
    kept = candidate_pools(examples, "corpus", exclude_bridge=False)
    assert kept.excluded_rows is not None and np.all(kept.excluded_rows == -1)
    np.testing.assert_array_equal(kept.candidates[0], np.arange(n))


def test_union_geometry_corpus_equals_dense():
    from regime_core.encoders import get_encoder
    from regime_core.retrieval.geometry import build_geometry

    examples = _toy_examples()
    encoder = get_encoder("tfidf", corpus=[document_text(p) for ex in examples for p in ex.pool])
    b_rel = [ex.bridge.sentences[0] for ex in examples]
    geometry = build_geometry(
        examples, b_rel, settings(pool="corpus"), encoder=encoder, store=_Store()
    )
    assert geometry.candidates is None and geometry.excluded_rows is not None
    pools = candidate_pools(examples, "corpus")
    dense = dataclasses.replace(geometry, candidates=pools.padded(), excluded_rows=None)
    rng = np.random.default_rng(0)
    for weights in (0.0, config.ALPHA, rng.random(len(examples))):
        np.testing.assert_array_equal(geometry.target_ranks(weights), dense.target_ranks(weights))


# --- real data ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def prepared_work(prepared_real_work):
    return prepared_real_work


@pytest.mark.realdata
@pytest.mark.parametrize("dataset", ["hotpotqa", "2wikimultihopqa", "musique"])
def test_real_corpus_retrieval_equals_the_dense_path(prepared_work, dataset):
    from regime_core.data import corpus_passages, load_examples
    from regime_core.encoders import get_encoder

    # 300 dev questions: a corpus of a few thousand passages (the dense reference must fit)
    examples = load_examples(dataset, split="dev", work=prepared_work)[:300]
    encoder = get_encoder("tfidf", corpus=[document_text(p) for p in corpus_passages(examples)])
    arms = ("q", "union", "entity")
    store = _Store()  # each text encoded once, for both paths and both scorers
    new = retrieve_arms(
        examples, arms, settings(pool="corpus"), encoder=encoder, store=store, depth=10
    )
    assert new["q"].scorer == "numpy"  # the default in corpus mode
    # faiss (search with k = every passage) is slow: cross-checked on one dataset only
    for scorer in ("numpy", "faiss") if dataset == "musique" else ("numpy",):
        if scorer == "faiss":
            new = retrieve_arms(
                examples,
                arms,
                settings(pool="corpus"),
                encoder=encoder,
                store=store,
                scorer="faiss",
                depth=10,
            )
        old = _dense_rankings(
            examples, arms, encoder, k=max(config.K_VALUES), scorer=scorer, store=store
        )
        for arm in arms:
            assert len(new[arm]) > 100
            _assert_same_rankings(new[arm], old[arm])


def test_corpus_ranking_without_queries_has_nan_means():
    from regime_core.encoders import get_encoder

    examples = [dataclasses.replace(ex, relation_sentence=None) for ex in _toy_examples()[:3]]
    encoder = get_encoder("tfidf", corpus=[document_text(p) for ex in examples for p in ex.pool])
    ranking = retrieve_arms(
        examples, ("union",), settings(pool="corpus"), encoder=encoder, store=_Store(), depth=10
    )["union"]
    assert len(ranking) == 0 and len(ranking.missing) == 3
    assert ranking.metrics()["n"] == 0 and np.isnan(ranking.metrics()["hit@5"])
    assert ranking_metrics(ranking, 5).empty
