"""``RegimeRouter``: a scikit-learn classifier choosing ``q`` (0) or ``union`` (1) per question.

The model is a logistic regression on standardised features::

    z = (x - mean) / scale                   (StandardScaler, fitted on the training items)
    p(union | x) = σ(w · z + b)              (LogisticRegression, L2, inverse strength C)
    action = union  ⇔  p > threshold         (ties at the threshold go to q, the cheaper arm)

``fit`` uses scikit-learn's ``StandardScaler`` and ``LogisticRegression`` and keeps only their
learned numbers (``scaler_mean_``, ``scaler_scale_``, ``coef_``, ``intercept_``); prediction is
the pure kernel :func:`router_logits` over them, so a router saved as JSON and loaded again
(:mod:`regime_core.router.io`) predicts bit-identically. ``alpha`` is not used by the model: it
is the weight of ``B_rel`` in the union query that a ``union`` decision stands for, stored with
the model so that the deployed rule is one object.

>>> import numpy as np
>>> X = np.array([[0.0, 1.0], [1.0, 0.0], [0.0, 2.0], [2.0, 0.0]])
>>> router = RegimeRouter().fit(X, [0, 1, 0, 1])
>>> router.predict(X).tolist(), router.predict_action(X[:2]).tolist()
([0, 1, 0, 1], ['q', 'union'])
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedGroupKFold, StratifiedKFold
from sklearn.preprocessing import StandardScaler
from sklearn.utils import check_array, column_or_1d
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from regime_core import config

# Longest question, title and bridge text :meth:`RegimeRouter.route` accepts: far above any
# real one, low enough that featurising stays fast; in the one table router.js shares.
from regime_core.limits import MAX_BRIDGE_CHARS, MAX_QUESTION_CHARS, MAX_TITLE_CHARS
from regime_core.router.features import FEATURE_NAMES, featurize
from regime_core.router.labels import ACTIONS, EXCLUDED
from regime_core.router.rules import DEFAULT_ROUTER_RULES, RouterRules
from regime_core.router.selector import read_route_input


def router_logits(
    X: np.ndarray,
    mean: np.ndarray,
    scale: np.ndarray,
    coef: np.ndarray,
    intercept: float,
) -> np.ndarray:
    """The kernel: ``((X - mean) / scale) @ coef + intercept``, the log-odds of ``union``."""
    return ((X - mean) / scale) @ coef + intercept


def _logit(p: float) -> float:
    return math.log(p) - math.log1p(-p)


@dataclass(frozen=True)
class RouteDecision:
    """One routing decision: the ``action`` ("q" or "union"), ``p(union)``, the selected
    ``B_rel`` and its index among the bridge sentences, and the features by name."""

    action: str
    probability: float
    b_rel: str
    b_rel_index: int
    features: dict[str, float]
    #: the bridge weight of the union query if union is chosen: the router's ``alpha``, which
    #: under the calibrated rule is the α deployed on its training questions (a single question
    #: has no set to measure a spread ratio on; :mod:`regime_core.router.io`)
    alpha: float = config.ALPHA
    #: the α rule the router was trained under (``fixed`` or ``calibrated``)
    alpha_rule: str = config.ALPHA_RULE


class ScaledLogistic(ClassifierMixin, BaseEstimator):
    """A binary scikit-learn classifier: standardised features, L2 logistic regression (``C``),
    only the learned numbers kept (``scaler_mean_``, ``scaler_scale_``, ``coef_``,
    ``intercept_``) and scored by :func:`router_logits`; the larger label (``classes_[1]``) is
    the positive one. The base of :class:`RegimeRouter` and of
    :class:`~regime_core.router.learned_selector.LearnedSelector`.

    Parameters
    ----------
    C : inverse L2 regularisation strength of the logistic regression.
    class_weight : None, "balanced" or a dict, passed to ``LogisticRegression``.
    random_state : passed to ``LogisticRegression`` (the lbfgs solver is deterministic anyway).
    max_iter : solver iterations.
    """

    def __init__(
        self,
        C: float = 1.0,
        class_weight: dict[Any, float] | str | None = None,
        random_state: int | None = config.SEED,
        max_iter: int = 1000,
    ) -> None:
        self.C = C
        self.class_weight = class_weight
        self.random_state = random_state
        self.max_iter = max_iter

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def _columns(self, X: np.ndarray) -> np.ndarray:
        """The columns of ``X`` the model reads (all of them here)."""
        return X

    def _fit_scaled(self, X: Any, y: Any, hint: str = "") -> np.ndarray:
        """Validate ``X`` and binary ``y`` (``hint`` is added to the non-binary message), fit the
        scaler and the logistic regression on the used columns; returns the validated ``X``.
        A ``y`` of one class is refused by scikit-learn's own solver ("... only one class")."""
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        y_type = type_of_target(y, input_name="y", raise_unknown=True)
        classes = np.unique(y)
        if y_type != "binary":
            raise ValueError(
                f"Only binary classification is supported. The type of the target is {y_type}."
                + (hint if EXCLUDED in classes.tolist() else "")
            )
        Z = self._columns(X)
        scaler = StandardScaler().fit(Z)
        model = LogisticRegression(
            C=self.C,
            class_weight=self.class_weight,
            random_state=self.random_state,
            max_iter=self.max_iter,
        ).fit(scaler.transform(Z), y)
        self.classes_ = model.classes_
        self.scaler_mean_ = np.asarray(scaler.mean_, dtype=np.float64)
        self.scaler_scale_ = np.asarray(scaler.scale_, dtype=np.float64)
        self.coef_ = np.asarray(model.coef_, dtype=np.float64)
        self.intercept_ = np.asarray(model.intercept_, dtype=np.float64)
        self.n_iter_ = model.n_iter_
        return X

    def _logits(self, Z: np.ndarray) -> np.ndarray:
        return router_logits(
            Z, self.scaler_mean_, self.scaler_scale_, self.coef_[0], float(self.intercept_[0])
        )

    def _validated(self, X: Any) -> np.ndarray:
        check_is_fitted(self)
        return self._columns(validate_data(self, X, reset=False, dtype=np.float64))

    def decision_function(self, X: Any) -> np.ndarray:
        """Per row, the log-odds of the positive label."""
        return self._logits(self._validated(X))

    def predict_proba(self, X: Any) -> np.ndarray:
        """``(n, 2)``: columns ``p(classes_[0])`` and ``p(classes_[1])``."""
        # expit: the same values as 1 / (1 + exp(-z)) (to 1 ulp) without overflow at |z| ~ 1e3
        p = expit(self._logits(self._validated(X)))
        return np.column_stack([1.0 - p, p])

    def predict(self, X: Any) -> np.ndarray:
        """Labels from ``classes_``: the positive one where :meth:`decision_function` > 0."""
        positive = self.decision_function(X) > 0  # validates (and checks fitted) first
        return self.classes_[positive.astype(np.intp)]


class RegimeRouter(ScaledLogistic):
    """Logistic-regression router over the five features (see the module docstring).

    Parameters
    ----------
    threshold : route to ``union`` when ``p(union) > threshold``; in (0, 1).
    alpha : weight of ``B_rel`` in the union query (``config.ALPHA``); carried, not learned.
        Both arrive checked (a run's config, a router file): the estimator does not re-check them.
    C, class_weight, random_state, max_iter : as :class:`ScaledLogistic`'s.

    Notes
    -----
    Labels are 0 (q) and 1 (union), as :func:`~regime_core.router.labels.outcome_labels` makes
    them; any two labels work, the larger (``classes_[1]``) standing for union. ``predict``
    returns labels from ``classes_``; ``predict_action`` returns "q"/"union".
    """

    def __init__(
        self,
        C: float = 1.0,
        class_weight: dict[Any, float] | str | None = None,
        threshold: float = 0.5,
        alpha: float = config.ALPHA,
        random_state: int | None = config.SEED,
        max_iter: int = 1000,
    ) -> None:
        super().__init__(C, class_weight, random_state, max_iter)
        self.threshold = threshold
        self.alpha = alpha

    # --- fitting ------------------------------------------------------------------------------

    def fit(self, X: Any, y: Any) -> RegimeRouter:
        """Standardise ``X`` and fit the logistic regression; returns ``self``."""
        hint = (
            f" y contains {EXCLUDED}, the mark of a tie excluded by "
            "outcome_labels(tie_rule='exclude'): keep only labels != -1 (and report how "
            "many were excluded)."
        )
        self.n_samples_fit_ = int(self._fit_scaled(X, y, hint).shape[0])
        return self

    # --- prediction ---------------------------------------------------------------------------

    def decision_function(self, X: Any) -> np.ndarray:
        """Log-odds of union minus ``logit(threshold)``: positive ⇔ the router says union."""
        return self._logits(self._validated(X)) - _logit(self.threshold)

    def predict_action(self, X: Any) -> np.ndarray:
        """The action names, "q" or "union", as a string array."""
        return np.asarray(ACTIONS, dtype=object)[(self.decision_function(X) > 0).astype(np.intp)]

    # --- one question -------------------------------------------------------------------------

    def route(
        self,
        question: str,
        bridge_sentences: Sequence[str],
        bridge_title: str | None = None,
        *,
        rules: RouterRules | None = None,
    ) -> RouteDecision:
        """Select ``B_rel``, compute the five features and decide, for one question.

        ``rules`` defaults to the rules the router was saved with (``rules_``, set by
        :func:`~regime_core.router.io.load_router`), else the defaults. Raises ValueError for a
        blank or non-string question, bridge sentence or title (the boundary of ``regime
        route``: :data:`~regime_core.inputs.route_input.ROUTE_INPUT`).
        """
        if not hasattr(self, "coef_"):  # check_is_fitted costs more than the whole decision
            raise NotFittedError("This RegimeRouter is not fitted yet; call fit or load_router")
        question, sentences, title = read_route_input(
            question, bridge_sentences, bridge_title, "route"
        )
        _check_size("question", len(question), MAX_QUESTION_CHARS)
        _check_size("bridge", sum(len(s) for s in sentences), MAX_BRIDGE_CHARS)
        _check_size("bridge title", len(title or ""), MAX_TITLE_CHARS)
        if rules is None:
            rules = getattr(self, "rules_", DEFAULT_ROUTER_RULES)
        out = featurize([question], [sentences], bridge_titles=[title], rules=rules)
        # The kernel directly: the features are built here, so there is nothing to validate.
        logit = float(self._logits(out.X)[0])
        selected = out.selections[0]
        return RouteDecision(
            action=ACTIONS[int(logit - _logit(self.threshold) > 0)],
            probability=float(expit(logit)),
            b_rel=selected.text,
            b_rel_index=selected.index,
            features=dict(zip(FEATURE_NAMES, out.X[0].tolist(), strict=True)),
            alpha=float(self.alpha),
            alpha_rule=str(getattr(self, "alpha_rule_", {"rule": "fixed"})["rule"]),
        )


def _check_size(what: str, n_chars: int, limit: int) -> None:
    if n_chars > limit:
        raise ValueError(
            f"route: the {what} is {n_chars:,} characters long, over the limit of {limit:,}"
        )


# --- cross-fitting ---------------------------------------------------------------------------


@functools.cache
def _threadpools() -> Any:
    from threadpoolctl import ThreadpoolController  # scikit-learn's own dependency

    return ThreadpoolController()


def one_blas_thread() -> Any:
    """A context in which BLAS runs on one thread, for loops of tiny fits (a logistic regression
    of a few columns on a few hundred rows): there, thread start-up costs more than the work
    (about ten times the fit on a loaded two-core machine). Larger products are left alone."""
    return _threadpools().limit(limits=1, user_api="blas")


def cross_fit_folds(
    y: Any,
    groups: Any = None,
    *,
    n_splits: int = config.CV_FOLDS,
    seed: int = config.SEED,
) -> np.ndarray:
    """The fold (0..n_splits-1) that holds out each item: stratified by ``y``, shuffled with
    ``seed``; with ``groups`` (StratifiedGroupKFold) a group never spans two folds."""
    y = column_or_1d(y)
    # The labels are data: no config check can promise two classes, each filling every fold.
    classes, counts = np.unique(y, return_counts=True)
    if classes.size != 2:
        raise ValueError(f"cross-fitting needs exactly two classes in y, got {classes.tolist()}")
    if counts.min() < n_splits:
        raise ValueError(
            f"cross-fitting in {n_splits} folds needs at least {n_splits} items of each "
            f"class: class {classes[counts.argmin()].item()!r} has {counts.min()}; use more "
            "questions, or fewer folds (n_splits)"
        )
    if groups is None:
        splitter: Any = StratifiedKFold(n_splits=n_splits, shuffle=True, random_state=seed)
    else:
        splitter = StratifiedGroupKFold(n_splits=n_splits, shuffle=True, random_state=seed)
    folds = np.full(y.shape[0], -1, dtype=np.int64)
    for fold, (_, test) in enumerate(splitter.split(np.zeros((y.shape[0], 1)), y, groups)):
        folds[test] = fold
    return folds


def cross_fit_predict(
    X: Any,
    y: Any,
    groups: Any = None,
    *,
    n_splits: int = config.CV_FOLDS,
    seed: int = config.SEED,
    estimator: Any = None,
    folds: Any = None,
) -> np.ndarray:
    """Out-of-fold ``p(union)`` for every item: item i is scored by a model fitted on the other
    folds only (:func:`cross_fit_folds`, or the given ``folds``: one fold number per item, as a
    learned ``B_rel`` selector's cross-fitting assigned them, so that an item's sentence and its
    route both come from models that never saw its fold). ``estimator`` (default
    ``RegimeRouter()``) is cloned per fold. Deterministic for a given seed."""
    X = check_array(X, dtype=np.float64)
    y = column_or_1d(y)
    if folds is None:
        folds = cross_fit_folds(y, groups, n_splits=n_splits, seed=seed)
    positive = np.unique(y)[1]
    template = RegimeRouter() if estimator is None else estimator
    proba = np.empty(X.shape[0], dtype=np.float64)
    for fold in range(n_splits):
        test = folds == fold
        if not test.any():
            continue
        train = ~test
        model = clone(template).fit(X[train], y[train])
        column = int(np.flatnonzero(model.classes_ == positive)[0])
        proba[test] = model.predict_proba(X[test])[:, column]
    return proba
