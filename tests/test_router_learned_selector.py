"""The learned B_rel selector: each feature on hand-made bridges, the estimator's conventions,
cross-fitting that never scores an item with a model trained on it, and determinism.
Hand-made bridges and the toy world only; no dataset text."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pytest
from scipy import sparse
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import NotFittedError

from regime_core import config
from regime_core.data.toyworld import ToyWorldConfig, generate
from regime_core.router import cross_fit_folds, outcome_labels
from regime_core.router.labels import EXCLUDED
from regime_core.router.learned_selector import (
    FEATURE_DOCS,
    FEATURE_NAMES,
    SELECTOR_VARIANTS,
    LearnedSelector,
    SentenceRows,
    argmax_per_bridge,
    cross_fit_select,
    fit_selector,
    gold_rows,
    row_cosines,
    selector_folds,
    sentence_features,
    trainable,
)

KESTREL_Q = "Who is the mother of the director of the film Kestrel Bay?"
KESTREL = (
    "Kestrel Bay is a 1931 film.",
    "It was directed by Odile Marchetti of the Lyon School.",
    "The film premiered in Oslo.",
)
QUILL_Q = "Where was the founder of Quillmark born?"
QUILL = ("Quillmark is a firm in Oslo.", "Quillmark was founded by Ida Brenn and Tomas Ruiz.")


def _features(
    question: str, bridge: tuple[str, ...], sentence_vectors: Any, title: str | None
) -> list[dict[str, float]]:
    rows = sentence_features(
        [question], [bridge], np.array([[1.0, 0.0]]), sentence_vectors, bridge_titles=[title]
    )
    return [dict(zip(FEATURE_NAMES, row.tolist(), strict=True)) for row in rows.X]


# --- features ----------------------------------------------------------------------------------


def test_every_feature_is_documented() -> None:
    assert tuple(FEATURE_DOCS) == FEATURE_NAMES
    for names in SELECTOR_VARIANTS.values():
        assert set(names) <= set(FEATURE_NAMES)


def test_features_of_a_titled_bridge() -> None:
    vectors = np.array([[1.0, 0.0], [0.6, 0.8], [0.0, 2.0]])  # cosines 1, 0.6, 0
    f = _features(KESTREL_Q, KESTREL, vectors, "Kestrel Bay (film)")
    exact = [{k: v for k, v in row.items() if k not in ("cosine", "cosine_gap", "inverse_position")}
             for row in f]  # fmt: skip
    # question relation stems: {mothe, direc, film}; subject: {kestrel, bay}
    assert exact == [
        {"index": 0, "from_end": 2, "is_first": 1, "overlap": 1, "has_new_entity": 0,
         "new_entities": 0, "relation_words": 2, "mentions_subject": 1, "length": 6},
        {"index": 1, "from_end": 1, "is_first": 0, "overlap": 1, "has_new_entity": 1,
         "new_entities": 1, "relation_words": 1, "mentions_subject": 0, "length": 10},
        {"index": 2, "from_end": 0, "is_first": 0, "overlap": 1, "has_new_entity": 1,
         "new_entities": 1, "relation_words": 2, "mentions_subject": 0, "length": 5},
    ]  # fmt: skip
    assert [row["inverse_position"] for row in f] == pytest.approx([1.0, 0.5, 1 / 3], abs=1e-15)
    assert [row["cosine"] for row in f] == pytest.approx([1.0, 0.6, 0.0], abs=1e-12)
    assert [row["cosine_gap"] for row in f] == pytest.approx([0.0, -0.4, -1.0], abs=1e-12)


def test_features_of_an_untitled_bridge_take_its_first_entity_as_subject() -> None:
    vectors = np.array([[0.0, 1.0], [0.0, 0.0]])  # a zero vector has cosine 0
    f = _features(QUILL_Q, QUILL, vectors, None)
    # subject: "Quillmark"; question stems {found, born}; "and" joins two names, not one
    assert [(r["has_new_entity"], r["new_entities"]) for r in f] == [(1, 1), (1, 2)]
    assert [r["overlap"] for r in f] == [0, 1]
    assert [r["relation_words"] for r in f] == [1, 1]
    assert [r["mentions_subject"] for r in f] == [1, 1]
    assert [r["length"] for r in f] == [6, 9]
    assert [r["cosine"] for r in f] == [0.0, 0.0]
    assert [r["cosine_gap"] for r in f] == [0.0, 0.0]


def test_a_named_subject_is_no_new_entity_and_a_question_entity_is_none_either() -> None:
    f = _features(
        "Which country is Tomas Ruiz from?",
        ("Ana Lind met Tomas Ruiz.", "Ana Lind was born in Peru."),
        np.eye(2),
        "Ana Lind",
    )
    assert [(r["has_new_entity"], r["new_entities"]) for r in f] == [(0, 0), (1, 1)]
    assert [r["mentions_subject"] for r in f] == [1, 1]


def test_sparse_vectors_give_the_dense_cosines() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(5, 7)), rng.normal(size=(5, 7))
    a[2] = 0.0
    assert row_cosines(sparse.csr_matrix(a), sparse.csr_matrix(b)) == pytest.approx(
        row_cosines(a, b), abs=1e-12
    )
    assert row_cosines(a, b)[2] == 0.0
    assert row_cosines(a[:1], a[:1])[0] == pytest.approx(1.0, abs=1e-12)


def test_bad_inputs_raise_naming_the_item() -> None:
    q = np.ones((1, 2))
    with pytest.raises(ValueError, match="sentence_vectors has shape"):
        sentence_features([KESTREL_Q], [KESTREL], q, np.ones((2, 2)))
    with pytest.raises(ValueError, match="one encoder"):
        sentence_features([KESTREL_Q], [KESTREL], q, np.ones((3, 4)))
    with pytest.raises(ValueError, match="NaN"):
        sentence_features([KESTREL_Q], [KESTREL], np.full((1, 2), np.nan), np.ones((3, 2)))
    with pytest.raises(ValueError, match="item 1: the bridge has no sentences"):
        sentence_features(["a?", "b?"], [["x."], []], np.ones((2, 2)), np.ones((1, 2)))
    with pytest.raises(ValueError, match="item 0: question is empty"):
        sentence_features([" "], [["x."]], q, np.ones((1, 2)))
    with pytest.raises(ValueError, match="item 1: gold sentence 3 is outside its 2"):
        gold_rows([3, 2], [0, 3])


def test_gold_rows_and_the_argmax_per_bridge() -> None:
    assert gold_rows([3, 1, 2], [2, 0, -1]).tolist() == [0, 0, 1, 1, 0, 0]
    # ties go to the earliest sentence, as the rule's
    assert argmax_per_bridge([0.5, 0.9, 0.9, 0.0, -1.0, -1.0], [3, 1, 2]).tolist() == [1, 0, 0]
    with pytest.raises(ValueError, match="scores for bridges"):
        argmax_per_bridge([1.0], [2])
    assert trainable([1, 2, 2], [0, -1, 1]).tolist() == [False, False, True]


def test_sentence_rows_subset_keeps_the_bridges_in_order() -> None:
    rows = SentenceRows(np.arange(12, dtype=float).reshape(6, 2), np.array([3, 1, 2]))
    assert rows.item.tolist() == [0, 0, 0, 1, 2, 2]
    assert rows.position.tolist() == [0, 1, 2, 0, 0, 1]
    sub = rows.subset(np.array([2, 0]))
    assert sub.sizes.tolist() == [2, 3]
    assert sub.X[:, 0].tolist() == [8.0, 10.0, 0.0, 2.0, 4.0]


# --- the estimator -----------------------------------------------------------------------------


def _synthetic_rows(n: int = 60, seed: int = 0) -> tuple[SentenceRows, np.ndarray]:
    """Bridges of 2-5 sentences whose gold sentence carries a high feature 0."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, 6, size=n)
    gold = np.array([rng.integers(0, m) for m in sizes])
    X = rng.normal(size=(int(sizes.sum()), N_COLS))
    X[np.concatenate([[0], np.cumsum(sizes)[:-1]]) + gold, 0] += 3.0
    return SentenceRows(X, sizes), gold


N_COLS = 4


def test_conventions_clone_and_unfitted() -> None:
    rows, gold = _synthetic_rows()
    y = gold_rows(rows.sizes, gold)
    selector = LearnedSelector(C=0.3).fit(rows.X, y)
    fresh = clone(selector)
    assert fresh.get_params() == selector.get_params()
    assert not hasattr(fresh, "coef_")
    with pytest.raises(NotFittedError):
        fresh.select(rows.X, rows.sizes)
    assert selector.classes_.tolist() == [0, 1]
    assert selector.predict_proba(rows.X).sum(axis=1) == pytest.approx(1.0)


def test_it_learns_to_select_and_beats_chance() -> None:
    rows, gold = _synthetic_rows(200)
    train, test = np.arange(150), np.arange(150, 200)
    tr, te = rows.subset(train), rows.subset(test)
    selector = LearnedSelector().fit(tr.X, gold_rows(tr.sizes, gold[train]))
    hit = np.mean(selector.select(te.X, te.sizes) == gold[test])
    assert hit > 0.8 > np.mean(1.0 / te.sizes)


def test_features_pick_columns_by_name() -> None:
    rng = np.random.default_rng(1)
    X = rng.normal(size=(80, len(FEATURE_NAMES)))
    y = (X[:, FEATURE_NAMES.index("overlap")] > 0).astype(int)
    s = LearnedSelector(features=("overlap", "cosine")).fit(X, y)
    assert s.coef_.shape == (1, 2)
    assert list(s.coefficients()) == ["overlap", "cosine"]
    shuffled = X.copy()
    shuffled[:, FEATURE_NAMES.index("length")] = rng.normal(size=80)  # an unused column
    assert s.decision_function(shuffled).tolist() == s.decision_function(X).tolist()
    with pytest.raises(ValueError, match="unknown features"):
        LearnedSelector(features=("colour",)).fit(X, y)
    with pytest.raises(ValueError, match="needs the 12 columns"):
        LearnedSelector(features=("overlap",)).fit(X[:, :3], y)
    with pytest.raises(ValueError, match="one class only"):
        LearnedSelector().fit(X, np.zeros(80, dtype=int))


# --- cross-fitting -----------------------------------------------------------------------------


class SpySelector(BaseEstimator):
    """Records which items (column 0 of X) each fitted copy trained on and then scored."""

    log: ClassVar[list[dict[str, set[int]]]] = []

    def fit(self, X: np.ndarray, y: np.ndarray) -> SpySelector:
        self.record_ = {"trained": set(X[:, 0].astype(int).tolist()), "scored": set()}
        SpySelector.log.append(self.record_)
        return self

    def select(self, X: np.ndarray, sizes: np.ndarray) -> np.ndarray:
        self.record_["scored"] |= set(X[:, 0].astype(int).tolist())
        return np.zeros(len(sizes), dtype=np.int64)


def test_cross_fitting_never_scores_an_item_with_a_model_trained_on_it() -> None:
    rng = np.random.default_rng(2)
    sizes = rng.integers(1, 5, size=40)
    gold = np.where(rng.random(40) < 0.2, -1, [rng.integers(0, m) for m in sizes])
    X = np.column_stack([np.repeat(np.arange(40), sizes), rng.normal(size=int(sizes.sum()))])
    folds = rng.permutation(40) % 5
    SpySelector.log.clear()
    out = cross_fit_select(SentenceRows(X, sizes), gold, folds, estimator=SpySelector())
    assert out.shape == (40,) and len(SpySelector.log) == 5
    scored = [r["scored"] for r in SpySelector.log]
    assert sorted(i for s in scored for i in s) == list(range(40))  # each item scored once
    can = trainable(sizes, gold)
    for fold, record in zip(np.unique(folds), SpySelector.log, strict=True):
        assert record["trained"].isdisjoint(record["scored"])
        assert record["scored"] == set(np.flatnonzero(folds == fold).tolist())
        assert record["trained"] == set(np.flatnonzero(can & (folds != fold)).tolist())


def test_cross_fitted_selections_differ_from_in_sample_ones_only_by_held_out_fits() -> None:
    rows, gold = _synthetic_rows(100)
    folds = np.arange(100) % 5
    out = cross_fit_select(rows, gold, folds)
    again = cross_fit_select(rows, gold, folds)
    assert out.tolist() == again.tolist()  # deterministic
    for fold in range(5):  # the selection of fold f is that of a model fitted without fold f
        keep = folds != fold
        model = fit_selector(rows.subset(np.flatnonzero(keep)), gold[keep])
        held = rows.subset(np.flatnonzero(~keep))
        assert out[~keep].tolist() == model.select(held.X, held.sizes).tolist()
    with pytest.raises(ValueError, match="non-negative integers"):
        cross_fit_select(rows, gold, folds - 1)


def test_selector_folds_are_the_routers_for_labelled_items() -> None:
    rng = np.random.default_rng(3)
    rank_q = rng.integers(1, 8, size=120)
    rank_union = np.where(rng.random(120) < 0.4, rank_q, rng.integers(1, 8, size=120))
    first = rng.random(120) < 0.5
    folds = selector_folds(rank_q, rank_union, first)
    labels = outcome_labels(rank_q, rank_union, tie_rule=config.ROUTER_TRAIN_TIE_RULE)
    kept = labels != EXCLUDED
    assert (~kept).sum() > 10
    expected = cross_fit_folds(labels[kept], n_splits=config.CV_FOLDS, seed=config.SEED)
    assert folds[kept].tolist() == expected.tolist()
    assert set(folds.tolist()) == set(range(config.CV_FOLDS))
    # the ties spread over every fold, each stratum in each fold
    for value in (True, False):
        assert set(folds[~kept & (first == value)].tolist()) == set(range(config.CV_FOLDS))
    assert selector_folds(rank_q, rank_union, first).tolist() == folds.tolist()


def test_the_toy_world_is_learned_deterministically() -> None:
    world = generate(ToyWorldConfig(n_questions=80, seed=0))
    questions = [ex.question for ex in world]
    bridges = [list(ex.bridge.sentences) for ex in world]
    rng = np.random.default_rng(0)
    q_vectors = rng.normal(size=(len(world), 8))
    s_vectors = rng.normal(size=(sum(len(b) for b in bridges), 8))
    rows = sentence_features(
        questions, bridges, q_vectors, s_vectors, bridge_titles=[ex.bridge.title for ex in world]
    )
    gold = np.array([ex.relation_sentence for ex in world])
    folds = np.arange(len(world)) % 5
    a = cross_fit_select(
        rows, gold, folds, estimator=LearnedSelector(features=SELECTOR_VARIANTS["learned_text"])
    )
    b = cross_fit_select(
        rows, gold, folds, estimator=LearnedSelector(features=SELECTOR_VARIANTS["learned_text"])
    )
    assert a.tolist() == b.tolist()
    assert np.mean(a == gold) > np.mean(1.0 / rows.sizes) + 0.2
