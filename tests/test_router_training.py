"""Routing data, labels and cross-fitting, and the selector measured, on a synthetic world
with a hashing encoder: no download, no dataset text."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import HashingEncoder, RecordingStore, settings

from regime_core import config
from regime_core.data.regimes import gold_b_rel
from regime_core.data.toyworld import ToyWorldConfig, generate
from regime_core.experiments.sampling import Sample, sample_examples
from regime_core.retrieval import retrieve_arms
from regime_core.retrieval.geometry import build_geometry
from regime_core.router import EXCLUDED, FEATURE_NAMES, select_b_rel
from regime_core.router.evaluation import Bootstrap
from regime_core.router.training import (
    agreement_table,
    build_routing_data,
    fit_routing,
    gold_b_rel_retrieval,
)
from regime_core.schema import Example

ENCODER = HashingEncoder(64)
STORE = RecordingStore()


@pytest.fixture(scope="module")
def toy() -> list[Example]:
    return generate(ToyWorldConfig(n_questions=60, seed=0))


def _sample(examples: list[Example]) -> Sample:
    return sample_examples(examples, None, seed=0, dataset="toyworld", split="dev")


# --- routing data ------------------------------------------------------------------------------


@pytest.mark.parametrize("pool", config.POOL_MODES)
def test_routing_ranks_equal_the_retrieval_module(toy: list[Example], pool: str) -> None:
    sample = _sample(toy[:40])
    data = build_routing_data(
        sample, settings(pool=pool), encoder=ENCODER, store=STORE, bridge_source="gold"
    )
    rankings = retrieve_arms(
        list(sample.examples),
        ("q", "union"),
        settings(pool=pool),
        encoder=ENCODER,
        store=STORE,
        b_rel=data.table["b_rel_index"].tolist(),
        depth=None,
    )
    assert data.table["rank_q"].tolist() == rankings["q"].target_ranks.tolist()
    assert data.table["rank_union"].tolist() == rankings["union"].target_ranks.tolist()
    assert data.settings == settings(pool=pool)


def test_routing_data_uses_the_selector_not_gold(toy: list[Example]) -> None:
    sample = _sample(toy[:30])
    data = build_routing_data(
        sample, settings(), encoder=ENCODER, store=STORE, bridge_source="gold"
    )
    for ex, index in zip(sample.examples, data.table["b_rel_index"], strict=True):
        chosen = select_b_rel(ex.question, ex.bridge.sentences, bridge_title=ex.bridge.title)
        assert chosen.index == index
    assert list(data.table.columns[-7:-2]) == list(FEATURE_NAMES)


def test_routing_data_carries_how_it_was_built(toy: list[Example]) -> None:
    sample = _sample(toy[:30])
    kept = settings(exclude_bridge=False)
    data = build_routing_data(sample, kept, encoder=ENCODER, store=STORE, bridge_source="gold")
    assert data.settings.exclude_bridge is False
    # the selector's measurement ranks the gold B_rel under the data's own setting (the bridge
    # kept among the candidates), without being told again
    comparison, without = gold_b_rel_retrieval(
        data, encoder=ENCODER, store=STORE, bootstrap=Bootstrap(resamples=50)
    )
    golds = [gold_b_rel(ex) for ex in sample.examples]
    keep = [i for i, g in enumerate(golds) if g.sentence is not None]
    geometry = build_geometry(
        [sample.examples[i] for i in keep],
        [str(golds[i].sentence) for i in keep],
        kept,
        encoder=ENCODER,
        store=STORE,
    )
    assert comparison is not None and without == sample.n - len(keep)
    hit_gold = geometry.target_ranks(kept.alpha) <= kept.k
    assert comparison.mean_b == pytest.approx(float(hit_gold.mean()))


def test_retrieved_bridge_source_routes_the_pipeline_bridge(toy: list[Example]) -> None:
    sample = _sample(toy[:60])
    default = settings()
    gold = build_routing_data(sample, default, encoder=ENCODER, store=STORE, bridge_source="gold")
    retrieved = build_routing_data(
        sample, default, encoder=ENCODER, store=STORE, bridge_source="retrieved"
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


# --- fitting -----------------------------------------------------------------------------------


def test_fit_routing_drop_rule_never_fits_on_ties() -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 5))
    rank_q = rng.integers(1, 10, size=60)
    rank_u = np.where(X[:, 0] > 0, np.maximum(rank_q - 2, 1), rank_q + 1)
    rank_u[:10] = rank_q[:10]  # ten exact ties
    fitted = fit_routing(
        X, rank_q, rank_u, alpha=config.ALPHA, tie_rule="exclude", label_k=None, n_splits=3, seed=0
    )
    tied = rank_u == rank_q
    assert fitted.n_ties == int(tied.sum())
    assert np.all(fitted.labels[tied] == EXCLUDED)
    assert fitted.router.n_samples_fit_ == int((~tied).sum())
    # The dropped items are scored by the model fitted on the labelled items.
    np.testing.assert_allclose(fitted.probability[tied], fitted.router.predict_proba(X[tied])[:, 1])
    assert np.all((fitted.probability >= 0) & (fitted.probability <= 1))


def test_fit_routing_one_class_is_a_clear_error() -> None:
    X = np.random.default_rng(0).normal(size=(20, 5))
    ranks = np.arange(1, 21)
    with pytest.raises(ValueError, match="one class only"):
        # union == q everywhere: every label is q
        fit_routing(X, ranks, ranks, alpha=0.25, tie_rule="q", label_k=None, n_splits=5, seed=0)


# --- selector quality --------------------------------------------------------------------------


def test_agreement_table_counts_the_gold_sentence_items(toy: list[Example]) -> None:
    data = build_routing_data(
        _sample(toy[:40]), settings(), encoder=ENCODER, store=STORE, bridge_source="gold"
    )
    table = agreement_table([data.table])
    row = table.query("relation_source == 'all'").iloc[0]
    gold = data.table[data.table["gold_relation_sentence"] >= 0]
    assert row["n"] == len(gold)
    expected = float((gold["b_rel_index"] == gold["gold_relation_sentence"]).mean())
    assert row["selected"] == pytest.approx(expected)
