"""Notebook 05's claim: the RegimeRouter trained on retrieval outcomes, and its selector.

The paper's router picks, per two-hop question, ``q`` (encode the question alone) or ``union``
(``f_q(q) + α·f_q(B_rel)``, α frozen at ``config.ALPHA``), from five surface features of the
question and the bridge. Nothing gold is read at inference: ``B_rel`` is the sentence chosen by
:func:`regime_core.router.select_b_rel`, never the dataset's relation sentence.

:func:`train_router` runs the recipe of :mod:`regime_core.router.training` on 2WikiMultiHopQA
(the paper's training set); :func:`save_trained_router` writes its deployment refit.
Comparison ("parallel") questions are **included**: they name both entities, so they are the
canonical Q-dominant case the router must learn to leave alone. :func:`selector_quality`
measures the ``B_rel`` selector against the datasets' gold relation sentences.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from regime_core import config
from regime_core.experiments.common import RunConfig, check_datasets
from regime_core.experiments.context import Context, resolve
from regime_core.experiments.sampling import Sample
from regime_core.inputs import Choice, Nullable, Text
from regime_core.inputs.configs import declared, integer
from regime_core.retrieval.alpha_rule import AlphaRuleProtocol
from regime_core.retrieval.settings import RetrievalSettings
from regime_core.router import (
    FEATURE_NAMES,
    TIE_RULES,
    RegimeRouter,
    describe_label_rule,
    save_router,
)
from regime_core.router.bridge_weight import AlphaWeights, alpha_weights
from regime_core.router.evaluation import RoutingOutcome, evaluate_routing
from regime_core.router.labels import EXCLUDED
from regime_core.router.learned_selector import selector_folds
from regime_core.router.selector_choices import (
    SelectorData,
    choose,
    reselected,
    selector_data,
)
from regime_core.router.selector_evaluation import (
    SelectionStudy,
    measure_dataset,
)
from regime_core.router.training import (
    FittedRouting,
    RoutingData,
    SelectorQuality,
    agreement_table,
    apply_router,
    breakdown,
    build_routing_data,
    fit_routing,
    gold_b_rel_retrieval,
    hop1_numbers,
    out_of_fold_auc,
    threshold_decisions,
)

#: The paper trains on 2WikiMultiHopQA and applies the router zero-shot to the other two.
TRAIN_DATASET: str = "2wikimultihopqa"
TRANSFER_DATASETS: tuple[str, ...] = ("musique", "hotpotqa")
#: File name a training run writes the deployment router to, inside its output directory.
TRAINED_ROUTER_FILE: str = "router.json"


# --------------------------------------------------------------------------------------------
# Config
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RecipeConfig(RunConfig):
    """The router recipe's own choices, shared by training and every ablation of it (the base
    of :class:`RouterConfig` and :class:`~regime_core.experiments.ablations.AblationConfig`).

    ``tie_rule`` and ``label_k`` are the label rule of :func:`regime_core.router.outcome_labels`.
    Ties are excluded by default (``config.ROUTER_TRAIN_TIE_RULE``): where q and union rank the
    target alike the decision cannot matter, so those items carry no label; the router then
    learns ``P(union better | the two differ)``, and ``p > 0.5`` is the expected-gain rule.
    """

    NONE_IS_VALUE: ClassVar[frozenset[str]] = frozenset({"sample_size", "label_k"})

    tie_rule: str = declared(config.ROUTER_TRAIN_TIE_RULE, Choice(TIE_RULES))
    """the label where q and union rank the target alike: q, union or exclude"""
    label_k: int | None = declared(None, Nullable(integer(1)))
    """None labels by rank (union wins when it ranks the target higher); a number k labels by hit@k
    (union wins when it hits and q misses)
    """
    n_splits: int = declared(config.CV_FOLDS, integer(2))
    """folds of the router's cross-fitting"""
    bridge_source: str = declared(config.BRIDGE_SOURCE, Choice(config.BRIDGE_SOURCES))
    """the passage the router and its union query read as the bridge: gold (the gold hop-1 passage)
    or retrieved (the question's top-1 passage)
    """
    selector: str = declared(config.SELECTOR, Choice(config.SELECTORS))
    """the sentence of the bridge the router reads and the union query adds as B_rel: rule (the
    hand-weighted rule), learned (a logistic regression trained on 2WikiMultiHopQA's gold
    sentences, cross-fitted there), gold (the dataset's gold B_rel, an oracle) or first (the
    bridge's first sentence)
    """
    alpha_rule: str = declared(config.ALPHA_RULE, Choice(config.ALPHA_RULES))
    """how the bridge weight α of the union query is chosen on each dataset (the labels, the router
    and its evaluation all use it)

    - fixed: α = alpha everywhere, the paper's rule
    - calibrated: α = c·R(S), R(S) the dataset's median spread ratio σ_q/σ_B; c fitted on the
      training dataset (cross-fitted per fold there, the labels built at each fold's α) and
      applied unchanged, label-free, to every other dataset (regime_core.retrieval.alpha_rule)
    """

    @property
    def label_rule(self) -> str:
        return describe_label_rule(tie_rule=self.tie_rule, k=self.label_k)


@dataclass(frozen=True)
class RouterConfig(RecipeConfig):
    """Everything that defines a router training run (and so the deployed model): the recipe
    (:class:`RecipeConfig`) on one ``dataset`` with one ``encoder``."""

    dataset: str = declared(TRAIN_DATASET, Text())
    """the dataset the router is trained on"""
    encoder: str = declared(config.ENCODER, Text())
    """the encoder whose vectors retrieval uses"""

    def validate(self) -> None:
        check_datasets((self.dataset,), f"{type(self).__name__}.dataset")
        super().validate()


def load_routing_data(
    cfg: RunConfig,
    datasets: Sequence[str],
    encoder: str,
    bridge_source: str,
    context: Context | None = None,
) -> dict[str, RoutingData]:
    """Sample every one of ``datasets`` (seeded, by ``cfg``) and build its routing data under
    ``cfg.retrieval`` (:func:`routing_data_of`)."""
    context = resolve(context)
    samples = context.samples(cfg, datasets)
    return routing_data_of(samples, cfg.retrieval, encoder, bridge_source, context)


def routing_data_of(
    samples: Mapping[str, Sample],
    settings: RetrievalSettings,
    encoder: str,
    bridge_source: str,
    context: Context,
) -> dict[str, RoutingData]:
    """Each sample's :class:`~regime_core.router.training.RoutingData` with ``encoder`` under
    ``settings``, reading the bridge ``bridge_source`` (gold hop 1 or the retrieved top-1)."""
    return {
        dataset: build_routing_data(
            sample,
            settings,
            encoder=context.encoder(encoder, sample.corpus),
            store=context.embeddings,
            encoder_name=encoder,
            bridge_source=bridge_source,
        )
        for dataset, sample in samples.items()
    }


# --------------------------------------------------------------------------------------------
# Selector quality
# --------------------------------------------------------------------------------------------


def selector_quality(
    data: Mapping[str, RoutingData], cfg: RecipeConfig, context: Context | None = None
) -> SelectorQuality:
    """Agreement of the selector with the gold relation sentence, and union retrieval with the
    selected vs the gold ``B_rel`` (same encoder, pool and α as each ``data``)."""
    context = resolve(context)
    retrieval = {}
    without: dict[str, int] = {}
    for dataset, d in data.items():
        comparison, without[dataset] = gold_b_rel_retrieval(
            d,
            encoder=context.encoder(d.encoder, d.sample.corpus),
            store=context.embeddings,
            bootstrap=cfg.bootstrap,
        )
        if comparison is not None:
            retrieval[dataset] = comparison
    return SelectorQuality(agreement_table([d.table for d in data.values()]), retrieval, without)


# --------------------------------------------------------------------------------------------
# Training
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RouterTrainResult:
    """A cross-fitted router on the training dataset and its deployment refit."""

    config: RecipeConfig
    data: RoutingData
    fitted: FittedRouting
    outcome: RoutingOutcome
    auc: float  # out-of-fold p(union) against the labels (labelled items)
    #: the α rule's weights the data were scored at (None: the fixed rule, not recorded)
    alpha_weights: AlphaWeights | None = None

    def alpha_rule_record(self) -> dict[str, Any]:
        """The model file's ``alpha_rule`` (:mod:`regime_core.router.io`): the rule, and for
        ``calibrated`` the deployment scale ``c`` and the training questions' spread ratio."""
        w = self.alpha_weights
        if self.config.alpha_rule == "fixed" or w is None or w.c is None:
            return {"rule": "fixed"}
        return {
            "rule": "calibrated",
            "scale": float(w.c),
            "training_ratio": float(w.ratio[self.data.dataset]),
        }

    @property
    def router(self) -> RegimeRouter:
        return self.fitted.router

    @property
    def label_counts(self) -> dict[str, int]:
        labels = self.fitted.labels
        return {
            "q": int(np.sum(labels == 0)),
            "union": int(np.sum(labels == 1)),
            "labelled": int(np.sum(labels != EXCLUDED)),
            "excluded": int(np.sum(labels == EXCLUDED)),
        }

    def coefficients(self) -> dict[str, float]:
        """The deployment router's standardised coefficients by feature name."""
        names = [FEATURE_NAMES[c] for c in self.fitted.columns]
        return dict(zip(names, self.router.coef_[0].tolist(), strict=True))

    def to_numbers(self) -> dict[str, Any]:
        table = self.data.table
        return {
            "dataset": self.data.dataset,
            "n": self.data.n,
            "n_available": self.data.sample.n_available,
            "n_tiny_pool": self.data.sample.n_tiny_pool,
            "n_parallel": int(table["parallel"].sum()),
            "labels": {**self.label_counts, "ties": self.fitted.n_ties},
            "label_rule": self.config.label_rule,
            "alpha_rule": self.config.alpha_rule,
            "alpha": float(self.router.alpha),
            "auc_out_of_fold": self.auc,
            "outcome": self.outcome.to_numbers(),
            "by_type": _frame_numbers(breakdown(self.data, self.outcome, "native_type")),
            "by_regime": _frame_numbers(breakdown(self.data, self.outcome, "regime")),
            "coefficients": self.coefficients(),
            "intercept": float(self.router.intercept_[0]),
            **hop1_numbers(self.data, self.outcome, bootstrap=self.config.bootstrap),
        }


def _frame_numbers(frame: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """A breakdown's rows by their first column's value (``.`` is not allowed in record keys)."""
    key = str(frame.columns[0])
    out: dict[str, dict[str, Any]] = {}
    for row in frame.to_dict(orient="records"):
        name = str(row.pop(key)).replace(".", "_")
        out[name] = {k: (int(v) if k == "n" else float(v)) for k, v in row.items()}
    return out


def fit_recipe(
    X: np.ndarray,
    rank_q: np.ndarray,
    rank_union: np.ndarray,
    cfg: RecipeConfig,
    *,
    alpha: float | None = None,
    columns: Sequence[int] | None = None,
    folds: np.ndarray | None = None,
) -> FittedRouting:
    """:func:`~regime_core.router.training.fit_routing` with ``cfg``'s label rule, folds and seed
    (at ``cfg.alpha`` unless ``alpha`` is given, on the feature ``columns``; ``folds``: the
    folds of a selector cross-fitted on these questions,
    :attr:`~regime_core.router.training.RoutingData.folds`)."""
    return fit_routing(
        X,
        rank_q,
        rank_union,
        alpha=cfg.alpha if alpha is None else alpha,
        tie_rule=cfg.tie_rule,
        label_k=cfg.label_k,
        n_splits=cfg.n_splits,
        seed=cfg.seed,
        columns=columns,
        folds=folds,
    )


def train_on_data(data: RoutingData, cfg: RecipeConfig) -> RouterTrainResult:
    """Labels, cross-fitting, evaluation and the deployment refit on prepared routing data;
    pure given ``data`` (whose ``B_rel`` is its selector's, and whose folds, when that selector
    was cross-fitted on these questions, the router's cross-fitting keeps)."""
    table = data.table
    fitted = fit_recipe(
        data.X,
        table["rank_q"].to_numpy(),
        table["rank_union"].to_numpy(),
        cfg,
        alpha=float(data.settings.alpha),  # cfg.alpha, or the α the rule deploys on ``data``
        folds=data.folds,
    )
    outcome = evaluate_routing(
        data.hit_q,
        data.hit_union,
        threshold_decisions(fitted.probability, fitted.router),
        fitted.probability,
        dataset=data.dataset,
        k=cfg.k,
        bootstrap=cfg.bootstrap,
    )
    auc = out_of_fold_auc(fitted.labels, fitted.probability)
    return RouterTrainResult(cfg, data, fitted, outcome, auc)


def train_router(
    cfg: RouterConfig | None = None, context: Context | None = None
) -> RouterTrainResult:
    """Train the router on ``cfg.dataset``: retrieval outcomes with the selected ``B_rel``,
    outcome labels, cross-fitted probabilities, routed hit@k against always-q, always-union and
    the oracle (:mod:`regime_core.router.evaluation`), and the deployment refit on every
    labelled item.

    The dataset must be prepared (``regime data prepare``), unless ``context`` gives examples."""
    cfg = cfg or RouterConfig()
    data = load_routing_data(cfg, (cfg.dataset,), cfg.encoder, cfg.bridge_source, context)
    chosen = with_selector(data, cfg, context, train_dataset=cfg.dataset)
    weights = recipe_weights(chosen, cfg, train_dataset=cfg.dataset)
    result = train_on_data(weights.apply(chosen)[cfg.dataset], cfg)
    return dataclasses.replace(result, alpha_weights=weights)


def recipe_protocol(cfg: RecipeConfig, train_dataset: str = TRAIN_DATASET) -> AlphaRuleProtocol:
    """The calibrated rule's protocol under the recipe: its k, folds and seed."""
    return AlphaRuleProtocol(
        train_dataset=train_dataset, k=cfg.k, n_splits=cfg.n_splits, seed=cfg.seed
    )


def recipe_weights(
    data: Mapping[str, RoutingData],
    cfg: RecipeConfig,
    *,
    train_dataset: str = TRAIN_DATASET,
    scale: float | None = None,
    ratios: Mapping[str, np.ndarray] | None = None,
    hits: np.ndarray | None = None,
) -> AlphaWeights:
    """The bridge weights of ``cfg.alpha_rule`` on ``data`` (the routing data after the
    selector: the calibrated rule's ratios read the ``B_rel`` the union query adds), with the
    recipe's protocol (:func:`~regime_core.router.bridge_weight.alpha_weights`, which takes
    ``ratios`` and ``hits`` when the caller has them)."""
    return alpha_weights(
        data,
        cfg.alpha_rule,
        alpha=float(cfg.alpha),
        train_dataset=train_dataset,
        protocol=recipe_protocol(cfg, train_dataset),
        scale=scale,
        ratios=ratios,
        hits=hits,
    )


def save_trained_router(result: RouterTrainResult, path: str | os.PathLike[str]) -> Path:
    """Write the deployment router with what it was trained on (config, sample hash, labels)."""
    cfg = result.config
    return save_router(
        result.router,
        path,
        dataset=result.data.dataset,
        label_rule=cfg.label_rule,
        alpha_rule=result.alpha_rule_record(),
        extra={
            "config": cfg.to_dict(),
            "config_hash": cfg.config_hash(),
            "split": cfg.split,
            "bridge_source": cfg.bridge_source,
            "ids_hash": result.data.sample.ids_hash,
            "n_available": result.data.sample.n_available,
            "n_tiny_pool": result.data.sample.n_tiny_pool,
            "labels": {**result.label_counts, "ties": result.fitted.n_ties},
            "parallel_items_included": int(result.data.table["parallel"].sum()),
            "selector": result.data.selector,
            "alpha_rule": cfg.alpha_rule,
        },
    )


# --------------------------------------------------------------------------------------------
# The selector knob, and every selector measured at three levels
# --------------------------------------------------------------------------------------------


def selector_inputs(
    data: Mapping[str, RoutingData], context: Context | None = None
) -> dict[str, SelectorData]:
    """Per dataset, the sentence features and vectors of every bridge its routing data reads
    (:func:`~regime_core.router.selector_choices.selector_data`, through the context's
    store and the data's own encoder)."""
    context = resolve(context)
    return {
        dataset: selector_data(
            d,
            encoder=context.encoder(d.encoder, d.sample.corpus),
            store=context.embeddings,
            regime_rules=d.settings.regime_rules,
        )
        for dataset, d in data.items()
    }


def recipe_folds(data: RoutingData, inputs: SelectorData, cfg: RecipeConfig) -> np.ndarray:
    """The training dataset's folds under ``cfg``'s label rule, folds and seed
    (:func:`~regime_core.router.learned_selector.selector_folds`): the router's own folds of
    the items its label rule labels under the rule's ``B_rel``, the tied items spread over the
    same folds, stratified by "the gold sentence is the first"."""
    return selector_folds(
        data.table["rank_q"].to_numpy(),
        data.table["rank_union"].to_numpy(),
        inputs.gold == 0,
        tie_rule=cfg.tie_rule,
        label_k=cfg.label_k,
        n_splits=cfg.n_splits,
        seed=cfg.seed,
    )


def with_selector(
    data: Mapping[str, RoutingData],
    cfg: RecipeConfig,
    context: Context | None = None,
    *,
    train_dataset: str = TRAIN_DATASET,
    inputs: Mapping[str, SelectorData] | None = None,
) -> dict[str, RoutingData]:
    """The rule's routing data (``load_routing_data``) with ``cfg.selector``'s ``B_rel``: the
    rule's is returned as it is; ``learned`` is cross-fitted on ``train_dataset`` (which must be
    among ``data``) and applied zero-shot to the others. ``inputs``: the selector data, when the
    caller has it already."""
    if cfg.selector == "rule":
        return dict(data)
    inputs = inputs if inputs is not None else selector_inputs(data, context)
    learned = cfg.selector not in ("gold", "first")
    folds = None
    if learned:
        folds = recipe_folds(data[train_dataset], inputs[train_dataset], cfg)
    choices = choose(
        inputs,
        {d: x.table["b_rel_index"].to_numpy() for d, x in data.items()},
        train_dataset=train_dataset,
        folds=folds,
        variants=(cfg.selector,) if learned else (),
    )
    return {d: reselected(x, inputs[d], choices, cfg.selector) for d, x in data.items()}


@dataclass(frozen=True)
class SelectorComparison:
    """Every knob value's router: ``data[selector][dataset]`` the routing data with its ``B_rel``,
    ``trained[selector]`` the router cross-fitted on the training dataset (and its deployment
    fit, applied zero-shot elsewhere), and the three levels measured (``study``)."""

    study: SelectionStudy
    data: Mapping[str, Mapping[str, RoutingData]]
    trained: Mapping[str, RouterTrainResult]


def compare_selectors(
    data: Mapping[str, RoutingData],
    cfg: RecipeConfig,
    context: Context | None = None,
    *,
    train_dataset: str = TRAIN_DATASET,
) -> SelectorComparison:
    """Every selector on every dataset of ``data`` (the rule's routing data): its choices (every
    learned variant too), and for each knob value the router trained with it on
    ``train_dataset`` (cross-fitted there, on the selector's folds) and applied zero-shot to the
    others; then the three levels against the gold ``B_rel``
    (:mod:`regime_core.router.selector_evaluation`). The rule's router is exactly
    ``train_on_data(data[train_dataset], cfg)``."""
    inputs = selector_inputs(data, context)
    choices = choose(
        inputs,
        {d: x.table["b_rel_index"].to_numpy() for d, x in data.items()},
        train_dataset=train_dataset,
        folds=recipe_folds(data[train_dataset], inputs[train_dataset], cfg),
    )
    by_selector: dict[str, dict[str, RoutingData]] = {}
    trained: dict[str, RouterTrainResult] = {}
    outcomes: dict[str, dict[str, RoutingOutcome]] = {d: {} for d in data}
    for selector in config.SELECTORS:
        chosen = {d: reselected(x, inputs[d], choices, selector) for d, x in data.items()}
        result = train_on_data(chosen[train_dataset], cfg)
        by_selector[selector], trained[selector] = chosen, result
        for dataset, d in chosen.items():
            outcomes[dataset][selector] = (
                result.outcome
                if dataset == train_dataset
                else apply_router(result.router, d, bootstrap=cfg.bootstrap)
            )
    datasets = {
        dataset: measure_dataset(
            {s: by_selector[s][dataset] for s in config.SELECTORS},
            inputs[dataset],
            choices,
            outcomes[dataset],
            bootstrap=cfg.bootstrap,
        )
        for dataset in data
    }
    study = SelectionStudy(
        train_dataset=train_dataset,
        selector=cfg.selector,
        k=cfg.k,
        alpha=float(cfg.alpha),
        choices=choices,
        datasets=datasets,
    )
    return SelectorComparison(study, by_selector, trained)
