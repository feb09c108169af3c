"""The router experiments on a synthetic world (toyworld) with a hashing encoder: no download,
no dataset text, a few seconds."""

from __future__ import annotations

import dataclasses
import json
import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from regime_core import config
from regime_core.experiments import ablations
from regime_core.experiments import router_train as router
from regime_core.experiments import zero_shot_transfer as transfer
from regime_core.experiments.common import sample_examples
from regime_core.retrieval import retrieve_arms
from regime_core.router import DROPPED, FEATURE_NAMES, RegimeRouter, load_router
from regime_core.schema import Example
from regime_core.teaching.toyworld import ToyWorldConfig, generate

DIM = 64
RESAMPLES = 300


class HashingEncoder:
    """Bag of lower-cased words hashed (crc32) into DIM buckets, L2-normalised."""

    name = "hashing-test"

    @property
    def identity(self) -> dict[str, Any]:
        return {"name": self.name, "dim": DIM}

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in text.lower().replace(".", " ").replace("?", " ").split():
                out[i, zlib.crc32(word.encode()) % DIM] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts)

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts)


class DirectStore:
    """Stands in for EmbeddingStore: encodes directly."""

    def embed(self, encoder: Any, texts: Sequence[str], mode: str) -> np.ndarray:
        if mode == "query":
            return encoder.encode_queries(texts)
        return encoder.encode_documents(texts)


ENCODER = HashingEncoder()
STORE = DirectStore()


@pytest.fixture(scope="module", autouse=True)
def _one_blas_thread() -> Any:
    # Tiny logistic regressions: BLAS threads only add contention on a 2-core machine.
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        yield


def factory(name: str, corpus: Sequence[str]) -> HashingEncoder:
    return ENCODER


@pytest.fixture(scope="module")
def toy() -> list[Example]:
    return generate(ToyWorldConfig(n_questions=120, seed=0))


@pytest.fixture(scope="module")
def toy_other() -> list[Example]:
    # A second, independent world posing as a transfer dataset.
    return [
        dataclasses.replace(ex, dataset="musique")
        for ex in generate(ToyWorldConfig(n_questions=80, seed=1, b_dominant_share=0.3))
    ]


@pytest.fixture(scope="module")
def trained(toy: list[Example]) -> router.RouterTrainResult:
    cfg = router.RouterConfig(dataset="toyworld", bootstrap_resamples=RESAMPLES)
    return router.train_router(
        cfg, examples={"toyworld": toy}, encoder_factory=factory, store=STORE
    )


# --- geometry ----------------------------------------------------------------------------------


@pytest.mark.parametrize("pool", config.POOL_MODES)
def test_geometry_ranks_equal_retrieval_module(toy: list[Example], pool: str) -> None:
    sample = sample_examples(toy[:40], None, seed=0, dataset="toyworld", split="dev")
    data = router.build_routing_data(sample, encoder=ENCODER, store=STORE, pool=pool)
    rankings = retrieve_arms(
        list(sample.examples),
        ("q", "union"),
        encoder=ENCODER,
        store=STORE,
        pool=pool,
        b_rel=data.table["b_rel_index"].tolist(),
        k=None,
    )
    assert data.table["rank_q"].tolist() == rankings["q"].target_ranks.tolist()
    assert data.table["rank_union"].tolist() == rankings["union"].target_ranks.tolist()
    # Per-question weights: weight 0 everywhere is q, and mixing weights mixes the arms.
    mixed = np.where(np.arange(data.n) % 2 == 0, 0.0, config.ALPHA)
    expected = np.where(mixed == 0, data.table["rank_q"], data.table["rank_union"])
    assert data.geometry.target_ranks(mixed).tolist() == expected.tolist()


def test_geometry_rejects_negative_weights(toy: list[Example]) -> None:
    sample = sample_examples(toy[:5], None, seed=0, dataset="toyworld", split="dev")
    data = router.build_routing_data(sample, encoder=ENCODER, store=STORE)
    with pytest.raises(ValueError, match="weights"):
        data.geometry.target_ranks(-0.1)


def test_routing_data_uses_the_selector_not_gold(toy: list[Example]) -> None:
    sample = sample_examples(toy[:30], None, seed=0, dataset="toyworld", split="dev")
    data = router.build_routing_data(sample, encoder=ENCODER, store=STORE)
    from regime_core.router import select_b_rel

    for ex, index in zip(sample.examples, data.table["b_rel_index"], strict=True):
        chosen = select_b_rel(ex.question, ex.bridge.sentences, bridge_title=ex.bridge.title)
        assert chosen.index == index
    assert list(data.table.columns[-7:-2]) == list(FEATURE_NAMES)


# --- evaluation --------------------------------------------------------------------------------


def test_evaluate_routing_policies_and_oracle() -> None:
    hit_q = np.array([1, 0, 0, 1, 0, 1], dtype=bool)
    hit_u = np.array([1, 1, 0, 0, 1, 1], dtype=bool)
    routed = np.array([0, 1, 1, 1, 0, 0], dtype=bool)
    out = router.evaluate_routing(
        hit_q, hit_u, routed, np.full(6, 0.5), dataset="x", resamples=RESAMPLES
    )
    assert out.hits["routed"].tolist() == [True, True, False, False, False, True]
    assert out.hits["oracle"].tolist() == [True, True, False, True, True, True]
    c = out.comparison("routed_vs_q")
    assert c.diff == pytest.approx(0.0)
    assert (c.n_a_better, c.n_b_better) == (1, 1)
    gap = out.comparison("oracle_vs_routed")
    assert gap.diff == pytest.approx(2 / 6)
    numbers = out.to_numbers()
    assert numbers["hit@5_oracle"] == pytest.approx(5 / 6)
    assert numbers["share_union"] == pytest.approx(0.5)


def test_evaluate_routing_rejects_mismatched_shapes() -> None:
    with pytest.raises(ValueError, match="equal 1-d shapes"):
        router.evaluate_routing([1, 0], [1], [0, 0], [0.1, 0.2], dataset="x")


# --- fitting -----------------------------------------------------------------------------------


def test_fit_routing_drop_rule_never_fits_on_ties() -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 5))
    rank_q = rng.integers(1, 10, size=60)
    rank_u = np.where(X[:, 0] > 0, np.maximum(rank_q - 2, 1), rank_q + 1)
    rank_u[:10] = rank_q[:10]  # ten exact ties
    fitted = router.fit_routing(X, rank_q, rank_u, tie_rule="drop", n_splits=3)
    tied = rank_u == rank_q
    assert fitted.n_ties == int(tied.sum())
    assert np.all(fitted.labels[tied] == DROPPED)
    assert fitted.router.n_samples_fit_ == int((~tied).sum())
    # The dropped items are scored by the model fitted on the labelled items.
    np.testing.assert_allclose(fitted.probability[tied], fitted.router.predict_proba(X[tied])[:, 1])
    assert np.all((fitted.probability >= 0) & (fitted.probability <= 1))


def test_fit_routing_one_class_is_a_clear_error() -> None:
    X = np.random.default_rng(0).normal(size=(20, 5))
    ranks = np.arange(1, 21)
    with pytest.raises(ValueError, match="one class only"):
        router.fit_routing(X, ranks, ranks)  # union == q everywhere: every label is q


# --- training ----------------------------------------------------------------------------------


def test_train_router_learns_the_regimes(trained: router.RouterTrainResult) -> None:
    numbers = trained.to_numbers()
    assert numbers["n"] == 120
    assert numbers["n_parallel"] == 60  # comparison items are kept
    by_type = numbers["by_type"]
    # The toy world's compositional items are B-dominant: union helps there and the router
    # sends (nearly) all of them to union; the comparison (Q-dominant) items far less often.
    assert by_type["compositional"]["share_union"] > 0.9
    assert by_type["comparison"]["share_union"] < by_type["compositional"]["share_union"] - 0.3
    outcome = numbers["outcome"]
    assert outcome["hit@5_routed"] > outcome["hit@5_q"]
    # Ties are dropped by default: they carry no label and are counted.
    labels = numbers["labels"]
    assert labels["dropped"] == labels["ties"] > 0
    assert outcome["hit@5_oracle"] >= max(outcome["hit@5_routed"], outcome["hit@5_q"])
    assert labels["q"] + labels["union"] + labels["dropped"] == 120
    assert numbers["auc_out_of_fold"] > 0.5
    assert set(numbers["coefficients"]) == set(FEATURE_NAMES)


def test_train_router_is_deterministic(
    toy: list[Example], trained: router.RouterTrainResult
) -> None:
    again = router.train_router(
        trained.config, examples={"toyworld": toy}, encoder_factory=factory, store=STORE
    )
    assert again.to_numbers() == trained.to_numbers()


def test_saved_router_round_trips(trained: router.RouterTrainResult, tmp_path: Any) -> None:
    path = router.save_trained_router(trained, tmp_path / "r.json")
    loaded = load_router(path)
    np.testing.assert_array_equal(loaded.coef_, trained.router.coef_)
    meta = loaded.training_metadata_
    assert meta["dataset"] == "toyworld"
    assert meta["extra"]["ids_hash"] == trained.data.sample.ids_hash
    assert meta["label_rule"] == trained.config.label_rule
    X = trained.data.X
    np.testing.assert_array_equal(loaded.predict_proba(X), trained.router.predict_proba(X))


def test_router_config_validation() -> None:
    with pytest.raises(ValueError, match="tie_rule"):
        router.RouterConfig(tie_rule="coin")
    with pytest.raises(ValueError, match="n_splits"):
        router.RouterConfig(n_splits=1)
    with pytest.raises(ValueError, match="dataset"):
        router.RouterConfig(dataset="squad")
    cfg = router.RouterConfig.from_parameters(sample_size=None, alpha=None, output_dir="x")
    assert cfg.alpha == config.ALPHA and cfg.sample_size is None


# --- selector quality --------------------------------------------------------------------------


def test_selector_quality(trained: router.RouterTrainResult) -> None:
    quality = router.selector_quality(
        {"toyworld": trained.data}, encoder_factory=factory, store=STORE, resamples=RESAMPLES
    )
    row = quality.agreement.query("relation_source == 'all'").iloc[0]
    table = trained.data.table
    expected = float((table["b_rel_index"] == table["gold_relation_sentence"]).mean())
    assert row["selected"] == pytest.approx(expected)
    assert row["first_sentence"] == pytest.approx(
        float((table["gold_relation_sentence"] == 0).mean())
    )
    assert row["selected"] > row["chance"]
    c = quality.retrieval["toyworld"]
    assert c.mean_a == pytest.approx(float(trained.data.hit_union.mean()))
    assert "retrieval" in quality.to_numbers()["toyworld"]


# --- the packaged model and routing one question -----------------------------------------------


def test_default_router_is_packaged_and_loads() -> None:
    model = router.default_router()
    assert model.alpha == config.ALPHA
    assert model.training_metadata_["dataset"] == router.TRAIN_DATASET
    decision = router.route_text(
        "Who is the mother of the director of the film Kestrel Bay?",
        "Kestrel Bay is a 1931 film. It was directed by Odile Marchetti.",
        bridge_title="Kestrel Bay",
    )
    assert decision.action in ("q", "union")
    assert decision.b_rel_index == 1
    assert 0.0 <= decision.probability <= 1.0


@pytest.mark.parametrize(
    ("question", "bridge", "message"),
    [
        ("", "Some text.", "question is empty"),
        ("Who?", "   ", "bridge text is empty"),
        (3, "Some text.", "question must be a string"),
        ("Who?", ["Some text."], "bridge must be a string"),
    ],
)
def test_route_text_rejects_bad_input(question: Any, bridge: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        router.route_text(question, bridge)


def test_resolve_router_rejects_missing_file(tmp_path: Any) -> None:
    with pytest.raises(ValueError, match="does not exist"):
        router.resolve_router(tmp_path / "none.json")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "something-else"}))
    with pytest.raises(ValueError, match=r"bad\.json"):
        router.resolve_router(bad)


# --- transfer ----------------------------------------------------------------------------------


def test_transfer_applies_the_frozen_router(
    trained: router.RouterTrainResult, toy_other: list[Example]
) -> None:
    cfg = transfer.TransferConfig(datasets=("musique",), bootstrap_resamples=RESAMPLES)
    result = transfer.transfer_router(
        trained.router,
        cfg,
        examples={"musique": toy_other},
        encoder_factory=factory,
        store=STORE,
    )
    outcome = result.outcomes["musique"]
    data = result.data["musique"]
    expected = trained.router.predict_action(data.X) == "union"
    assert outcome.routed_union.tolist() == expected.tolist()
    assert result.alpha == trained.router.alpha
    numbers = result.to_numbers()
    c = outcome.comparison("routed_vs_q")
    assert numbers["musique"]["no_regret"] == transfer.no_regret(c.diff, c.p_value)
    table = transfer.headline_table(trained, result)
    assert table["dataset"].tolist() == ["toyworld", "musique"]
    assert table["setting"].tolist()[0].endswith("cross-fitted")


def test_no_regret_rule() -> None:
    assert transfer.no_regret(-0.02, 0.30)
    assert not transfer.no_regret(-0.02, 0.01)
    assert transfer.no_regret(0.02, 0.01)
    assert not transfer.no_regret(-0.02, 0.08, confidence=0.90)


def test_transfer_alpha_override_changes_union_weight(
    trained: router.RouterTrainResult, toy_other: list[Example]
) -> None:
    cfg = transfer.TransferConfig(datasets=("musique",), alpha=0.0, bootstrap_resamples=RESAMPLES)
    result = transfer.transfer_router(
        trained.router, cfg, examples={"musique": toy_other}, encoder_factory=factory, store=STORE
    )
    outcome = result.outcomes["musique"]
    assert result.alpha == 0.0
    assert outcome.hits["union"].tolist() == outcome.hits["q"].tolist()


# --- ablations ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ablation(toy: list[Example], toy_other: list[Example]) -> ablations.AblationResult:
    cfg = ablations.AblationConfig(
        train_dataset="toyworld",
        transfer_datasets=("musique",),
        encoders=("hashing",),
        paper_encoders=("bge-large",),
        alphas=(0.0, config.ALPHA, 1.0),
        bootstrap_resamples=RESAMPLES,
    )
    return ablations.run_ablations(
        cfg,
        examples={"toyworld": toy, "musique": toy_other},
        encoder_factory=factory,
        store=STORE,
    )


def test_ablation_alpha_sweep(
    ablation: ablations.AblationResult, trained: router.RouterTrainResult
) -> None:
    sweep = ablation.alpha_sweep.set_index(["dataset", "alpha"])
    zero = sweep.loc[("toyworld", 0.0)]
    assert bool(zero["degenerate"]) and zero["hit_union"] == zero["hit_q"]
    assert zero["hit_routed"] == zero["hit_q"]
    main = sweep.loc[("toyworld", config.ALPHA)]
    # The sweep at the paper's alpha is the training run itself.
    assert main["hit_routed"] == pytest.approx(trained.to_numbers()["outcome"]["hit@5_routed"])
    assert main["delta"] == pytest.approx(trained.outcome.comparison("routed_vs_q").diff)


def test_ablation_tables(ablation: ablations.AblationResult) -> None:
    lofo = ablation.leave_one_out
    assert sorted(set(lofo["without"])) == sorted(["none", *FEATURE_NAMES])
    assert len(lofo) == 2 * (1 + len(FEATURE_NAMES))
    rules = ablation.label_rules
    assert len(rules) == 2 * 3 * 2  # datasets x tie rules x (rank, hit@k)
    main = rules[rules["label_rule"] == "ties_drop_by_rank"].set_index("dataset")
    full = lofo[lofo["without"] == "none"].set_index("dataset")
    assert main["delta"].to_dict() == full["delta"].to_dict()  # the default rule is the main run
    assert set(ablation.pools["pool"]) == set(config.POOL_MODES)
    assert set(ablation.soft["dataset"]) == {"toyworld", "musique"}
    soft = ablation.soft.set_index("dataset").loc["toyworld"]
    assert 0.0 <= soft["hit_soft"] <= 1.0
    assert "bge-large" in ablation.unavailable_encoders
    assert set(ablation.encoders["encoder"]) == {"hashing"}
    gap = ablation.oracle_gap.set_index("dataset")
    assert np.all(gap["oracle_gap"] >= 0)
    numbers = ablation.to_numbers()
    assert "0p25" in numbers["alpha_sweep"]["toyworld"]
    assert numbers["unavailable_encoders"] == {"bge-large": "unavailable"}
    from regime_core.runner.records import write_record

    write_record(  # every number is a finite scalar with a valid key
        __import__("pathlib").Path(__import__("tempfile").mkdtemp()),
        name="t",
        config=ablation.config,
        numbers=numbers,
    )


def test_ablation_config_validation() -> None:
    with pytest.raises(ValueError, match="transfer dataset"):
        ablations.AblationConfig(transfer_datasets=(router.TRAIN_DATASET,))
    with pytest.raises(ValueError, match="alphas"):
        ablations.AblationConfig(alphas=(-1.0,))
    assert config.ALPHA in ablations.AblationConfig().alphas


def test_unavailable_encoder_reason() -> None:
    assert ablations.encoder_unavailable_reason("minilm") is None
    assert ablations.encoder_unavailable_reason("tfidf") is None
    reason = ablations.encoder_unavailable_reason("e5-mistral")
    assert reason is None or "cache" in reason


def test_router_is_a_regime_router(trained: router.RouterTrainResult) -> None:
    assert isinstance(trained.router, RegimeRouter)
    assert trained.router.alpha == config.ALPHA


# --- always-union and the bridge source ----------------------------------------------------------


def test_every_outcome_reports_routed_against_always_union(
    trained: router.RouterTrainResult,
) -> None:
    numbers = trained.outcome.to_numbers()
    k = trained.outcome.k
    versus = numbers["routed_vs_union"]
    assert versus["diff"] == pytest.approx(numbers[f"hit@{k}_routed"] - numbers[f"hit@{k}_union"])
    hits = trained.outcome.hits
    assert versus["n_a_better"] == int(np.sum(hits["routed"] & ~hits["union"]))
    assert versus["n_b_better"] == int(np.sum(hits["union"] & ~hits["routed"]))
    assert versus["ci_lo"] <= versus["diff"] <= versus["ci_hi"]


def test_with_retrieved_bridges_counts_every_hop1_outcome(toy: list[Example]) -> None:
    a, b, c = toy[:3]
    distractor = next(p.pid for p in b.pool if p.pid not in (b.bridge_pid, b.target_pid))
    kept, outcomes, counts = router.with_retrieved_bridges(
        [a, b, c], [a.bridge_pid, distractor, c.target_pid]
    )
    assert counts == {"correct": 1, "distractor": 1, "target": 1}
    assert outcomes == ["correct", "distractor"]
    assert kept[0] is a
    assert kept[1].bridge_pid == distractor and kept[1].target_pid == b.target_pid
    with pytest.raises(ValueError, match="hop-1 passages"):
        router.with_retrieved_bridges([a], [])


def test_hop1_top_pids_is_rank_one_of_the_question_over_the_whole_pool(toy: list[Example]) -> None:
    examples = toy[:30]
    top = router.hop1_top_pids(examples, encoder=ENCODER, store=STORE)
    # the retrieval module's q arm over the whole pool (bridge not excluded), its rank 1
    ranking = retrieve_arms(
        examples, ("q",), encoder=ENCODER, store=STORE, exclude_bridge=False, k=1
    )["q"]
    assert top == [pids[0] for pids in ranking.top_pids]
    assert len(set(top) & {ex.bridge_pid for ex in examples}) > 0


def test_retrieved_bridge_source_routes_the_pipeline_bridge(toy: list[Example]) -> None:
    sample = sample_examples(toy[:60], None, seed=0, dataset="toyworld", split="dev")
    gold = router.build_routing_data(sample, encoder=ENCODER, store=STORE)
    retrieved = router.build_routing_data(
        sample, encoder=ENCODER, store=STORE, bridge_source="retrieved"
    )
    counts = retrieved.hop1_counts
    assert counts is not None and sum(counts.values()) == gold.n
    assert retrieved.n == counts["correct"] + counts["distractor"]
    assert set(retrieved.table["hop1"]) <= {"correct", "distractor"}
    assert set(gold.table["hop1"]) == {"gold"}
    # where hop 1 found the gold bridge, nothing differs from the gold setting
    same = gold.table.set_index("qid").loc[
        retrieved.table.loc[retrieved.table["hop1"] == "correct", "qid"]
    ]
    mine = retrieved.table[retrieved.table["hop1"] == "correct"].set_index("qid")
    for column in ("b_rel_index", "rank_q", "rank_union", *FEATURE_NAMES):
        assert mine[column].tolist() == same[column].tolist(), column
    with pytest.raises(ValueError, match="bridge_source"):
        router.build_routing_data(sample, encoder=ENCODER, store=STORE, bridge_source="best")


def test_training_with_retrieved_bridges_reports_the_hop1_correct_subset(
    toy: list[Example],
) -> None:
    cfg = router.RouterConfig(
        dataset="toyworld", bootstrap_resamples=RESAMPLES, bridge_source="retrieved"
    )
    result = router.train_router(
        cfg, examples={"toyworld": toy}, encoder_factory=factory, store=STORE
    )
    numbers = result.to_numbers()
    assert numbers["bridge_source"] == "retrieved"
    assert sum(numbers["hop1"].values()) == result.data.sample.n
    subset = numbers["hop1_correct_outcome"]
    assert subset["n"] == numbers["hop1"]["correct"]
    with pytest.raises(ValueError, match="bridge_source"):
        router.RouterConfig(bridge_source="oracle")
