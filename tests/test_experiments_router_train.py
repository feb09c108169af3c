"""The router experiments on a synthetic world (toyworld) with a hashing encoder: no download,
no dataset text, a few seconds."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest
from helpers import hashing_context, refused

from regime_core import config
from regime_core.data.toyworld import ToyWorldConfig, generate
from regime_core.experiments import ablations
from regime_core.experiments import router_train as router
from regime_core.experiments import zero_shot_transfer as transfer
from regime_core.experiments.common import RunConfig
from regime_core.router import FEATURE_NAMES, RegimeRouter, load_router
from regime_core.router.evaluation import COMPARISONS
from regime_core.runner.records import Record
from regime_core.schema import Example

RESAMPLES = 300


pytestmark = pytest.mark.usefixtures("one_blas_thread")


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
    return router.train_router(cfg, hashing_context({"toyworld": toy}))


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
    # Ties are excluded by default: they carry no label and are counted.
    labels = numbers["labels"]
    assert labels["excluded"] == labels["ties"] > 0
    assert outcome["hit@5_oracle"] >= max(outcome["hit@5_routed"], outcome["hit@5_q"])
    assert labels["q"] + labels["union"] + labels["excluded"] == 120
    assert numbers["auc_out_of_fold"] > 0.5
    assert set(numbers["coefficients"]) == set(FEATURE_NAMES)


def test_train_router_is_deterministic(
    toy: list[Example], trained: router.RouterTrainResult
) -> None:
    again = router.train_router(trained.config, hashing_context({"toyworld": toy}))
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
    # each field's kind is refused as every config's is (tests/test_inputs_configs.py); a dataset
    # name is resolved against the datasets there are
    with refused(ValueError, names=["RouterConfig", "dataset", "'squad'"]):
        router.RouterConfig(dataset="squad")
    with pytest.raises(TypeError, match="datasetz"):
        router.RouterConfig(datasetz="musique")  # type: ignore[call-arg]
    cfg = router.RouterConfig.from_parameters(sample_size=None, alpha=None, output_dir="x")
    assert cfg.alpha == config.ALPHA and cfg.sample_size is None


def test_pipeline_configs_are_flat_and_share_the_run_config() -> None:
    """One config style: each pipeline's config is one flat frozen dataclass whose fields are
    its notebook's parameters; the fields every run shares come from RunConfig."""
    shared = {f.name for f in dataclasses.fields(RunConfig)}
    for cls in (router.RouterConfig, ablations.AblationConfig, transfer.TransferConfig):
        assert issubclass(cls, RunConfig) and dataclasses.is_dataclass(cls)
        fields = {f.name for f in dataclasses.fields(cls)}
        assert shared <= fields and "experiment" not in fields
        assert set(cls().to_dict()) == fields  # the record's config: the flat fields
    flat = router.RouterConfig(dataset="musique", encoder="tfidf", alpha=0.5, tie_rule="q")
    assert (flat.dataset, flat.encoder, flat.alpha, flat.k) == ("musique", "tfidf", 0.5, 5)
    assert flat.retrieval.alpha == 0.5 and flat.bootstrap.resamples == flat.bootstrap_resamples
    linking = router.RouterConfig(dataset="musique", predicate_names="title+linking")
    assert linking.regime_rules.predicate_names == "title+linking"
    assert linking.config_hash() != router.RouterConfig(dataset="musique").config_hash()


def test_transfer_and_ablation_configs() -> None:
    cfg = ablations.AblationConfig(train_dataset="toyworld", transfer_datasets=["musique"])
    assert cfg.datasets == ("toyworld", "musique") and cfg.transfer_datasets == ("musique",)
    with pytest.raises(ValueError, match="twice"):
        ablations.AblationConfig(transfer_datasets=(router.TRAIN_DATASET,))
    t = transfer.TransferConfig(datasets=["musique"], encoder="tfidf")
    assert (t.datasets, t.encoder, t.alpha) == (("musique",), "tfidf", None)
    assert transfer.TransferConfig.from_parameters(alpha=None).alpha is None


# --- selector quality --------------------------------------------------------------------------


def test_selector_quality(trained: router.RouterTrainResult) -> None:
    quality = router.selector_quality(
        {"toyworld": trained.data}, trained.config, hashing_context({"toyworld": []})
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


# --- transfer ----------------------------------------------------------------------------------


def test_transfer_applies_the_frozen_router(
    trained: router.RouterTrainResult, toy_other: list[Example]
) -> None:
    cfg = transfer.TransferConfig(datasets=("musique",), bootstrap_resamples=RESAMPLES)
    result = transfer.transfer_router(
        cfg, hashing_context({"musique": toy_other}), model=trained.router
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
        cfg, hashing_context({"musique": toy_other}), model=trained.router
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
        encoders=("test/hashing",),
        paper_encoders=("bge-large",),
        alphas=(0.0, config.ALPHA, 1.0),
        bootstrap_resamples=RESAMPLES,
    )
    return ablations.run_ablations(cfg, hashing_context({"toyworld": toy, "musique": toy_other}))


def test_ablation_alpha_sweep(
    ablation: ablations.AblationResult, trained: router.RouterTrainResult
) -> None:
    sweep = ablation.alpha_sweep.set_index(["encoder", "dataset", "alpha"])
    zero = sweep.loc[("test/hashing", "toyworld", 0.0)]
    assert bool(zero["degenerate"]) and zero["hit_union"] == zero["hit_q"]
    assert zero["hit_routed"] == zero["hit_q"]
    main = sweep.loc[("test/hashing", "toyworld", config.ALPHA)]
    # The sweep at the paper's alpha is the training run itself, every comparison included.
    assert main["hit_routed"] == pytest.approx(trained.to_numbers()["outcome"]["hit@5_routed"])
    for name in COMPARISONS:
        c = trained.outcome.comparison(name)
        for field in ("diff", "ci_lo", "ci_hi", "p_value", "n", "n_a_better", "n_b_better"):
            assert main[f"{name}_{field}"] == pytest.approx(getattr(c, field)), (name, field)


def test_ablation_tables(ablation: ablations.AblationResult) -> None:
    lofo = ablation.leave_one_out
    assert sorted(set(lofo["without"])) == sorted(["none", *FEATURE_NAMES])
    assert len(lofo) == 2 * (1 + len(FEATURE_NAMES))
    rules = ablation.label_rules
    assert len(rules) == 2 * 3 * 2  # datasets x tie rules x (rank, hit@k)
    main = rules[rules["label_rule"] == "ties_exclude_by_rank"].set_index("dataset")
    full = lofo[lofo["without"] == "none"].set_index("dataset")
    column = "routed_vs_q_diff"
    assert main[column].to_dict() == full[column].to_dict()  # the default rule is the main run
    assert set(ablation.pools["pool"]) == set(config.POOL_MODES)
    assert set(ablation.soft["dataset"]) == {"toyworld", "musique"}
    soft = ablation.soft.set_index("dataset").loc["toyworld"]
    assert 0.0 <= soft["hit_soft"] <= 1.0
    assert "bge-large" in ablation.unavailable_encoders
    assert set(ablation.encoders["encoder"]) == {"test/hashing"}
    gap = ablation.oracle_gap.set_index("dataset")
    assert np.all(gap["oracle_vs_routed_diff"] >= 0)
    numbers = ablation.to_numbers()
    assert "0p25" in numbers["alpha_sweep"]["test/hashing"]["toyworld"]
    for table in ("alpha_sweep", "leave_one_out", "label_rules", "oracle_gap", "pools", "encoders"):
        rows = _leaves(numbers[table])
        assert rows, table
        for row in rows:  # every setting row: the five comparisons, nothing flat besides
            assert set(row["comparisons"]) == set(COMPARISONS), table
            for c in row["comparisons"].values():
                assert set(c) == {"diff", "ci_lo", "ci_hi", "p_value", "n", "n_a_better",
                                  "n_b_better"}  # fmt: skip
                assert c["n"] == row["n"]
                assert c["ci_lo"] - 1e-12 <= c["diff"] <= c["ci_hi"] + 1e-12  # float rounding
            assert not {"delta", "ci_lo", "p_value", "delta_union", "oracle_gap"} & set(row)
    assert numbers["unavailable_encoders"] == {"bge-large": "unavailable"}
    from regime_core.runner.records import write_record

    write_record(  # every number is a finite scalar with a valid key
        __import__("pathlib").Path(__import__("tempfile").mkdtemp()),
        name="t",
        config=ablation.config,
        numbers=numbers,
    )


def _leaves(node: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows of a nested ablation table: the nodes holding ``comparisons``."""
    if "comparisons" in node:
        return [node]
    return [row for child in node.values() if isinstance(child, dict) for row in _leaves(child)]


def test_ablation_config_validation() -> None:
    with pytest.raises(ValueError, match="twice"):
        ablations.AblationConfig(transfer_datasets=(router.TRAIN_DATASET,))
    with pytest.raises(ValueError, match="must hold alpha"):
        ablations.AblationConfig(alphas=(0.0, 0.5))
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


def test_training_with_retrieved_bridges_reports_the_hop1_correct_subset(
    toy: list[Example],
) -> None:
    cfg = router.RouterConfig(
        dataset="toyworld", bootstrap_resamples=RESAMPLES, bridge_source="retrieved"
    )
    result = router.train_router(cfg, hashing_context({"toyworld": toy}))
    numbers = result.to_numbers()
    assert numbers["bridge_source"] == "retrieved"
    assert sum(numbers["hop1"].values()) == result.data.sample.n
    subset = numbers["hop1_correct_outcome"]
    assert subset["n"] == numbers["hop1"]["correct"]


# --- the selector knob -------------------------------------------------------------------------


def test_the_knob_trains_the_router_on_its_selectors_b_rel(
    toy: list[Example], toy_other: list[Example], tmp_path: Any
) -> None:
    context = hashing_context({"toyworld": toy, "musique": toy_other})
    cfg = router.RouterConfig(dataset="toyworld", bootstrap_resamples=RESAMPLES, selector="first")
    first = router.train_router(cfg, context)
    assert set(first.data.table["b_rel_index"]) == {0} and first.data.selector == "first"
    path = router.save_trained_router(first, tmp_path / "first.json")
    loaded = load_router(path)
    assert transfer.router_selector(loaded) == "first"
    # the transfer reads B_rel with the selector the router file names
    result = transfer.transfer_router(
        transfer.TransferConfig(datasets=("musique",), bootstrap_resamples=RESAMPLES),
        context,
        model=path,
    )
    assert set(result.data["musique"].table["b_rel_index"]) == {0}
    gold = router.train_router(dataclasses.replace(cfg, selector="gold"), context)
    table = gold.data.table
    assert table["b_rel_index"].tolist() == table["gold_relation_sentence"].tolist()
    learned = router.train_router(dataclasses.replace(cfg, selector="learned"), context)
    assert learned.data.folds is not None
    path = router.save_trained_router(learned, tmp_path / "learned.json")
    with pytest.raises(ValueError, match="trained with selector 'learned'"):
        transfer.router_selector(load_router(path))


def test_a_router_file_without_a_selector_was_trained_with_the_rule(
    trained: router.RouterTrainResult,
) -> None:
    assert transfer.router_selector(trained.router) == "rule"  # fitted here, no file metadata
    from regime_core.router.model import resolve_router

    assert transfer.router_selector(resolve_router(None)) == "rule"  # the packaged model


def test_the_transfer_record_repeats_the_training_runs_selection() -> None:
    selection = {
        "k": 5,
        "selector": "rule",
        "coefficients": {"learned": {"x": 1.0}},
        "2wikimultihopqa": {"routed": {}},
        "musique": {"routed": {"rule": {}}},
    }
    record = Record({"name": "router_train", "numbers": {"selection": selection}})
    copied = transfer.selection_numbers(record, ["musique"])
    assert copied == {"k": 5, "selector": "rule", "coefficients": {"learned": {"x": 1.0}},
                      "musique": {"routed": {"rule": {}}}}  # fmt: skip
    assert transfer.selection_numbers(Record({"numbers": {}}), ["musique"]) == {}
    # a dataset the training run did not measure (one's own) is listed, with why, not dropped
    partly = transfer.selection_numbers(record, ["musique", "mine"])
    assert partly["musique"] == {"routed": {"rule": {}}} and "mine" not in partly
    assert partly["not_measured"] == {
        "mine": "the router-training run measured selection on 2wikimultihopqa, musique only; "
        "run it with mine among its selector_datasets"
    }
