"""The selectors measured: the agreement and paired-comparison kernels on hand-made arrays, and
the study on the toy world with a hashing encoder, against the router's own selector measures
(no download, no dataset text)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from helpers import HashingEncoder, RecordingStore

from regime_core.data.toyworld import ToyWorldConfig, generate
from regime_core.experiments.common import Sample, sample_examples
from regime_core.retrieval.geometry import build_geometry
from regime_core.router.evaluation import Bootstrap, paired_hits
from regime_core.router.learned_selector import SELECTOR_VARIANTS
from regime_core.router.selector_evaluation import (
    MEASURED,
    SELECTORS,
    agreement_comparisons,
    measure_selectors,
    selection_geometry,
    selector_agreement,
    selector_data,
    union_comparisons,
    union_ranks,
)
from regime_core.router.training import agreement_table, build_routing_data, gold_b_rel_retrieval
from regime_core.schema import Example

ENCODER = HashingEncoder(64)
BOOT = Bootstrap(resamples=200)


def _sample(examples: list[Example]) -> Sample:
    return sample_examples(examples, None, seed=0, dataset="toyworld", split="dev")


@pytest.fixture(scope="module")
def worlds() -> dict[str, Sample]:
    train = generate(ToyWorldConfig(n_questions=100, seed=0))
    other = generate(ToyWorldConfig(n_questions=50, seed=1, relation_sentence_position="last"))
    return {"toy_a": _sample(train), "toy_b": _sample(other)}


# --- kernels -----------------------------------------------------------------------------------


def test_agreement_per_selector_and_source_with_chance() -> None:
    table = selector_agreement(
        "d",
        {"rule": [0, 1, 2, 0, 1], "first": [0, 0, 0, 0, 0]},
        gold=[0, 1, 0, -1, 1],
        sizes=[2, 4, 3, 5, 2],
        sources=["x", "x", "y", "x", "y"],
    )
    rows = {(r.selector, r.relation_source): (r.n, r.agreement, r.chance)
            for r in table.itertuples()}  # fmt: skip
    # item 3 has no gold sentence and is left out everywhere
    assert rows[("rule", "all")] == (4, 0.75, pytest.approx((1 / 2 + 1 / 4 + 1 / 3 + 1 / 2) / 4))
    assert rows[("rule", "x")] == (2, 1.0, pytest.approx((1 / 2 + 1 / 4) / 2))
    assert rows[("rule", "y")] == (2, 0.5, pytest.approx((1 / 3 + 1 / 2) / 2))
    assert rows[("first", "all")][:2] == (4, 0.5)
    assert rows[("first", "y")][:2] == (2, 0.5)
    assert table["relation_source"].tolist()[:3] == ["all", "x", "y"]
    with pytest.raises(ValueError, match="chose for 2 items, not 5"):
        selector_agreement("d", {"rule": [0, 1]}, [0] * 5, [2] * 5, ["x"] * 5)


def test_paired_comparisons_are_mcnemar_against_gold_and_against_the_rule() -> None:
    gold = np.array([1, 1, 0, 1, 0, 1, 1, 1], dtype=bool)
    hits = {"rule": gold.copy(), "first": np.array([0, 1, 0, 0, 0, 1, 0, 1], dtype=bool)}
    out = union_comparisons(hits, gold, bootstrap=BOOT)
    assert (out["rule"].diff, out["rule"].n_discordant, out["rule"].p_value) == (0.0, 0, 1.0)
    first = out["first"]
    assert (first.label_a, first.label_b) == ("union_first", "union_gold")
    assert first.test == "mcnemar_exact"
    assert (first.n_a_better, first.n_b_better, first.diff) == (0, 3, -3 / 8)
    assert first == paired_hits(hits["first"], gold, ("union_first", "union_gold"), bootstrap=BOOT)
    vs_rule = agreement_comparisons({"rule": gold, "first": hits["first"]}, "rule", bootstrap=BOOT)
    assert list(vs_rule) == ["first"] and vs_rule["first"].diff == -3 / 8
    with pytest.raises(ValueError, match="no selector 'gold'"):
        agreement_comparisons({"rule": gold}, "gold")
    with pytest.raises(ValueError, match="has 2 hits"):
        union_comparisons({"rule": [True, False]}, gold)


# --- the study ---------------------------------------------------------------------------------


def test_union_ranks_equal_a_geometry_built_with_those_sentences(worlds: dict[str, Sample]) -> None:
    sample = worlds["toy_a"]
    store = RecordingStore()
    data = selector_data("toy_a", sample.examples, encoder=ENCODER, store=store)
    geometry = selection_geometry(data, encoder=ENCODER, store=store)
    chosen = np.array([len(ex.bridge.sentences) - 1 for ex in sample.examples])
    direct = build_geometry(
        list(sample.examples),
        [ex.bridge.sentences[c] for ex, c in zip(sample.examples, chosen, strict=True)],
        encoder=ENCODER,
        store=store,
    )
    assert union_ranks(geometry, data, chosen, 0.25).tolist() == direct.target_ranks(0.25).tolist()
    with pytest.raises(ValueError, match="within its bridge"):
        union_ranks(geometry, data, chosen + 1, 0.25)


def test_the_study_agrees_with_the_routers_selector_measures(worlds: dict[str, Sample]) -> None:
    store = RecordingStore()
    encoders = dict.fromkeys(worlds, ENCODER)
    study = measure_selectors(
        worlds, encoders=encoders, store=store, train_dataset="toy_a", bootstrap=BOOT
    )
    assert set(SELECTORS) <= set(MEASURED) and set(SELECTOR_VARIANTS) <= set(MEASURED)
    for dataset, sample in worlds.items():
        routing = build_routing_data(sample, encoder=ENCODER, store=store)
        chosen = study.datasets[dataset]
        assert chosen.choices["rule"].tolist() == routing.table["b_rel_index"].tolist()
        assert chosen.rank_union["rule"].tolist() == routing.table["rank_union"].tolist()
        assert chosen.rank_q.tolist() == routing.table["rank_q"].tolist()
        theirs = agreement_table([routing.table]).set_index("relation_source").loc["all"]
        ours = study.agreement[study.agreement["dataset"] == dataset].set_index(
            ["selector", "relation_source"]
        )
        assert ours.loc[("rule", "all"), "agreement"] == theirs["selected"]
        assert ours.loc[("first", "all"), "agreement"] == theirs["first_sentence"]
        assert ours.loc[("gold", "all"), "agreement"] == 1.0
        comparison, without = gold_b_rel_retrieval(
            routing, encoder=ENCODER, store=store, bootstrap=BOOT
        )
        assert comparison is not None
        rule = study.union[dataset]["rule"]
        assert (rule.n, rule.mean_a, rule.mean_b) == (
            comparison.n,
            comparison.mean_a,
            comparison.mean_b,
        )
        assert study.n_without_gold[dataset]["b_rel"] == without
        first_vs_rule = study.union_vs_rule[dataset]["first"]
        assert (first_vs_rule.label_b, first_vs_rule.n) == ("union_rule", rule.n)
        assert first_vs_rule.diff == pytest.approx(
            study.union[dataset]["first"].mean_a - rule.mean_a
        )
        assert "rule" not in study.union_vs_rule[dataset]
        assert chosen.cross_fitted == (dataset == "toy_a")
    numbers = study.to_numbers()
    assert set(numbers["coefficients"]) == set(SELECTOR_VARIANTS)
    assert set(numbers["toy_b"]["union_vs_gold"]) == set(MEASURED) - {"gold"}
    assert numbers["n_trained"] == study.n_trained > 0
    # the learned selector finds the toy world's relation sentences better than chance
    learned = study.agreement.set_index(["dataset", "selector", "relation_source"])
    for dataset in worlds:
        row = learned.loc[(dataset, "learned", "all")]
        assert row["agreement"] > row["chance"]


def test_the_study_is_deterministic(worlds: dict[str, Sample]) -> None:
    def run() -> dict[str, list[int]]:
        study = measure_selectors(
            worlds,
            encoders=dict.fromkeys(worlds, ENCODER),
            store=RecordingStore(),
            train_dataset="toy_a",
            bootstrap=BOOT,
        )
        return {
            f"{d}/{name}": c.tolist()
            for d, s in study.datasets.items()
            for name, c in s.choices.items()
        }

    assert run() == run()


def test_a_missing_training_dataset_is_named(worlds: dict[str, Sample]) -> None:
    with pytest.raises(ValueError, match="training dataset 'nowhere'"):
        measure_selectors(
            worlds, encoders=dict.fromkeys(worlds, ENCODER), store=RecordingStore(),
            train_dataset="nowhere",
        )  # fmt: skip
    empty = dataclasses.replace(worlds["toy_a"], examples=())
    with pytest.raises(ValueError, match="toy_a sample is empty"):
        selector_data("toy_a", empty.examples, encoder=ENCODER, store=RecordingStore())
