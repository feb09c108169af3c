"""The learned B_rel selector: the estimator's conventions, cross-fitting that never scores an
item with a model trained on it, and determinism. The toy world only; no dataset text."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pytest
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import NotFittedError

from regime_core import config
from regime_core.data.toyworld import ToyWorldConfig, generate
from regime_core.router import cross_fit_folds, outcome_labels
from regime_core.router.labels import EXCLUDED
from regime_core.router.learned_selector import (
    SELECTOR_VARIANTS,
    LearnedSelector,
    cross_fit_select,
    fit_selector,
    selector_folds,
    trainable,
)
from regime_core.router.selector_features import (
    FEATURE_NAMES,
    SentenceRows,
    gold_rows,
    sentence_features,
)


def test_variants_use_known_features_and_trainable_items_have_a_choice() -> None:
    for names in SELECTOR_VARIANTS.values():
        assert set(names) <= set(FEATURE_NAMES)
    assert trainable([1, 2, 2], [0, -1, 1]).tolist() == [False, False, True]


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
    with pytest.raises(ValueError, match="needs the 12 columns"):
        LearnedSelector(features=("overlap",)).fit(X[:, :3], y)
    with pytest.raises(ValueError, match="one class"):
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
