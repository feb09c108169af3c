"""The α rule applied to routing data: which bridge weight each question's union query gets.

The knob ``alpha_rule`` (:data:`regime_core.config.ALPHA_RULES`) of the router recipe:

- ``fixed``: every question of every dataset at ``alpha`` (the routing data as built);
- ``calibrated``: the rule of :mod:`regime_core.retrieval.alpha_rule`, ``α(S) = c·R(S)``. On the
  training dataset ``c`` is cross-fitted (:func:`~regime_core.retrieval.alpha_rule.fit_rule`,
  dataset scope; the protocol's folds: stratified by the ``q`` arm's hit@k, the recipe's folds
  and seed), so each question is weighted by ``c`` fitted on the other folds times its own
  fold's ratio, and the labels are built at those weights; ``c`` refitted on all of the training
  dataset is the deployment scale, and every other dataset gets ``c·R(S)`` with its own ratio
  (no label read). With ``scale`` given (``c`` fitted elsewhere: 2WikiMultiHopQA with MiniLM,
  applied to another encoder) every dataset, the training one included, gets ``c·R(S)``.

Only ``rank_union`` (and the weights it was scored at) changes: the features, ``rank_q``, the
``B_rel`` and the folds of a cross-fitted selector stay
(:func:`~regime_core.router.training.with_weights`). ``settings.alpha`` becomes the α the rule
*deploys* on that dataset (the training dataset: ``c·R`` with the deployment ``c``), which the
router fitted on it records.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from regime_core.retrieval.alpha_rule import AlphaRuleProtocol, fit_rule, rule_weights
from regime_core.retrieval.spread import median_ratio, spread_ratios
from regime_core.router.estimator import cross_fit_folds
from regime_core.router.training import RoutingData, with_weights


def rule_folds(data: RoutingData, protocol: AlphaRuleProtocol) -> np.ndarray:
    """The protocol's folds on ``data``: stratified by the ``q`` arm's hit@k (which no α moves),
    ``protocol.n_splits`` folds, ``protocol.seed``."""
    return cross_fit_folds(data.hit_q.astype(int), n_splits=protocol.n_splits, seed=protocol.seed)


@dataclass(frozen=True)
class AlphaWeights:
    """What the α rule gives each dataset: per question ``weights``, the α deployed there
    (``alpha``), its ratio ``R``; for ``calibrated`` the deployment scale ``c`` and, on the
    training dataset, the cross-fitted ``fold_c`` (fold order 0..F-1)."""

    rule: str
    train_dataset: str
    weights: Mapping[str, np.ndarray]
    alpha: Mapping[str, float]
    ratio: Mapping[str, float]  # NaN for fixed (not measured)
    c: float | None = None
    fold_c: tuple[float, ...] = ()
    cross_fitted: bool = False  # the training dataset's weights are cross-fitted

    def to_numbers(self) -> dict[str, Any]:
        out: dict[str, Any] = {"rule": self.rule, "train_dataset": self.train_dataset}
        if self.c is not None:
            out["c"] = float(self.c)
            out["fold_c"] = [float(c) for c in self.fold_c]
            out["cross_fitted"] = self.cross_fitted
        out["datasets"] = {
            d: {
                "alpha": float(self.alpha[d]),
                "ratio": None if not np.isfinite(self.ratio[d]) else float(self.ratio[d]),
                "weight_min": float(np.min(self.weights[d])),
                "weight_max": float(np.max(self.weights[d])),
            }
            for d in self.weights
        }
        return out

    def apply(self, data: Mapping[str, RoutingData]) -> dict[str, RoutingData]:
        """``data`` re-scored at these weights (``fixed``: returned unchanged)."""
        if self.rule == "fixed":
            return dict(data)
        out = {}
        for dataset, d in data.items():
            rescored = with_weights(d, self.weights[dataset], alpha_rule=self.rule)
            settings = dataclasses.replace(d.settings, alpha=float(self.alpha[dataset]))
            out[dataset] = dataclasses.replace(rescored, settings=settings)
        return out


def alpha_weights(
    data: Mapping[str, RoutingData],
    rule: str,
    *,
    alpha: float,
    train_dataset: str,
    protocol: AlphaRuleProtocol | None = None,
    scale: float | None = None,
    hits: np.ndarray | None = None,
    ratios: Mapping[str, np.ndarray] | None = None,
) -> AlphaWeights:
    """The weights of ``rule`` on every dataset of ``data`` (module docstring); pure given the
    routing data. ``alpha``: the fixed rule's weight; ``protocol``: the calibrated rule's grid,
    k, folds and seed (default: :class:`~regime_core.retrieval.alpha_rule.AlphaRuleProtocol`
    on ``train_dataset``); ``scale``: a ``c`` fitted elsewhere (then no dataset is fitted on);
    ``hits``: the training dataset's union hits on the protocol's grid, when the caller has them
    (:func:`~regime_core.retrieval.alpha_rule.grid_hits`); ``ratios``: each dataset's spread
    ratios over the protocol's candidates, when the caller has them."""
    if rule == "fixed":
        return AlphaWeights(
            rule=rule,
            train_dataset=train_dataset,
            weights={d: np.full(x.n, float(alpha)) for d, x in data.items()},
            alpha={d: float(alpha) for d in data},
            ratio={d: float("nan") for d in data},
        )
    protocol = protocol or AlphaRuleProtocol(train_dataset=train_dataset)
    given = ratios or {}
    ratios = {
        d: given[d] if d in given else spread_ratios(x.geometry, protocol.candidates)
        for d, x in data.items()
    }
    fold_c: tuple[float, ...] = ()
    weights: dict[str, np.ndarray] = {}
    cross_fitted = False
    if scale is None:
        train = data[train_dataset]  # the run's config names a training set it loads
        fitted = fit_rule(
            train.geometry,
            ratios[train_dataset],
            rule_folds(train, protocol),
            scope="dataset",
            grid=protocol.grid,
            k=protocol.k,
            hits=hits,
        )
        c, fold_c, cross_fitted = fitted.c, fitted.fold_c, True
        weights[train_dataset] = fitted.weights
    else:
        c = float(scale)
    for dataset in data:
        if dataset not in weights:
            weights[dataset] = rule_weights("dataset", c, ratios[dataset])
    ratio = {d: median_ratio(r) for d, r in ratios.items()}
    return AlphaWeights(
        rule=rule,
        train_dataset=train_dataset,
        weights=weights,
        alpha={d: c * ratio[d] for d in data},
        ratio=ratio,
        c=float(c),
        fold_c=tuple(float(x) for x in fold_c),
        cross_fitted=cross_fitted,
    )
