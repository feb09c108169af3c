"""RegimeRouter as a scikit-learn classifier (with its base, shared with the learned selector),
routing one question, and cross-fitting."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import refused
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import check_estimator

from regime_core import config
from regime_core.router import (
    FEATURE_NAMES,
    RegimeRouter,
    RouteDecision,
    cross_fit_folds,
    cross_fit_predict,
    outcome_labels,
)
from regime_core.router.estimator import ScaledLogistic
from regime_core.router.learned_selector import LearnedSelector


def synthetic(n: int = 200, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Five features; union wins when the P2 proxy is on and the P1 proxy is off (plus noise)."""
    rng = np.random.default_rng(seed)
    X = np.column_stack(
        [
            rng.poisson(0.5, n),
            rng.integers(0, 2, n),
            rng.integers(0, 4, n),
            rng.integers(0, 2, n),
            rng.integers(0, 2, n),
        ]
    ).astype(float)
    logit = 2.5 * X[:, 4] - 2.0 * X[:, 3] - 0.8 * X[:, 0] - 0.5
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    return X, y


def test_params_are_stored_untouched_and_defaults_come_from_config() -> None:
    router = RegimeRouter()
    params = router.get_params()
    assert params["alpha"] == config.ALPHA and params["random_state"] == config.SEED
    assert params["threshold"] == 0.5
    router.set_params(C=0.1, threshold=0.7)
    assert (router.C, router.threshold) == (0.1, 0.7)
    assert not any(k.endswith("_") for k in vars(router))


def test_fit_matches_a_scaler_plus_logistic_regression_pipeline() -> None:
    X, y = synthetic()
    router = RegimeRouter(C=0.5).fit(X, y)
    reference = make_pipeline(StandardScaler(), LogisticRegression(C=0.5, random_state=0))
    reference.fit(X, y)
    np.testing.assert_allclose(router.predict_proba(X), reference.predict_proba(X), atol=1e-6)
    np.testing.assert_array_equal(router.predict(X), reference.predict(X))
    assert router.coef_.shape == (1, 5) and router.intercept_.shape == (1,)
    assert router.n_samples_fit_ == len(y)


def test_the_learned_signs_recover_the_generating_rule() -> None:
    X, y = synthetic(n=2000)
    coef = RegimeRouter().fit(X, y).coef_[0]
    assert coef[4] > 0 > coef[3]


def test_threshold_moves_decisions_consistently() -> None:
    X, y = synthetic()
    low = RegimeRouter(threshold=0.2).fit(X, y)
    high = RegimeRouter(threshold=0.8).fit(X, y)
    assert low.predict(X).sum() > high.predict(X).sum()
    for router in (low, high):
        p = router.predict_proba(X)[:, 1]
        np.testing.assert_array_equal(router.predict(X), (p > router.threshold).astype(int))
        np.testing.assert_array_equal(router.decision_function(X) > 0, router.predict(X) == 1)
        np.testing.assert_allclose(router.predict_proba(X).sum(axis=1), 1.0)


def test_predict_action_names_the_arm() -> None:
    X, y = synthetic()
    router = RegimeRouter().fit(X, y)
    actions = router.predict_action(X)
    assert set(actions) <= {"q", "union"}
    np.testing.assert_array_equal(actions == "union", router.predict(X) == 1)


def test_string_labels_map_to_actions_by_order() -> None:
    X, y = synthetic()
    router = RegimeRouter().fit(X, np.where(y == 1, "union", "q"))
    assert router.classes_.tolist() == ["q", "union"]
    np.testing.assert_array_equal(router.predict(X), router.predict_action(X))


def test_clone_and_cross_val_score_work() -> None:
    X, y = synthetic()
    router = RegimeRouter(C=0.3).fit(X, y)
    fresh = clone(router)
    assert fresh.get_params() == router.get_params()
    assert not hasattr(fresh, "coef_")
    scores = cross_val_score(RegimeRouter(), X, y, cv=5)
    assert scores.shape == (5,) and scores.mean() > max(y.mean(), 1 - y.mean())


@pytest.mark.parametrize("estimator", [RegimeRouter(), LearnedSelector()], ids=type)
def test_passes_scikit_learn_estimator_checks(estimator: ScaledLogistic) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(estimator, on_fail=None)
    failed = [r["check_name"] for r in results if r["status"] == "failed"]
    assert failed == []
    assert sum(r["status"] == "passed" for r in results) >= 50


def test_bad_labels_raise() -> None:
    X, y = synthetic()
    labels = outcome_labels([1, 2, 3, 1] * 50, [1, 1, 4, 2] * 50, tie_rule="exclude")
    with pytest.raises(ValueError, match="tie excluded"):
        RegimeRouter().fit(X, labels)
    with pytest.raises(ValueError, match="one class"):
        RegimeRouter().fit(X, np.zeros(len(y)))
    with pytest.raises(NotFittedError):
        RegimeRouter().predict(X)
    with pytest.raises(ValueError, match="features"):
        RegimeRouter().fit(X, y).predict(X[:, :4])


# --- route -----------------------------------------------------------------------------------


def fitted_router() -> RegimeRouter:
    X, y = synthetic(n=500)
    return RegimeRouter().fit(X, y)


def test_route_b_dominant_and_q_dominant_questions() -> None:
    router = fitted_router()
    bridge = ["Kestrel Bay is a 1931 film.", "It was directed by Odile Marchetti."]
    b_dominant = router.route(
        "Who is the mother of the director of Kestrel Bay?", bridge, "Kestrel Bay (film)"
    )
    assert isinstance(b_dominant, RouteDecision)
    assert b_dominant.b_rel_index == 1 and b_dominant.b_rel == bridge[1]
    assert list(b_dominant.features) == list(FEATURE_NAMES)
    assert b_dominant.features["b_rel_has_new_entity"] == 1.0
    q_dominant = router.route("Did Odile Marchetti direct Kestrel Bay?", bridge, "Kestrel Bay")
    assert q_dominant.features["question_names_b_rel_entity"] == 1.0
    assert (b_dominant.action, q_dominant.action) == ("union", "q")
    assert b_dominant.probability > 0.5 > q_dominant.probability
    # route agrees with the batch path.
    X = np.array([list(b_dominant.features.values())])
    assert router.predict_proba(X)[0, 1] == pytest.approx(b_dominant.probability, rel=1e-12)


@pytest.mark.parametrize(
    ("question", "bridge", "title", "field"),
    [
        ("", ["A b."], None, "question"),
        (42, ["A b."], None, "question"),
        ("Who?", [], None, "bridge_sentences"),
        ("Who?", "A whole passage as one string.", None, "bridge_sentences"),
        ("Who?", [None], None, "bridge_sentences[0]"),
        ("Who?", ["A b."], 7, "bridge_title"),
    ],
)
def test_route_rejects_empty_or_non_text(
    question: object, bridge: object, title: object, field: str
) -> None:
    with refused(ValueError, names=("route", field)):
        fitted_router().route(question, bridge, title)  # type: ignore[arg-type]


# --- cross-fitting ---------------------------------------------------------------------------


def test_cross_fit_predicts_each_item_out_of_fold() -> None:
    X, y = synthetic()
    proba = cross_fit_predict(X, y, n_splits=5, seed=3)
    folds = cross_fit_folds(y, n_splits=5, seed=3)
    assert sorted(np.unique(folds)) == [0, 1, 2, 3, 4]
    for fold in range(5):
        held = folds == fold
        model = RegimeRouter().fit(X[~held], y[~held])
        np.testing.assert_array_equal(proba[held], model.predict_proba(X[held])[:, 1])
    in_sample = RegimeRouter().fit(X, y).predict_proba(X)[:, 1]
    assert not np.array_equal(proba, in_sample)


def test_cross_fit_is_deterministic_and_seeded() -> None:
    X, y = synthetic()
    np.testing.assert_array_equal(cross_fit_predict(X, y), cross_fit_predict(X, y))
    assert not np.array_equal(cross_fit_folds(y, seed=0), cross_fit_folds(y, seed=1))
    # stratified: each fold's union rate is near the overall rate
    folds = cross_fit_folds(y, n_splits=config.CV_FOLDS)
    rates = [y[folds == f].mean() for f in range(config.CV_FOLDS)]
    assert max(rates) - min(rates) < 0.1


def test_cross_fit_respects_groups_and_custom_estimators() -> None:
    X, y = synthetic()
    groups = np.arange(len(y)) // 4
    folds = cross_fit_folds(y, groups, n_splits=5)
    for g in np.unique(groups):
        assert np.unique(folds[groups == g]).size == 1
    proba = cross_fit_predict(X, y, groups, estimator=RegimeRouter(C=0.01))
    assert proba.shape == (len(y),) and np.all((proba > 0) & (proba < 1))
    assert not np.array_equal(proba, cross_fit_predict(X, y, groups))


def test_cross_fit_bad_inputs() -> None:
    X, _ = synthetic()
    with refused(ValueError, names=("class 1 has 1", "n_splits")):
        cross_fit_predict(X[:10], np.array([1] + [0] * 9))
    with pytest.raises(ValueError, match="two classes"):
        cross_fit_folds(np.zeros(10))
