"""Retrieval: pools, arms, exact scoring (numpy = faiss), rankings, run files scored by others."""

from __future__ import annotations

import dataclasses
import doctest
import importlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from builders import two_hop_example
from helpers import HashingEncoder, RecordingStore, refused, settings
from scipy.sparse import csr_matrix, vstack

from regime_core import config
from regime_core.retrieval import (
    MISSING_B_REL,
    MISSING_ENTITY,
    MISSING_KNOCKOUT_TEXT,
    MissingArmInput,
    arm_query_texts,
    candidate_pools,
    combine_query_vectors,
    default_scorer,
    document_text,
    rank_candidates,
    retrieve,
    retrieve_arms,
    score_candidates,
    trec_run_lines,
    write_run_and_qrels,
)
from regime_core.retrieval.queries import combine_union_vectors
from regime_core.schema import Example, Passage

# --- fixtures: a tiny hand-written world (no dataset text) -----------------------------------


def _example(
    qid: str,
    question: str,
    bridge: Passage,
    target: Passage,
    distractors: Sequence[Passage],
    *,
    relation_sentence: int | None,
    hop2_entity: str,
) -> Example:
    """Pool order (the order ties are broken in): a distractor, the bridge, the other
    distractors, the target."""
    example = two_hop_example(
        question,
        bridge,
        target,
        *distractors,
        hop2_entity=hop2_entity,
        relation_sentence=relation_sentence,
        relation_source="synthetic" if relation_sentence is not None else "none",
        example_id=qid,
    )
    return dataclasses.replace(example, pool=(distractors[0], bridge, *distractors[1:], target))


P = {
    "orchard": Passage.make(
        "Velmora Orchard",
        ["Velmora Orchard grows pears.", "Its founder was Tamsin Kroll.", "It is old."],
    ),
    "kroll": Passage.make("Tamsin Kroll", ["Tamsin Kroll was a botanist born in Quillby."]),
    "quillby": Passage.make("Quillby", ["Quillby is a harbour town with a lighthouse."]),
    "lighthouse": Passage.make("Quillby Light", ["The lighthouse of Quillby is red."]),
    "pears": Passage.make("Pear", ["Pears are fruit grown in orchards."]),
    "river": Passage.make("Dunmere River", ["The Dunmere River flows past Quillby."]),
    "single": Passage.make("Brask Mill", ["Brask Mill was built by Oren Vale."]),
    "vale": Passage.make("Oren Vale", ["Oren Vale was an engineer from Lisk."]),
    "lisk": Passage.make("Lisk", ["Lisk is a village near the Dunmere River."]),
}


@pytest.fixture()
def examples() -> list[Example]:
    return [
        _example(
            "q1",
            "Where was the founder of Velmora Orchard born?",
            P["orchard"],
            P["kroll"],
            [P["pears"], P["quillby"]],
            relation_sentence=1,
            hop2_entity="Tamsin Kroll",
        ),
        _example(
            "q2",
            "What colour is the lighthouse of the town where Tamsin Kroll was born?",
            P["kroll"],
            P["lighthouse"],
            [P["quillby"], P["river"]],
            relation_sentence=None,  # no gold B_rel: union/knockout must count it as missing
            hop2_entity="Quillby",
        ),
        _example(
            "q3",
            "Where did the builder of Brask Mill come from?",
            P["single"],
            P["vale"],
            [P["lisk"], P["pears"], P["river"]],
            relation_sentence=0,  # the bridge's only sentence: knockout has nothing left
            hop2_entity="Oren Vale",
        ),
    ]


def _distinct_passages(examples: Sequence[Example]) -> list[Passage]:
    return list({p.pid: p for ex in examples for p in ex.pool}.values())


@pytest.mark.parametrize("module", ["scoring", "queries", "ranking", "corpus_scan"])
def test_doctests_pass(module: str) -> None:
    result = doctest.testmod(importlib.import_module(f"regime_core.retrieval.{module}"))
    assert result.attempted > 0 and result.failed == 0


# --- pools -----------------------------------------------------------------------------------


def test_question_pool_is_the_examples_pool_in_order_without_the_bridge(examples):
    pools = candidate_pools(examples, "question")
    for ex, rows in zip(examples, pools.candidates, strict=True):
        pids = [pools.passages[r].pid for r in rows]
        assert pids == [p.pid for p in ex.pool if p.pid != ex.bridge_pid]
    kept = candidate_pools(examples, "question", exclude_bridge=False)
    assert [kept.passages[r].pid for r in kept.candidates[0]] == [p.pid for p in examples[0].pool]


def test_corpus_pool_is_every_distinct_passage_but_the_bridge(examples):
    pools = candidate_pools(examples, "corpus")
    n = len(_distinct_passages(examples))
    assert len(pools.passages) == n == 9
    for ex, rows in zip(examples, pools.candidates, strict=True):
        assert len(rows) == n - 1
        assert ex.bridge_pid not in {pools.passages[r].pid for r in rows}
        assert list(rows) == sorted(rows)  # corpus order is the tie order


def test_pools_reject_bad_input(examples):
    duplicated = [*_distinct_passages(examples), P["kroll"]]
    with pytest.raises(ValueError, match="appears twice"):
        candidate_pools(examples, "question", passages=duplicated)


def _retrieve(examples, arm, chosen=None, **options):
    """``retrieve`` with the hashing encoder, a fresh recording store and depth 10 (unless
    ``options`` say otherwise), under ``chosen`` settings (default: the config's)."""
    options = {"encoder": HashingEncoder(), "store": RecordingStore(), "depth": 10, **options}
    return retrieve(examples, arm, chosen or settings(), **options)


# --- arms ------------------------------------------------------------------------------------


def test_arm_query_texts_build_each_arm(examples):
    ex = examples[0]
    q = (ex.question, 1.0)
    a, default = config.ALPHA, settings()
    assert arm_query_texts(ex, "q", 1, default) == [q]
    assert arm_query_texts(ex, "bridge", 1, default) == [(ex.bridge.text, 1.0)]
    assert arm_query_texts(ex, "union", 1, default) == [q, ("Its founder was Tamsin Kroll.", a)]
    assert arm_query_texts(ex, "knockout", 1, default) == [
        q,
        ("Velmora Orchard grows pears. It is old.", a),
    ]
    assert arm_query_texts(ex, "entity", None, default) == [q, ("Tamsin Kroll", a)]
    # B_rel given as text (a selector's output) works like its index
    as_text = arm_query_texts(ex, "knockout", "Its founder was Tamsin Kroll.", default)
    assert as_text == arm_query_texts(ex, "knockout", 1, default)
    assert arm_query_texts(ex, "union", 2, settings(alpha=0.5))[1] == ("It is old.", 0.5)


def test_arm_query_texts_report_missing_inputs(examples):
    default = settings()
    with pytest.raises(MissingArmInput) as err:
        arm_query_texts(examples[1], "union", None, default)
    assert err.value.reason == MISSING_B_REL
    with pytest.raises(MissingArmInput) as err:
        arm_query_texts(examples[2], "knockout", 0, settings(knockout_single="exclude"))
    assert err.value.reason == MISSING_KNOCKOUT_TEXT
    # by default a single-sentence bridge without its B_rel leaves its title
    assert arm_query_texts(examples[2], "knockout", 0, settings(alpha=0.5)) == [
        (examples[2].question, 1.0),
        (examples[2].bridge.title, 0.5),
    ]
    with pytest.raises(ValueError, match="knockout_single"):
        settings(knockout_single="empty")  # refused where the settings are built
    blank = Example(**{**examples[0].__dict__, "hop2_entity": " "})
    with pytest.raises(MissingArmInput) as err:
        arm_query_texts(blank, "entity", 1, default)
    assert err.value.reason == MISSING_ENTITY
    with pytest.raises(ValueError, match="outside the bridge"):
        arm_query_texts(examples[0], "union", 7, default)


def test_combine_query_vectors_weights_and_renormalises():
    vecs = np.array([[1, 0, 0], [0, 1, 0]], dtype=np.float32)
    out = combine_query_vectors(vecs, [[(0, 1.0)], [(0, 1.0), (1, 0.25)]])
    np.testing.assert_allclose(out[0], [1, 0, 0])
    np.testing.assert_allclose(out[1], np.array([1, 0.25, 0]) / np.hypot(1, 0.25), rtol=1e-6)
    # a zero text vector (TF-IDF, out of vocabulary) stays zero instead of becoming NaN
    np.testing.assert_array_equal(
        combine_query_vectors(np.zeros((1, 3), dtype=np.float32), [[(0, 1.0)]]), 0
    )


def test_combine_union_vectors_equals_combine_query_vectors_bit_for_bit():
    rng = np.random.default_rng(7)
    n, d = 300, 24  # more rows than one sparse block
    q = rng.standard_normal((n, d)).astype(np.float32)
    b = rng.standard_normal((n, d)).astype(np.float32)
    q[0] = -0.0  # signed zeros: the sum starts from +0.0 in both
    b[1] = -q[1]  # q + 1·b = 0: a zero query stays zero
    b[2, :5] = 0.0
    weights = rng.uniform(0, 2, n)  # float64: both round each weight to float32
    weights[1], weights[3] = 1.0, 0.0
    parts = [[(i, 1.0), (n + i, float(weights[i]))] for i in range(n)]
    expected = combine_query_vectors(np.concatenate([q, b]), parts)
    got = combine_union_vectors(q, b, weights)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, expected)
    assert np.array_equal(np.signbit(got), np.signbit(expected))
    sparse_q, sparse_b = csr_matrix(np.where(np.abs(q) < 0.5, 0, q)), csr_matrix(b)
    sparse_text = vstack([sparse_q, sparse_b], format="csr")
    np.testing.assert_array_equal(
        combine_union_vectors(sparse_q, sparse_b, weights),
        combine_query_vectors(sparse_text, parts),
    )


# --- scoring kernels -------------------------------------------------------------------------


def _unit(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    x = rng.standard_normal((n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


@pytest.mark.parametrize("dense", [False, True])
def test_numpy_and_faiss_give_the_same_scores_and_rankings(dense):
    rng = np.random.default_rng(config.SEED)
    docs, queries = _unit(rng, 300, 32), _unit(rng, 40, 32)
    if dense:  # corpus mode: every passage but one per query
        cands = np.stack([np.delete(np.arange(300), i) for i in range(40)])
    else:  # ragged small pools padded with -1
        cands = rng.integers(0, 300, size=(40, 12))
        cands[::3, 9:] = -1
    s_np = score_candidates(queries, docs, cands, scorer="numpy")
    s_fa = score_candidates(queries, docs, cands, scorer="faiss")
    real = cands >= 0
    expected = np.einsum("nd,nmd->nm", queries.astype(np.float64), docs[np.maximum(cands, 0)])
    np.testing.assert_allclose(s_np[real], expected[real], atol=1e-6)
    np.testing.assert_allclose(s_fa[real], expected[real], atol=1e-6)
    assert np.all(np.isneginf(s_np[~real])) and np.all(np.isneginf(s_fa[~real]))
    np.testing.assert_array_equal(rank_candidates(s_np), rank_candidates(s_fa))


def test_default_scorer_follows_the_candidates_shape(examples):
    # real sizes: ten-passage pools in a 6,641-passage corpus, or the whole corpus
    assert default_scorer(np.zeros((685, 9), np.int64), 6641) == "faiss"
    assert default_scorer(np.zeros((685, 6640), np.int64), 6641) == "numpy"
    enc = HashingEncoder()
    for mode in config.POOL_MODES:
        ranking = retrieve(
            examples, "q", settings(pool=mode), encoder=enc, store=RecordingStore(), depth=10
        )
        pools = candidate_pools(examples, mode)
        assert ranking.scorer == default_scorer(pools.padded(), len(pools.passages))
        other = "numpy" if ranking.scorer == "faiss" else "faiss"
        alt = retrieve(
            examples,
            "q",
            settings(pool=mode),
            encoder=enc,
            store=RecordingStore(),
            scorer=other,
            depth=10,
        )
        assert alt.scorer == other
        assert alt.top_pids == ranking.top_pids
        np.testing.assert_array_equal(alt.target_ranks, ranking.target_ranks)


def test_rank_candidates_breaks_ties_by_candidate_order():
    scores = np.array([[0.1, 0.7, 0.7, 0.3, -np.inf], [0.5, 0.5, 0.5, 0.5, 0.5]], np.float32)
    np.testing.assert_array_equal(rank_candidates(scores), [[1, 2, 3, 0, 4], [0, 1, 2, 3, 4]])


# --- retrieve --------------------------------------------------------------------------------


def _brute_force_order(query: np.ndarray, docs: np.ndarray, rows: Sequence[int]) -> list[int]:
    scores = [float(np.dot(query.astype(np.float64), docs[r])) for r in rows]
    # best first, ties by candidate position (Python's sort is stable)
    return [rows[i] for i in sorted(range(len(rows)), key=lambda i: -scores[i])]


@pytest.mark.parametrize("pool", config.POOL_MODES)
@pytest.mark.parametrize("scorer", ["numpy", "faiss"])
def test_retrieve_matches_brute_force_cosine(examples, pool, scorer):
    enc, store = HashingEncoder(), RecordingStore()
    ranking = retrieve(
        examples, "union", settings(pool=pool), encoder=enc, store=store, scorer=scorer, depth=3
    )
    # q2 has no gold B_rel: counted, not ranked
    assert ranking.query_ids == ("q1", "q3")
    assert ranking.missing == (("q2", MISSING_B_REL),)
    assert ranking.n_missing_b_rel == 1
    pools = candidate_pools(examples, pool)
    docs = enc.encode_documents([document_text(p) for p in pools.passages])
    for r, i in enumerate((0, 2)):
        ex = examples[i]
        qvec = combine_query_vectors(
            enc.encode_queries([ex.question, ex.b_rel]), [[(0, 1.0), (1, config.ALPHA)]]
        )[0]
        order = _brute_force_order(qvec, docs, list(pools.candidates[i]))
        pids = [pools.passages[row].pid for row in order]
        assert ranking.top_pids[r] == tuple(pids[:3])
        assert ranking.target_ranks[r] == pids.index(ex.target_pid) + 1
        assert list(ranking.top_scores[r]) == sorted(ranking.top_scores[r], reverse=True)
        # the excluded bridge is a gold without a rank
        assert dict(zip(ranking.gold_pids[r], ranking.gold_ranks[r], strict=True)) == {
            ex.bridge_pid: 0,
            ex.target_pid: ranking.target_ranks[r],
        }


def test_keeping_the_bridge_ranks_it(examples):
    ranking = _retrieve(examples, "bridge", settings(exclude_bridge=False))
    for r, ex in enumerate(examples):
        assert ex.bridge_pid in {ranking.passage_pids[row] for row in ranking.candidate_rows[r]}
        assert ranking.gold_ranks[r][0] >= 1  # the bridge is ranked now
    assert _retrieve(examples, "bridge").top_pids[0][0] != examples[0].bridge_pid


def test_retrieve_arms_encodes_each_text_once_and_equals_single_arm_runs(examples):
    enc, store = HashingEncoder(), RecordingStore()
    rankings = retrieve_arms(examples, config.ARMS, settings(), encoder=enc, store=store, depth=10)
    assert set(rankings) == set(config.ARMS)
    query_calls = [texts for mode, texts in store.calls if mode == "query"]
    doc_calls = [texts for mode, texts in store.calls if mode == "document"]
    assert len(query_calls) == 1 and len(doc_calls) == 1
    assert len(query_calls[0]) == len(set(query_calls[0]))  # no text encoded twice
    # the question of q1 serves q, union, knockout and entity but is encoded once
    assert query_calls[0].count(examples[0].question) == 1
    for arm, ranking in rankings.items():
        alone = retrieve(examples, arm, settings(), encoder=enc, store=RecordingStore(), depth=10)
        assert alone.query_ids == ranking.query_ids
        assert alone.top_pids == ranking.top_pids
        np.testing.assert_array_equal(alone.target_ranks, ranking.target_ranks)
    assert rankings["q"].missing == ()
    assert dict(rankings["knockout"].missing) == {"q2": MISSING_B_REL}  # q3 queries its title
    assert rankings["knockout"].n_missing_b_rel == 1
    assert examples[2].bridge.title in query_calls[0]
    dropped = retrieve_arms(
        examples,
        ("knockout",),
        settings(knockout_single="exclude"),
        encoder=enc,
        store=RecordingStore(),
        depth=10,
    )["knockout"]
    assert dict(dropped.missing) == {"q2": MISSING_B_REL, "q3": MISSING_KNOCKOUT_TEXT}


def test_selector_b_rel_overrides_gold(examples):
    enc = HashingEncoder()
    chosen = retrieve(
        examples,
        "union",
        settings(),
        encoder=enc,
        store=RecordingStore(),
        b_rel=[2, 0, 0],
        depth=10,
    )
    assert chosen.query_ids == ("q1", "q2", "q3")
    with pytest.raises(ValueError, match="b_rel has 1 entries"):
        retrieve(
            examples, "union", settings(), encoder=enc, store=RecordingStore(), b_rel=[0], depth=10
        )


def test_retrieve_is_deterministic(examples):
    runs = [
        retrieve_arms(
            examples,
            config.ARMS,
            settings(pool="corpus"),
            encoder=HashingEncoder(),
            store=RecordingStore(),
            depth=10,
        )
        for _ in range(2)
    ]
    for arm in config.ARMS:
        a, b = runs[0][arm], runs[1][arm]
        assert a.top_pids == b.top_pids
        np.testing.assert_array_equal(a.target_ranks, b.target_ranks)
        for sa, sb in zip(a.candidate_scores, b.candidate_scores, strict=True):
            np.testing.assert_array_equal(sa, sb)
        assert trec_run_lines(a, "t") == trec_run_lines(b, "t")


def test_retrieve_rejects_bad_parameters(examples):
    kw: dict[str, Any] = {"encoder": HashingEncoder(), "store": RecordingStore()}
    with pytest.raises(ValueError, match="not among"):
        retrieve_arms(examples, ["q", "hyde"], settings(), depth=10, **kw)
    for bad in (-0.25, float("nan"), float("inf")):  # a negative α never reaches the kernels
        with refused(ValueError, names=("'alpha'", "1e+18")):
            settings(alpha=bad)


# --- run files -------------------------------------------------------------------------------


def test_trec_run_format(examples, tmp_path):
    ranking = _retrieve(examples, "q", depth=2)
    lines = trec_run_lines(ranking, "regime-q")
    assert len(lines) == 2 * len(examples)
    qid, q0, pid, rank, score, tag = lines[0].split(" ")
    assert (qid, q0, pid, rank, tag) == ("q1", "Q0", ranking.top_pids[0][0], "1", "regime-q")
    assert np.float32(float(score)) == ranking.top_scores[0][0]  # 9 digits round-trip float32
    run, qrels = write_run_and_qrels(ranking, tmp_path / "run.txt", "regime-q")
    assert qrels.name == "run.txt.qrels"
    assert run.read_text().splitlines() == lines
    assert qrels.read_text().splitlines()[0] == f"q1 0 {examples[0].target_pid} 1"
    with pytest.raises(ValueError, match="whitespace"):
        trec_run_lines(ranking, "two words")


def test_metrics_hook_matches_the_ranks(examples):
    ranking = _retrieve(examples, "q", settings(pool="corpus"))
    table = ranking.per_query_metrics()
    assert list(table.index) == list(ranking.query_ids)
    ranks = ranking.target_ranks
    np.testing.assert_array_equal(table["rank"].to_numpy(), ranks)
    for k in config.K_VALUES:
        np.testing.assert_array_equal(table[f"hit@{k}"].to_numpy(), (ranks <= k).astype(float))
        # two golds, bridge excluded: recall over the remaining gold (the target) is hit@k
        np.testing.assert_array_equal(table[f"recall@{k}"], table[f"hit@{k}"])
    np.testing.assert_allclose(table["mrr"].to_numpy(), 1.0 / ranks)
    # auc: fraction of the non-gold candidates the target outscores. Corpus mode keeps no
    # candidate scores (bounded memory), so score them with the dense kernel.
    assert ranking.candidate_scores == () and ranking.negatives is not None
    enc, pools = HashingEncoder(), candidate_pools(examples, "corpus")
    docs = enc.encode_documents([document_text(p) for p in pools.passages])
    dense = score_candidates(
        enc.encode_queries([ex.question for ex in examples]), docs, pools.padded()
    )
    for r in range(len(ranking)):
        pids = [ranking.passage_pids[row] for row in ranking.candidate_rows[r]]
        scores = dict(zip(pids, dense[r], strict=True))
        target = scores.pop(ranking.target_pids[r])
        expected = np.mean([(s < target) + 0.5 * (s == target) for s in scores.values()])
        assert table["auc"].iloc[r] == pytest.approx(expected)
    means = ranking.metrics()
    assert means["n"] == 3
    assert means["hit@1"] == pytest.approx(float(np.mean(ranks <= 1)))
    # keeping the bridge makes it a rankable gold: recall counts it
    kept = _retrieve(examples, "q", settings(exclude_bridge=False))
    top_k = max(config.K_VALUES)
    assert kept.metrics()[f"recall@{top_k}"] == 1.0  # pools have at most 6 passages
    assert kept.per_query_metrics(metrics=["recall@1"])["recall@1"].max() <= 0.5


def test_empty_ranking_has_nan_means(examples):
    ranking = _retrieve(examples[1:2], "union")
    assert len(ranking) == 0 and ranking.n_missing_b_rel == 1
    means = ranking.metrics()
    assert means["n"] == 0 and np.isnan(means["hit@5"])


def _scores_from_ir_measures(run_path, qrels_path) -> dict[str, float]:
    import ir_measures

    measures = [ir_measures.Success @ k for k in config.K_VALUES] + [ir_measures.RR]
    agg = ir_measures.calc_aggregate(
        measures,
        list(ir_measures.read_trec_qrels(str(qrels_path))),
        list(ir_measures.read_trec_run(str(run_path))),
    )
    out = {f"ir_measures hit@{k}": agg[ir_measures.Success @ k] for k in config.K_VALUES}
    out["ir_measures mrr"] = agg[ir_measures.RR]
    return out


def _check_exported_run(examples, tmp_path, pool, *, tie_free: bool) -> None:
    ranking = _retrieve(examples, "q", settings(pool=pool), depth=None)
    run_path, qrels_path = write_run_and_qrels(ranking, tmp_path / "run", "t", tie_free=tie_free)
    ours = ranking.metrics(metrics=[f"hit@{k}" for k in config.K_VALUES] + ["mrr"])
    theirs = _scores_from_ir_measures(run_path, qrels_path)
    assert len(theirs) == len(config.K_VALUES) + 1
    for name, value in theirs.items():
        assert value == pytest.approx(ours[name.split(" ")[1]]), name


@pytest.mark.parametrize("pool", config.POOL_MODES)
@pytest.mark.parametrize("tie_free", [False, True])
def test_exported_run_scores_the_same_in_ir_measures(examples, tmp_path, pool, tie_free):
    _check_exported_run(examples, tmp_path, pool, tie_free=tie_free)


# --- real data -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def musique_dev(real_data_dir, tmp_path_factory) -> list[Example]:
    from regime_core import paths
    from regime_core.data import load_examples, prepare

    work = tmp_path_factory.mktemp("work")
    prepare(real_data_dir, paths.prepared_dir(work), ["musique"])
    return load_examples("musique", split="dev", work=work)


def _assert_same_ranks_but_near_ties(a, b, tolerance: float = 1e-6) -> None:
    """numpy and faiss round float32 sums differently (≤ a few ulp), so two candidates whose
    scores tie mathematically (bag-of-words vectors do that) may swap. Allow only that.
    (Rankings with k=None: their top lists hold every candidate's score, in both pool modes.)"""
    assert a.k is None
    for i in np.flatnonzero(a.target_ranks != b.target_ranks):
        scores = dict(zip(a.top_pids[i], a.top_scores[i], strict=True))
        target = scores.pop(a.target_pids[i])
        near_ties = sum(abs(s - target) < tolerance for s in scores.values())
        assert 1 <= abs(int(a.target_ranks[i]) - int(b.target_ranks[i])) <= near_ties


@pytest.mark.realdata
def test_real_pools_and_rankings(musique_dev):
    examples = musique_dev
    assert len(examples) > 100
    for mode in config.POOL_MODES:
        pools = candidate_pools(examples, mode)
        for ex, rows in zip(examples, pools.candidates, strict=True):
            pids = {pools.passages[r].pid for r in rows}
            assert ex.target_pid in pids and ex.bridge_pid not in pids
            if mode == "question":
                assert pids == {p.pid for p in ex.pool} - {ex.bridge_pid}
            else:
                assert len(rows) == len(pools.passages) - 1
    enc = HashingEncoder()
    for mode in config.POOL_MODES:

        def every_arm(**options: Any) -> dict[str, Any]:
            chosen = settings(pool=mode)  # noqa: B023  (called at once, in this iteration)
            return retrieve_arms(
                examples, config.ARMS, chosen, encoder=enc, store=RecordingStore(), depth=None,
                **options,
            )  # fmt: skip

        rankings = every_arm()
        other = every_arm(scorer="faiss" if rankings["q"].scorer == "numpy" else "numpy")
        for arm in config.ARMS:
            # every example is ranked or counted as missing, never dropped
            assert len(rankings[arm]) + len(rankings[arm].missing) == len(examples)
            _assert_same_ranks_but_near_ties(rankings[arm], other[arm])
        # alignment check: with the bridge kept, the bridge-text query finds the bridge itself
        kept = retrieve(
            examples,
            "bridge",
            settings(pool=mode, exclude_bridge=False),
            encoder=enc,
            store=RecordingStore(),
            depth=10,
        )
        bridge_ranks = [
            dict(zip(pids, ranks, strict=True))[ex.bridge_pid]
            for ex, pids, ranks in zip(examples, kept.gold_pids, kept.gold_ranks, strict=True)
        ]
        assert np.mean(np.array(bridge_ranks) == 1) > 0.95
