"""A learned ``B_rel`` selector: logistic regression over sentence features, argmax per bridge.

The rule (:func:`~regime_core.router.selector.select_b_rel`) scores each bridge sentence with
three hand-weighted terms. This module learns the weights, and more cues, from the datasets'
gold relation sentences. Nothing gold and nothing of hop 2 is read at inference: the inputs are
the question, the bridge's sentences (and title, when known) and the question's and sentences'
vectors under the encoder in use (:mod:`~regime_core.router.selector_features`).

Model
-----
:class:`LearnedSelector` (a :class:`~regime_core.router.estimator.ScaledLogistic`) learns
``P(sentence is the gold B_rel)`` pointwise over the rows
(:class:`~regime_core.router.selector_features.SentenceRows`); :meth:`LearnedSelector.select`
takes the argmax of the score per bridge, ties going to the earliest sentence (as the rule's).
``features`` names the columns a variant uses (:data:`SELECTOR_VARIANTS`).

Training protocol
-----------------
Fixed, and committed, before any number on the datasets was looked at.

- **Rows.** Every 2WikiMultiHopQA item of the router's sample that has a gold relation sentence
  (``Example.relation_sentence``) and at least two bridge sentences (a one-sentence bridge has
  nothing to choose; such items are counted, never trained on, and always selected right).
  Label 1 for the gold sentence, 0 for the others.
- **Variants** (all reported, none dropped): ``learned`` (every feature; the knob's value),
  ``learned_text`` (no encoder feature: what a page without the encoder could compute) and
  ``learned_rule_terms`` (the rule's three terms with learned weights). Hyper-parameters are the
  defaults (``C = 1``, no class weights), never tuned.
- **Cross-fitting on 2WikiMultiHopQA** (:func:`cross_fit_select`): 5 folds (``config.CV_FOLDS``),
  seed ``config.SEED``. The fold of an item is the router's (:func:`selector_folds`): the items
  the router's label rule labels (``config.ROUTER_TRAIN_TIE_RULE``, ranks under the *rule's*
  ``B_rel``, which needs no gold) get exactly the fold
  :func:`~regime_core.router.estimator.cross_fit_folds` gives them in
  :func:`~regime_core.router.training.fit_routing`; the ties, which the router leaves out of its
  folds, are spread over the same folds by the same function and seed, stratified by "the gold
  sentence is the first". Each item's selection comes from a selector fitted on the other folds
  only.
- **Zero-shot on MuSiQue and HotpotQA**: one selector fitted on every 2WikiMultiHopQA row,
  applied unchanged.

>>> X = np.array([[0.0, 1.0], [1.0, 0.0], [0.0, 2.0], [2.0, 0.0]])
>>> selector = LearnedSelector().fit(X, [1, 0, 1, 0])
>>> selector.select(X, [2, 2]).tolist()  # two bridges of two sentences: the first of each
[0, 0]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn.base import clone
from sklearn.utils import column_or_1d
from sklearn.utils.validation import check_is_fitted

from regime_core import config
from regime_core.router.estimator import ScaledLogistic, cross_fit_folds, one_blas_thread
from regime_core.router.labels import EXCLUDED, outcome_labels
from regime_core.router.selector_features import (
    ENCODER_FEATURES,
    FEATURE_NAMES,
    N_FEATURES,
    SentenceRows,
    argmax_per_bridge,
    gold_rows,
)

#: The selector variants reported (see the module docstring), each with the features it uses.
SELECTOR_VARIANTS: dict[str, tuple[str, ...]] = {
    "learned": FEATURE_NAMES,
    "learned_text": tuple(f for f in FEATURE_NAMES if f not in ENCODER_FEATURES),
    "learned_rule_terms": ("inverse_position", "overlap", "has_new_entity"),
}


# --------------------------------------------------------------------------------------------
# The estimator
# --------------------------------------------------------------------------------------------


class LearnedSelector(ScaledLogistic):
    """Logistic regression over per-sentence rows: ``P(sentence is B_rel)``; argmax per bridge.

    Labels are binary; the larger (``classes_[1]``, 1 for
    :func:`~regime_core.router.selector_features.gold_rows`) is "is B_rel".

    Parameters
    ----------
    features : None (every column of ``X``) or names from
        :data:`~regime_core.router.selector_features.FEATURE_NAMES`; then ``X`` must have those
        columns and only the named ones are used.
    C, class_weight, random_state, max_iter : as
        :class:`~regime_core.router.estimator.ScaledLogistic`'s.
    """

    def __init__(
        self,
        C: float = 1.0,
        class_weight: dict[Any, float] | str | None = None,
        features: Sequence[str] | None = None,
        random_state: int | None = config.SEED,
        max_iter: int = 1000,
    ) -> None:
        super().__init__(C, class_weight, random_state, max_iter)
        self.features = features

    def _columns(self, X: np.ndarray) -> np.ndarray:
        if self.features is None:
            return X
        if X.shape[1] != N_FEATURES:
            raise ValueError(
                f"LearnedSelector(features=...) needs the {N_FEATURES} columns of "
                f"FEATURE_NAMES, got {X.shape[1]}"
            )
        # the names are SELECTOR_VARIANTS' (package constants), each one of FEATURE_NAMES
        return X[:, [FEATURE_NAMES.index(f) for f in self.features]]

    def fit(self, X: Any, y: Any) -> LearnedSelector:
        """Standardise the used columns and fit the logistic regression; returns ``self``."""
        self._fit_scaled(X, y)
        return self

    def select(self, X: Any, sizes: Any) -> np.ndarray:
        """Per bridge (``sizes[i]`` consecutive rows each), the index of its best sentence."""
        return argmax_per_bridge(self.decision_function(X), sizes)

    def coefficients(self) -> dict[str, float]:
        """The standardised coefficients by feature name (``x0``... without ``features``)."""
        check_is_fitted(self)
        names = (
            list(self.features)
            if self.features is not None
            else [f"x{j}" for j in range(self.coef_.shape[1])]
        )
        return dict(zip(names, self.coef_[0].tolist(), strict=True))


# --------------------------------------------------------------------------------------------
# Cross-fitting
# --------------------------------------------------------------------------------------------


def trainable(sizes: Any, gold: Any) -> np.ndarray:
    """Items a selector can learn from: a gold sentence and at least two sentences."""
    return (np.asarray(gold) >= 0) & (np.asarray(sizes) >= 2)


def _fill_folds(strata: np.ndarray, n_splits: int, seed: int) -> np.ndarray:
    """Folds for items the router leaves unlabelled: :func:`cross_fit_folds` stratified by
    ``strata`` when each stratum fills every fold, else a seeded shuffle dealt round-robin."""
    n = strata.shape[0]
    _, counts = np.unique(strata, return_counts=True)
    if counts.size == 2 and counts.min() >= n_splits:
        return cross_fit_folds(strata, n_splits=n_splits, seed=seed)
    return (np.random.default_rng(seed).permutation(n) % n_splits).astype(np.int64)


def selector_folds(
    rank_q: Any,
    rank_union: Any,
    gold_is_first: Any,
    *,
    tie_rule: str = config.ROUTER_TRAIN_TIE_RULE,
    label_k: int | None = None,
    n_splits: int = config.CV_FOLDS,
    seed: int = config.SEED,
) -> np.ndarray:
    """The router's fold of every item (see the module docstring), ``(n,)`` in ``0..n_splits-1``.

    ``rank_q``/``rank_union``: the hop-2 target's ranks under ``q`` and under ``union`` with the
    rule's ``B_rel`` (what the router is trained on). Items the label rule labels get the fold
    :func:`~regime_core.router.training.fit_routing` gives them (``cross_fit_folds`` over the
    labelled items, in order); tied items (``tie_rule="exclude"``) are spread over the same folds,
    stratified by ``gold_is_first`` (a boolean per item).
    """
    labels = outcome_labels(rank_q, rank_union, tie_rule=tie_rule, k=label_k)
    first = column_or_1d(np.asarray(gold_is_first, dtype=bool))
    kept = labels != EXCLUDED
    folds = np.full(labels.shape[0], -1, dtype=np.int64)
    folds[kept] = cross_fit_folds(labels[kept], n_splits=n_splits, seed=seed)
    if (~kept).any():
        folds[~kept] = _fill_folds(first[~kept].astype(np.int64), n_splits, seed)
    return folds


def cross_fit_select(
    rows: SentenceRows,
    gold: Any,
    folds: Any,
    *,
    estimator: Any = None,
) -> np.ndarray:
    """Out-of-fold selections: item ``i`` (fold ``folds[i]``) is selected by a clone of
    ``estimator`` (default ``LearnedSelector()``) fitted on the :func:`trainable` items of the
    other folds only. ``gold[i]`` is item ``i``'s gold sentence (-1: none; such items are
    selected, never trained on). Returns the selected index per item; deterministic."""
    # gold and folds are the same items' (SelectorData): a length mismatch fails in numpy
    gold = np.asarray(gold, dtype=np.int64)
    folds = column_or_1d(np.asarray(folds))
    y = gold_rows(rows.sizes, gold)
    item = rows.item
    can_train = trainable(rows.sizes, gold)
    template = LearnedSelector() if estimator is None else estimator
    out = np.full(rows.n, -1, dtype=np.int64)
    with one_blas_thread():  # a handful of tiny fits
        for fold in np.unique(folds):
            test = folds == fold
            train_rows = np.isin(item, np.flatnonzero(can_train & ~test))
            model = clone(template).fit(rows.X[train_rows], y[train_rows])
            held = rows.subset(np.flatnonzero(test))
            out[test] = model.select(held.X, held.sizes)
    return out


def fit_selector(rows: SentenceRows, gold: Any, *, estimator: Any = None) -> Any:
    """A clone of ``estimator`` (default ``LearnedSelector()``) fitted on every
    :func:`trainable` item: the selector applied zero-shot elsewhere."""
    gold = np.asarray(gold, dtype=np.int64)
    y = gold_rows(rows.sizes, gold)
    train_rows = np.isin(rows.item, np.flatnonzero(trainable(rows.sizes, gold)))
    template = LearnedSelector() if estimator is None else estimator
    with one_blas_thread():
        return clone(template).fit(rows.X[train_rows], y[train_rows])
