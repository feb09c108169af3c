"""The multiverse's grid: its config, the knobs that bear on each claim and the values they take,
and our primary reading (:mod:`~regime_core.experiments.robustness` judges every reading).

What a claim reads decides its knobs (:func:`claim_reading`); one that reads nothing the
multiverse varies says why in ``paper_claims.yml`` (``multiverse.outside``)."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from regime_core import config
from regime_core.data.regimes import PREDICATE_NAMES, RegimeRules
from regime_core.experiments.common import (
    EXPERIMENT_ENCODERS,
    ExperimentConfig,
    RunConfig,
    check_distinct,
)
from regime_core.experiments.router_train import RecipeConfig, RouterConfig
from regime_core.experiments.t1_auc_margin import MARGINS, T1Config
from regime_core.inputs import Choice, Items, Text
from regime_core.inputs.configs import NAMES, declared, field_kind, grid, integer
from regime_core.paper import Claim, load_claims
from regime_core.router import TIE_RULES

#: The verdict of a reading that is no evidence (its dataset level has a degenerate predicate).
DEGENERATE = "degenerate"
#: The verdict of a reading that cannot be computed on this data (e.g. too few router labels of
#: one class for cross-fitting in a small sample); its ``reason`` column says why.
NOT_JUDGED = "not judged"
#: The pooled dataset level of the T2/T3 readings (the other levels are the datasets, one by one).
LEVEL_POOLED = "pooled"


@dataclass(frozen=True)
class RobustnessConfig(ExperimentConfig):
    """The multiverse's grid. Each tuple lists the values a knob takes; the primary reading is
    the config's own value of each knob (``pool``, ``tiny_pools``, ``knockout_single``,
    ``predicate_names``: the defaults of every claim page)."""

    encoders: tuple[str, ...] = declared(EXPERIMENT_ENCODERS, NAMES)
    """the encoders the claims are judged under"""
    primary_encoder: str = declared(config.ENCODER, Text())
    """the encoder of every routing reading, of T2's plotted estimate and of T3's primary one (the
    encoder the claim pages report)"""
    pools: tuple[str, ...] = grid(config.POOL_MODES)
    """the pool modes the readings take"""
    tiny_pool_rules: tuple[str, ...] = grid(config.TINY_POOL_RULES)
    """the tiny-pool rules the readings take"""
    predicate_name_rules: tuple[str, ...] = grid(tuple(PREDICATE_NAMES))
    """the predicate names the readings take"""
    knockout_single_rules: tuple[str, ...] = grid(config.KNOCKOUT_SINGLE_RULES)
    """the one-sentence knockouts the readings take"""
    margins: tuple[str, ...] = grid(MARGINS)
    """the T1 margins the readings take"""
    tie_rules: tuple[str, ...] = grid(TIE_RULES)
    """the router tie rules the readings take"""
    bridge_sources: tuple[str, ...] = grid(config.BRIDGE_SOURCES)
    """the bridges the routing readings read"""
    selectors: tuple[str, ...] = grid(config.SELECTORS)
    """the B_rel selectors the routing readings take"""
    alpha_rules: tuple[str, ...] = grid(config.ALPHA_RULES)
    """the α rules the routing readings take (the router retrained at each rule's weights)"""
    item_sets: tuple[str, ...] = grid(config.ITEM_SETS)
    """the item sets the routing readings take (regime_core.data.item_sets): the router
    retrained and applied on each set's items of every dataset"""
    oracle_datasets: tuple[str, ...] = grid(config.ORACLE_DATASETS)
    """the datasets whose oracle gap the readings of the oracle-gap claim judge"""
    oracle_dataset: str = declared(config.ORACLE_DATASET, Choice(config.ORACLE_DATASETS))
    """the dataset whose oracle − routed gap the oracle-gap claim is judged on (the abstract's
    oracle gap names none); the training set, cross-fitted, is our primary reading
    """
    t2_resamples: int = declared(1_000, integer(1))
    """bootstrap resamples of each T2 reading; fewer suffice, as its verdict reads only the
    difference and the McNemar p (its intervals are coarser, its verdicts identical)
    """
    t1_min_cell_n: int = declared(30, integer(1))
    """T1's min_cell_n in every reading"""
    t2_min_cell_n: int = declared(30, integer(1))
    """T2's min_cell_n in every reading"""

    def validate(self) -> None:
        super().validate()
        where = type(self).__name__
        for item in dataclasses.fields(self):
            if isinstance(
                field_kind(type(self), item.name), Items
            ):  # every grid lists a value once
                check_distinct(getattr(self, item.name), f"{where}.{item.name}")
        if self.primary_encoder not in self.encoders:
            raise ValueError(
                f"{where}.primary_encoder {self.primary_encoder!r} must be one of the encoders "
                f"{self.encoders}"
            )

    def experiment_config(self, pool: str) -> ExperimentConfig:
        """The retrieval config of one pool mode: every item, every knob value as a column."""
        shared = {f.name: getattr(self, f.name) for f in dataclasses.fields(ExperimentConfig)}
        return ExperimentConfig(
            **{**shared, "pool": pool, "tiny_pools": "keep", "knockout_single": "title"}
        )


def primary_reading(cfg: RobustnessConfig | None = None) -> dict[str, str]:
    """Our primary reading: each knob's value in ``cfg`` (default: the defaults of the configs,
    the value every claim page reports)."""
    cfg = cfg or RobustnessConfig()
    return {
        "margin": T1Config.margin,
        "pool": cfg.pool,
        "tiny_pools": cfg.tiny_pools,
        "predicate_names": cfg.predicate_names,
        "knockout_single": cfg.knockout_single,
        "encoder": cfg.primary_encoder,
        "level": LEVEL_POOLED,
        "tie_rule": RecipeConfig.tie_rule,
        "bridge_source": RecipeConfig.bridge_source,
        "selector": RecipeConfig.selector,
        "oracle_dataset": cfg.oracle_dataset,
        "alpha_rule": RecipeConfig.alpha_rule,
        "item_set": cfg.item_set,
    }


#: Where each knob is a config field (its meaning is the field's docstring); ``level``, the
#: multiverse's own dataset level, is none.
_KNOB_FIELDS: dict[str, type] = {
    "margin": T1Config,
    "pool": RunConfig,
    "tiny_pools": RunConfig,
    "predicate_names": RegimeRules,
    "knockout_single": RunConfig,
    "encoder": RouterConfig,
    "tie_rule": RecipeConfig,
    "bridge_source": RecipeConfig,
    "selector": RecipeConfig,
    "oracle_dataset": RobustnessConfig,
    "alpha_rule": RecipeConfig,
    "item_set": RunConfig,
}
#: Each knob's meaning, as the book's table of knobs shows it.
KNOB_MEANINGS: dict[str, str] = {
    knob: "the datasets pooled, or each dataset on its own"
    if knob == "level"
    else config.meaning([_KNOB_FIELDS[knob]], knob).text  # type: ignore[union-attr]
    for knob in primary_reading()
}


# T1 is about AUC, not hit@k: its primary reading keeps tiny pools (T1Config's default).
PRIMARY_OVERRIDES: dict[str, dict[str, str]] = {
    "t1_auc_margin": {"tiny_pools": T1Config.tiny_pools}
}

#: What a claim reads in the multiverse (:func:`claim_reading`), in the order its claims are
#: judged: the examples of each run of T1, T2 and T3, one routing, or two (rule and gold).
EXAMPLE_READINGS: tuple[str, ...] = ("t1_auc_margin", "t2_regime_decomposition", "t3_brel_knockout")
ROUTING = "routing"
SELECTION = "selection"
#: The learned value of the selector knob.
LEARNED = "learned"


def claim_reading(claim: Claim) -> str | None:
    """What the multiverse reads to judge ``claim`` again: a run of :data:`EXAMPLE_READINGS`,
    :data:`ROUTING` (a comparison of routed outcomes), :data:`SELECTION` (routed with the
    rule's ``B_rel`` against with the gold one) or None (outside the multiverse)."""
    if claim.comparison == "rule_vs_gold":
        return SELECTION
    if claim.comparison:
        return ROUTING
    return claim.run if claim.run in EXAMPLE_READINGS else None


def claim_knobs(
    cfg: RobustnessConfig, claims: Sequence[Claim] | None = None
) -> dict[str, dict[str, tuple[str, ...]]]:
    """The knobs that bear on each claim of ``claims`` (the repository's by default) and the
    values each takes, by claim id, grouped by what the claims read (:func:`claim_reading`)."""
    levels = (LEVEL_POOLED, *cfg.datasets)
    routing = {
        "tie_rule": cfg.tie_rules,
        "pool": cfg.pools,
        "tiny_pools": cfg.tiny_pool_rules,
        "bridge_source": cfg.bridge_sources,
        "alpha_rule": cfg.alpha_rules,
        "item_set": cfg.item_sets,
    }
    by_reading: dict[str, dict[str, tuple[str, ...]]] = {
        "t1_auc_margin": {
            "margin": cfg.margins,
            "pool": cfg.pools,
            "tiny_pools": cfg.tiny_pool_rules,
        },
        "t2_regime_decomposition": {
            "predicate_names": cfg.predicate_name_rules,
            "pool": cfg.pools,
            "tiny_pools": cfg.tiny_pool_rules,
            "level": levels,
        },
        "t3_brel_knockout": {
            "predicate_names": cfg.predicate_name_rules,
            "knockout_single": cfg.knockout_single_rules,
            "pool": cfg.pools,
            "tiny_pools": cfg.tiny_pool_rules,
            "encoder": cfg.encoders,
            "level": levels,
        },
        ROUTING: {**routing, "selector": cfg.selectors},
        # rule against gold by its definition: every routing knob but the selector
        SELECTION: dict(routing),
    }
    claims = load_claims() if claims is None else claims
    knobs: dict[str, dict[str, tuple[str, ...]]] = {}
    for reading, reading_knobs in by_reading.items():
        for claim in claims:
            if claim_reading(claim) == reading:
                knobs[claim.id] = dict(reading_knobs)
                if claim.comparison == "oracle_vs_routed":
                    knobs[claim.id]["oracle_dataset"] = cfg.oracle_datasets
    return knobs


def readings(knobs: Mapping[str, Sequence[str]]) -> list[dict[str, str]]:
    """Every combination of the knobs' values, in a stable order (the first knob slowest)."""
    names = list(knobs)
    return [dict(zip(names, values, strict=True)) for values in itertools.product(*knobs.values())]
