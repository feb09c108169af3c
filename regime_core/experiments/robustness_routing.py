"""The routing readings of the multiverse: the router retrained (cross-fitted) and applied
zero-shot under every reading of the routing knobs."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Mapping

import numpy as np

from regime_core.data.item_sets import ALL
from regime_core.experiments.common import RunConfig
from regime_core.experiments.context import Context
from regime_core.experiments.robustness_grid import LEARNED, RobustnessConfig
from regime_core.experiments.router_train import (
    TRAIN_DATASET,
    TRANSFER_DATASETS,
    RecipeConfig,
    RouterConfig,
    load_routing_data,
    recipe_folds,
    recipe_protocol,
    recipe_weights,
    selector_inputs,
    train_on_data,
)
from regime_core.retrieval.alpha_rule import grid_hits
from regime_core.retrieval.spread import spread_ratios
from regime_core.router.evaluation import Bootstrap, RoutingOutcome, paired_hits
from regime_core.router.selector_choices import (
    SelectorData,
    choose,
    cross_fitted,
    reselected,
)
from regime_core.router.training import RoutingData, apply_router
from regime_core.runner.ours import Comparison
from regime_core.stats import PairedComparison


def comparison_values(c: PairedComparison, n: int) -> Comparison:
    """A paired comparison as the values a reading is judged on (``n``: its questions)."""
    return Comparison(float(c.diff), float(c.ci_lo), float(c.ci_hi), float(c.p_value), int(n))


def routing_values(outcome: RoutingOutcome, comparison: str) -> Comparison:
    """One comparison of a routing outcome as a reading's values."""
    return comparison_values(outcome.comparison(comparison), outcome.n)


def paired_routing_values(a: RoutingOutcome, b: RoutingOutcome) -> Comparison:
    """Routed hit@k under ``a`` against routed hit@k under ``b`` on the same questions (exact
    McNemar), as a part's values."""
    c = paired_hits(a.hits["routed"], b.hits["routed"], ("a", "b"), bootstrap=Bootstrap())
    return comparison_values(c, c.n)


RoutingKey = tuple[str, str, str, str, str, str, str]


def cached_selector_inputs(
    cache: dict[tuple[str, str], SelectorData],
    data: Mapping[str, RoutingData],
    source: str,
    context: Context,
) -> dict[str, SelectorData]:
    """Each dataset's selector data, computed once per (dataset, bridge source) for the largest
    sample asked for and cut to the items of every other reading (the sentences, their features
    and vectors depend on the question and its bridge only, never on the pool)."""
    out: dict[str, SelectorData] = {}
    missing: dict[str, RoutingData] = {}
    for dataset, d in data.items():
        cached = cache.get((dataset, source))
        part = (
            cached.subset(tuple(d.table["qid"]), tuple(ex.bridge_pid for ex in d.examples))
            if cached is not None
            else None
        )
        if part is None:
            missing[dataset] = d
        else:
            out[dataset] = part
    for dataset, inputs in selector_inputs(missing, context).items():
        cache[(dataset, source)] = inputs
        out[dataset] = inputs
    return out


#: What the α rule reads of one question under one ``B_rel``: its spread ratio and, on the
#: training dataset, its union hits on the protocol's grid (``(g,)``; None elsewhere).
QuestionInputs = tuple[float, np.ndarray | None]


def shared_alpha_inputs(
    memo: dict[tuple[object, ...], QuestionInputs],
    data: Mapping[str, RoutingData],
    reading: tuple[str, ...],
    cfg: RecipeConfig,
) -> tuple[dict[str, np.ndarray], np.ndarray | None]:
    """Each dataset's spread ratios and the training dataset's grid hits for the calibrated
    rule, read question by question from ``memo`` (by ``reading``, dataset, question and its
    ``B_rel`` sentence), the questions no earlier reading holds computed and kept. A question's
    candidates and vectors do not depend on which others are sampled (the corpus is the
    split's), so an item set, a tiny-pool rule or a selector cross-fitted on other folds
    computes only the questions it reads with another ``B_rel``."""
    protocol = recipe_protocol(cfg)
    ratios: dict[str, np.ndarray] = {}
    hits = None
    for dataset, d in data.items():
        chosen = zip(d.table["qid"], d.table["b_rel_index"].tolist(), strict=True)
        keys = [(*reading, dataset, qid, b_rel) for qid, b_rel in chosen]
        missing = [i for i, key in enumerate(keys) if key not in memo]
        if missing:
            part = d.geometry.rows(np.asarray(missing, dtype=np.int64))
            new_ratios = spread_ratios(part, protocol.candidates)
            train = dataset == TRAIN_DATASET
            new_hits = grid_hits(part, protocol.grid, protocol.k) if train else None
            for j, i in enumerate(missing):
                memo[keys[i]] = (float(new_ratios[j]), None if new_hits is None else new_hits[:, j])
        found = [memo[key] for key in keys]
        ratios[dataset] = np.array([ratio for ratio, _ in found], dtype=np.float64)
        if dataset == TRAIN_DATASET:
            hits = np.array([h for _, h in found], dtype=bool).reshape(len(keys), -1).T
    return ratios, hits


def routing_outcomes(
    cfg: RobustnessConfig, context: Context
) -> dict[RoutingKey, dict[str, RoutingOutcome] | str]:
    """``{(tie_rule, pool, tiny_pools, bridge_source, selector, alpha_rule, item_set): {dataset:
    outcome}}``: the router trained (cross-fitted) on 2Wiki with the selector's ``B_rel`` at the
    α rule's weights (:func:`~regime_core.experiments.router_train.recipe_weights`, computed once
    per selector's data) and applied zero-shot to the others with it, under each reading; the
    reason (a string) where the router cannot be trained. The routing data are built once per
    (item set, pool, tiny pools, bridge source) under the rule (on the item set's items of
    every dataset: the router is trained on the set's 2WikiMultiHopQA items too); every other
    selector only swaps ``B_rel``
    (:func:`~regime_core.router.selector_choices.reselected`), and the learned one is
    cross-fitted again under each tie rule (its folds are the router's)."""
    datasets = [d for d in (TRAIN_DATASET, *TRANSFER_DATASETS) if d in cfg.datasets]
    if TRAIN_DATASET not in datasets:
        return {}
    out: dict[RoutingKey, dict[str, RoutingOutcome] | str] = {}
    cache: dict[tuple[str, str], SelectorData] = {}
    alpha_inputs: dict[tuple[object, ...], QuestionInputs] = {}
    # "all" and "keep" first: their samples hold every item, so the others' are cut from the cache
    item_sets = sorted(cfg.item_sets, key=lambda item_set: item_set != ALL)
    tiny_rules = sorted(cfg.tiny_pool_rules, key=lambda rule: rule != "keep")
    grid = itertools.product(item_sets, cfg.pools, tiny_rules, cfg.bridge_sources)
    for item_set, pool, tiny, source in grid:
        reading = dataclasses.replace(cfg, pool=pool, tiny_pools=tiny, item_set=item_set)
        data = load_routing_data(reading, datasets, cfg.primary_encoder, source, context)
        others = [s for s in cfg.selectors if s != "rule"]
        inputs = cached_selector_inputs(cache, data, source, context) if others else {}
        rule_choices = {d: x.table["b_rel_index"].to_numpy() for d, x in data.items()}
        fixed = choose(
            inputs,
            rule_choices,
            train_dataset=TRAIN_DATASET,
            variants=(LEARNED,) if LEARNED in others else (),
        )
        # every selector's data that no tie rule changes: all but the learned one on 2Wiki
        chosen = {
            s: {
                d: x if s == "rule" else reselected(x, inputs[d], fixed, s)
                for d, x in data.items()
                if not fixed.cross_fitted(d, s)
            }
            for s in cfg.selectors
        }
        weighted: dict[tuple[str, str, str], dict[str, RoutingData]] = {}
        for tie_rule in cfg.tie_rules:
            router_cfg = RouterConfig(
                **{f.name: getattr(reading, f.name) for f in dataclasses.fields(RunConfig)},
                dataset=TRAIN_DATASET,
                encoder=cfg.primary_encoder,
                tie_rule=tie_rule,
                bridge_source=source,
            )
            learned_problem = None  # the learned selector cannot be cross-fitted: say why
            if LEARNED in others:  # cross-fitted on the router's folds under this tie rule
                try:
                    folds = recipe_folds(data[TRAIN_DATASET], inputs[TRAIN_DATASET], router_cfg)
                except ValueError as err:  # too few labels of a class (a small item set)
                    learned_problem = str(err)
                else:
                    choices = cross_fitted(fixed, inputs[TRAIN_DATASET], folds)
                    chosen[LEARNED][TRAIN_DATASET] = reselected(
                        data[TRAIN_DATASET], inputs[TRAIN_DATASET], choices, LEARNED
                    )
            for selector, alpha_rule in itertools.product(cfg.selectors, cfg.alpha_rules):
                key = (tie_rule, pool, tiny, source, selector, alpha_rule, item_set)
                if selector == LEARNED and learned_problem is not None:
                    out[key] = learned_problem
                    continue
                ruled = dataclasses.replace(router_cfg, alpha_rule=alpha_rule)
                # no tie rule changes a selector's B_rel but the learned one's on 2Wiki
                cache_key = (selector, alpha_rule, tie_rule if selector == LEARNED else "")
                try:
                    if cache_key not in weighted:  # the calibrated rule cross-fits c: it may fail
                        ratios, hits = (
                            shared_alpha_inputs(
                                alpha_inputs, chosen[selector], (pool, source, selector), ruled
                            )
                            if alpha_rule != "fixed"
                            else ({}, None)
                        )
                        weights = recipe_weights(
                            chosen[selector],
                            ruled,
                            train_dataset=TRAIN_DATASET,
                            ratios=ratios,
                            hits=hits,
                        )
                        weighted[cache_key] = weights.apply(chosen[selector])
                    rows = weighted[cache_key]
                    trained = train_on_data(rows[TRAIN_DATASET], ruled)
                except ValueError as err:  # too few labels of a class to cross-fit: say so
                    out[key] = str(err)
                    continue
                outcomes = {TRAIN_DATASET: trained.outcome}
                for dataset in datasets[1:]:
                    outcomes[dataset] = apply_router(
                        trained.router, rows[dataset], bootstrap=cfg.bootstrap
                    )
                out[key] = outcomes
    return out
