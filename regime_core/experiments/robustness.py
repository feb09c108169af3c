"""Robustness: every claim's verdict under every reading of the paper we find plausible.

The paper's abstract leaves choices open (which names make P1/P2, which pool, what knocking
``B_rel`` out of a one-sentence bridge means, how ties label the router, ...). Each is a knob of
:mod:`regime_core.config` with a default (our *primary reading*). Here every claim of
``paper_claims.yml`` is re-judged, by the same verdict rules
(:func:`~regime_core.runner.claim_record.judge_values`), under every combination of the knobs
that bear on it: a specification curve
(Simonsohn, Simmons and Nelson 2020) or multiverse (Steegen et al. 2016).

Per claim we report the readings judged, how many reproduce the claim (``holding``), their
``share``, the verdict of each, and the knob that moves the verdict most: for every knob, the
share of pairs of readings that differ in that knob alone and get different verdicts (its
*flip rate*); the knob with the highest flip rate is ``most_sensitive_knob`` (``"none"`` when no
knob flips anything). A reading whose dataset level has a degenerate predicate
(:data:`regime_core.config.DEGENERATE_SHARE`) is no evidence about the regimes: it is listed
with the verdict ``degenerate`` and left out of the share.

Cost: everything is computed from outcome tables built once per pool mode (every arm, both
encoders, every item: tiny pools and one-sentence bridges are columns, not separate runs) and
from routing data built once per (pool, tiny pools, bridge source) under the rule; each other
``B_rel`` selector swaps the sentence on the same geometry (a column, not a rerun), from
sentence features and vectors computed once per (dataset, bridge source); every vector comes
from the embedding store, so a warm store encodes nothing new.
"""

from __future__ import annotations

import dataclasses
import itertools
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from regime_core import config
from regime_core.data.regimes import PREDICATE_NAMES, RegimeRules, regime_table
from regime_core.experiments.common import (
    EXPERIMENT_ENCODERS,
    ExperimentConfig,
    RunConfig,
    as_tuple,
    positive_int,
)
from regime_core.experiments.context import Context, resolve
from regime_core.experiments.outcomes import POOLED, collect_outcomes, evidence_datasets
from regime_core.experiments.router_train import (
    TRAIN_DATASET,
    TRANSFER_DATASETS,
    RecipeConfig,
    RouterConfig,
    load_routing_data,
    recipe_folds,
    recipe_weights,
    selector_inputs,
    train_on_data,
)
from regime_core.experiments.t1_auc_margin import MARGINS, T1Config, analyse_t1
from regime_core.experiments.t2_regime_decomposition import T2Config, analyse_t2
from regime_core.experiments.t3_brel_knockout import T3Config, analyse_t3
from regime_core.paper import Claim, load_claims
from regime_core.router import TIE_RULES
from regime_core.router.evaluation import Bootstrap, RoutingOutcome, paired_hits
from regime_core.router.selector_evaluation import (
    SelectorData,
    choose,
    cross_fitted,
    reselected,
)
from regime_core.router.training import RoutingData, apply_router
from regime_core.runner.claim_record import judge_values
from regime_core.schema import Example

ClaimConfig = TypeVar("ClaimConfig", bound=ExperimentConfig)

#: The verdict of a reading that is no evidence (its dataset level has a degenerate predicate).
DEGENERATE = "degenerate"
#: The verdict of a reading that cannot be computed on this data (e.g. too few router labels of
#: one class for cross-fitting in a small sample); its ``reason`` column says why.
NOT_JUDGED = "not judged"
#: The arms the multiverse retrieves once per pool mode.
MULTIVERSE_ARMS: tuple[str, ...] = ("q", "bridge", "union", "knockout")
#: The pooled dataset level of the T2/T3 readings (the other levels are the datasets, one by one).
LEVEL_POOLED = "pooled"


@dataclass(frozen=True)
class RobustnessConfig(ExperimentConfig):
    """The multiverse's grid. Each tuple lists the values a knob takes; the primary reading is
    the config's own value of each knob (``pool``, ``tiny_pools``, ``knockout_single``,
    ``predicate_names``: the defaults of every claim page).

    ``t2_resamples``: T2's verdict reads only Δ and the exact McNemar p, never a bootstrap CI, so
    its readings use fewer resamples (the CIs shown for T2 readings are coarser, verdicts
    identical). ``primary_encoder``: the encoder of every routing reading, of T2's plotted
    estimate and of T3's primary reading (the encoder the claim pages report).
    """

    encoders: tuple[str, ...] = EXPERIMENT_ENCODERS
    """the encoders the claims are judged under"""
    primary_encoder: str = config.ENCODER
    """the encoder of every routing reading, of T2's plotted estimate and of T3's primary one"""
    pools: tuple[str, ...] = config.POOL_MODES
    """the pool modes the readings take"""
    tiny_pool_rules: tuple[str, ...] = config.TINY_POOL_RULES
    """the tiny-pool rules the readings take"""
    predicate_name_rules: tuple[str, ...] = tuple(PREDICATE_NAMES)
    """the predicate names the readings take"""
    knockout_single_rules: tuple[str, ...] = config.KNOCKOUT_SINGLE_RULES
    """the one-sentence knockouts the readings take"""
    margins: tuple[str, ...] = MARGINS
    """the T1 margins the readings take"""
    tie_rules: tuple[str, ...] = TIE_RULES
    """the router tie rules the readings take"""
    bridge_sources: tuple[str, ...] = config.BRIDGE_SOURCES
    """the bridges the routing readings read"""
    selectors: tuple[str, ...] = config.SELECTORS
    """the B_rel selectors the routing readings take"""
    alpha_rules: tuple[str, ...] = config.ALPHA_RULES
    """the α rules the routing readings take (the router retrained at each rule's weights)"""
    oracle_datasets: tuple[str, ...] = config.ORACLE_DATASETS
    """the datasets whose oracle gap the readings of oracle_gap judge"""
    oracle_dataset: str = config.ORACLE_DATASET
    """the dataset whose oracle − routed gap the claim oracle_gap is judged on (the abstract's
    oracle gap names none); the training set, cross-fitted, is our primary reading
    """
    t2_resamples: int = 1_000
    """bootstrap resamples of each T2 reading; fewer suffice, as its verdict reads only the
    difference and the exact McNemar p (its intervals are coarser)
    """
    t1_min_cell_n: int = 30
    """T1's min_cell_n in every reading"""
    t2_min_cell_n: int = 30
    """T2's min_cell_n in every reading"""

    def validate(self) -> None:
        super().validate()
        where = type(self).__name__
        for name, allowed in _GRIDS.items():
            value = as_tuple(getattr(self, name))
            object.__setattr__(self, name, value)
            if not value or len(set(value)) != len(value):
                raise ValueError(f"{where}.{name} must list distinct values, got {value}")
            bad = [v for v in value if v not in allowed]
            if bad:
                raise ValueError(f"{where}.{name}: {bad} not among {tuple(allowed)}")
        for name in ("t2_resamples", "t1_min_cell_n", "t2_min_cell_n"):
            if not positive_int(getattr(self, name)):
                raise ValueError(
                    f"{where}.{name} must be a positive integer, got {getattr(self, name)!r}"
                )
        if self.oracle_dataset not in config.ORACLE_DATASETS:
            raise ValueError(
                f"{where}.oracle_dataset is {self.oracle_dataset!r}, not one of "
                f"{config.ORACLE_DATASETS}"
            )
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


#: The values each grid of :class:`RobustnessConfig` may list.
_GRIDS: dict[str, Sequence[str]] = {
    "pools": config.POOL_MODES,
    "tiny_pool_rules": config.TINY_POOL_RULES,
    "predicate_name_rules": tuple(PREDICATE_NAMES),
    "knockout_single_rules": config.KNOCKOUT_SINGLE_RULES,
    "margins": MARGINS,
    "tie_rules": TIE_RULES,
    "bridge_sources": config.BRIDGE_SOURCES,
    "selectors": config.SELECTORS,
    "oracle_datasets": config.ORACLE_DATASETS,
    "alpha_rules": config.ALPHA_RULES,
}


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
}
#: Each knob's meaning, as the book's table of knobs shows it.
KNOB_MEANINGS: dict[str, str] = {
    knob: "the datasets pooled, or each dataset on its own"
    if knob == "level"
    else config.meaning([_KNOB_FIELDS[knob]], knob).text  # type: ignore[union-attr]
    for knob in primary_reading()
}


# T1 is about AUC, not hit@k: its primary reading keeps tiny pools (T1Config's default).
_PRIMARY_OVERRIDES: dict[str, dict[str, str]] = {"t1_r2": {"tiny_pools": T1Config.tiny_pools}}


#: Which routing outcome and comparison each router claim reads (``oracle_gap``: on the
#: reading's ``oracle_dataset``).
ROUTER_CLAIMS: dict[str, tuple[str, str]] = {
    "router_2wiki": (TRAIN_DATASET, "routed_vs_q"),
    "router_musique": ("musique", "routed_vs_q"),
    "router_hotpotqa": ("hotpotqa", "routed_vs_q"),
    "oracle_gap": (TRAIN_DATASET, "oracle_vs_routed"),
    "router_vs_union_2wiki": (TRAIN_DATASET, "routed_vs_union"),
    "router_vs_union_musique": ("musique", "routed_vs_union"),
    "router_vs_union_hotpotqa": ("hotpotqa", "routed_vs_union"),
}
#: The claim judged on the rule's routing against the gold ``B_rel``'s, part by dataset.
NEAR_ORACLE = "selector_near_oracle"
#: The learned value of the selector knob.
LEARNED = "learned"

#: The claims the multiverse does not judge again under other readings, and why (the
#: paper-against-ours page shows the reason). Claims whose rule is ``untestable`` or ``bound`` (a
#: timing of the machine) are left out by their rule: no reading changes them.
OUTSIDE_MULTIVERSE: dict[str, str] = {
    "levels_2wiki": "a level, not a difference: the readings of the router's gain on the same "
    "questions are those of routed − always-q",
    "levels_musique": "a level, not a difference: the readings of the router's gain on the same "
    "questions are those of routed − always-q",
    "alpha_rule": "itself a sweep, over every α of the grid for each dataset and encoder (the "
    "ablations)",
    "pool_invariance": "itself a comparison of the two pool modes (the ablations)",
    "calibrated_alpha": "itself a comparison of two rules for α on every dataset and encoder; "
    "the multiverse's alpha_rule knob varies the router's rule for the other claims",
}


def claim_knobs(cfg: RobustnessConfig) -> dict[str, dict[str, tuple[str, ...]]]:
    """The knobs that bear on each claim id and the values each takes."""
    levels = (LEVEL_POOLED, *cfg.datasets)
    routing = {
        "tie_rule": cfg.tie_rules,
        "pool": cfg.pools,
        "tiny_pools": cfg.tiny_pool_rules,
        "bridge_source": cfg.bridge_sources,
        "alpha_rule": cfg.alpha_rules,
    }
    knobs: dict[str, dict[str, tuple[str, ...]]] = {
        "t1_r2": {"margin": cfg.margins, "pool": cfg.pools, "tiny_pools": cfg.tiny_pool_rules},
        "t2_split": {
            "predicate_names": cfg.predicate_name_rules,
            "pool": cfg.pools,
            "tiny_pools": cfg.tiny_pool_rules,
            "level": levels,
        },
        "t3_knockout": {
            "predicate_names": cfg.predicate_name_rules,
            "knockout_single": cfg.knockout_single_rules,
            "pool": cfg.pools,
            "tiny_pools": cfg.tiny_pool_rules,
            "encoder": cfg.encoders,
            "level": levels,
        },
    }
    for claim_id in ROUTER_CLAIMS:
        knobs[claim_id] = {**routing, "selector": cfg.selectors}
    knobs["oracle_gap"]["oracle_dataset"] = cfg.oracle_datasets
    # rule against gold by its definition: every routing knob but the selector
    knobs[NEAR_ORACLE] = dict(routing)
    return knobs


def readings(knobs: Mapping[str, Sequence[str]]) -> list[dict[str, str]]:
    """Every combination of the knobs' values, in a stable order (the first knob slowest)."""
    names = list(knobs)
    return [dict(zip(names, values, strict=True)) for values in itertools.product(*knobs.values())]


# --------------------------------------------------------------------------------------------
# Result
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RobustnessResult:
    """One row per (claim, reading) in ``table``: the knob values (NaN where a knob does not
    bear on the claim), ``primary``, ``estimate``, ``ci_lo``, ``ci_hi``, ``p``, ``n`` (where
    the claim has them), ``verdict`` and ``holds`` (verdict is *reproduced*)."""

    config: RobustnessConfig
    table: pd.DataFrame
    knobs: Mapping[str, Mapping[str, tuple[str, ...]]]
    seconds: float
    n_encoded: int = 0
    n_cached: int = 0
    tiny_pool_items: Mapping[str, int] = field(default_factory=dict)

    def summary(self) -> dict[str, dict[str, Any]]:
        """Per claim: readings, holding, share, most_sensitive_knob, flip rates, verdicts."""
        return {
            claim_id: summarise_claim(
                self.table[self.table["claim"] == claim_id], list(self.knobs[claim_id])
            )
            for claim_id in self.knobs
        }

    def to_numbers(self) -> dict[str, Any]:
        return {
            "claims": self.summary(),
            "knobs": {
                c: {k: ", ".join(v) for k, v in knobs.items()} for c, knobs in self.knobs.items()
            },
            "primary_reading": primary_reading(self.config),
            "readings_total": len(self.table),
            # the run's time and the store's warmth are not results: the notebook prints them
            "tiny_pool_items": {k: int(v) for k, v in self.tiny_pool_items.items()},
        }


def summarise_claim(rows: pd.DataFrame, knob_names: Sequence[str]) -> dict[str, Any]:
    """The robustness summary of one claim's readings (see the module docstring); pure."""
    judged = rows[~rows["verdict"].isin((DEGENERATE, NOT_JUDGED))]
    holding = int(judged["holds"].sum()) if len(judged) else 0
    flips: dict[str, float] = {}
    for knob in knob_names:
        others = [k for k in knob_names if k != knob]
        pairs = differing = 0
        groups = judged.groupby(others, dropna=False, sort=False) if others else [(None, judged)]
        for _, group in groups:
            verdicts = group["verdict"].tolist()
            for a, b in itertools.combinations(verdicts, 2):
                pairs += 1
                differing += a != b
        flips[knob] = round(differing / pairs, 4) if pairs else 0.0
    best = max(flips.items(), key=lambda item: item[1], default=("none", 0.0))
    primary = rows[rows["primary"]]
    return {
        "readings": len(judged),
        "holding": holding,
        "share": round(holding / len(judged), 4) if len(judged) else 0.0,
        "degenerate_readings": int((rows["verdict"] == DEGENERATE).sum()),
        "not_judged_readings": int((rows["verdict"] == NOT_JUDGED).sum()),
        "most_sensitive_knob": best[0] if best[1] > 0 else "none",
        "flip_rates": flips,
        "verdicts": {str(v): int(n) for v, n in judged["verdict"].value_counts().items()},
        "primary_verdict": str(primary["verdict"].iloc[0]) if len(primary) else "none",
    }


# --------------------------------------------------------------------------------------------
# The multiverse
# --------------------------------------------------------------------------------------------


def _with_reading_columns(
    table: pd.DataFrame, examples: Sequence[Example], cfg: RobustnessConfig, pool: str
) -> pd.DataFrame:
    """Add per-question columns every knob filters on: ``tiny``, ``single_sentence`` (the
    bridge has no sentence besides its gold ``B_rel``) and P1/P2 under each predicate reading."""
    by_id = {ex.id: ex for ex in examples}
    per_item = []
    for names in PREDICATE_NAMES:
        regimes = regime_table(examples, RegimeRules(predicate_names=names)).set_index("id")
        per_item.append(
            regimes[["p1", "p2"]].rename(columns={"p1": f"p1@{names}", "p2": f"p2@{names}"})
        )
    items = pd.concat(per_item, axis=1)
    gold = regime_table(examples).set_index("id")
    settings = cfg.experiment_config(pool).retrieval
    items["tiny"] = [settings.is_tiny_pool(by_id[i]) for i in items.index]
    items["single_sentence"] = [
        len(by_id[i].bridge.sentences) == 1 and not pd.isna(gold.loc[i, "b_rel_index"])
        for i in items.index
    ]
    return table.merge(items, left_on="qid", right_index=True, how="left")


def reading_table(table: pd.DataFrame, reading: Mapping[str, str]) -> pd.DataFrame:
    """The outcome rows one reading keeps, with its P1/P2 as ``p1``/``p2``; pure."""
    part = table
    names = reading.get("predicate_names", config.PREDICATE_NAMES)
    part = part.assign(p1=part[f"p1@{names}"], p2=part[f"p2@{names}"])
    if reading.get("tiny_pools", "keep") == "exclude":
        part = part[~part["tiny"]]
    if reading.get("knockout_single") == "exclude":
        part = part[~((part["arm"] == "knockout") & part["single_sentence"])]
    level = reading.get("level", LEVEL_POOLED)
    if level != LEVEL_POOLED:
        part = part[part["dataset"] == level]
    return part


def _level_is_degenerate(part: pd.DataFrame, level: str) -> bool:
    if part.empty:
        return True
    evidence = evidence_datasets(part.drop_duplicates(["dataset", "qid"])).pooled_datasets
    return not evidence if level == LEVEL_POOLED else level not in evidence


def _t1_values(table: pd.DataFrame, reading: Mapping[str, str], cfg: RobustnessConfig) -> dict:
    t1 = T1Config(
        datasets=cfg.datasets,
        encoders=cfg.encoders,
        margin=reading["margin"],
        min_cell_n=cfg.t1_min_cell_n,
        # T1's verdict counts cells by their R² point estimate; no bootstrap CI is needed
        bootstrap_resamples=1,
        seed=cfg.seed,
    )
    result = analyse_t1(reading_table(table, reading), t1)
    fitted = result.fitted
    direction = int(
        ((fitted["spearman_rho"] > 0) & (fitted["spearman_p"] < 1 - cfg.confidence)).sum()
    )
    return {
        "passing": result.n_passing("probit"),
        "total": len(fitted),
        "direction": direction,
        "estimate": float(fitted["r2_probit"].median()) if len(fitted) else np.nan,
    }


def _claim_config(cls: type[ClaimConfig], cfg: RobustnessConfig, **own: Any) -> ClaimConfig:
    """T2's or T3's config on the multiverse's datasets and encoders, k, seed and confidence."""
    return cls(**{name: getattr(cfg, name) for name in _CLAIM_SHARED}, **own)


#: What every claim reading takes from the multiverse's own settings.
_CLAIM_SHARED: tuple[str, ...] = ("datasets", "encoders", "k", "seed", "confidence")


def _t2_values(table: pd.DataFrame, reading: Mapping[str, str], cfg: RobustnessConfig) -> dict:
    part = reading_table(table, reading)
    if _level_is_degenerate(part, reading["level"]):
        return {DEGENERATE: True}
    t2 = _claim_config(
        T2Config, cfg, bootstrap_resamples=cfg.t2_resamples, min_cell_n=cfg.t2_min_cell_n
    )
    result = analyse_t2(part, t2)
    verdicts = result.verdicts[result.verdicts["comparison"] == "union_vs_q"]
    cells = result.cells
    b_cell = cells[
        (cells["dataset"] == "all")
        & (cells["encoder"] == cfg.primary_encoder)
        & ~cells["p1"]
        & cells["p2"]
    ]
    out: dict[str, Any] = {
        "holds": result.holds("union_vs_q"),
        "parts": {str(r.encoder): bool(r.holds) for r in verdicts.itertuples()},
    }
    if len(b_cell):
        row = b_cell.iloc[0]
        out.update(
            estimate=float(row["union_vs_q_diff"]),
            ci_lo=float(row["union_vs_q_ci_lo"]),
            ci_hi=float(row["union_vs_q_ci_hi"]),
            p=float(row["union_vs_q_p_holm"]),
            n=int(row["n"]),
        )
    return out


def _t3_values(
    table: pd.DataFrame, reading: Mapping[str, str], cfg: RobustnessConfig, cache: dict
) -> dict:
    # analyse_t3 judges every encoder at once: one call per reading without the encoder knob
    key = tuple(sorted((k, v) for k, v in reading.items() if k != "encoder"))
    if key not in cache:
        part = reading_table(table, reading)
        if _level_is_degenerate(part, reading["level"]):
            cache[key] = None
        else:
            t3 = _claim_config(T3Config, cfg, bootstrap_resamples=cfg.bootstrap_resamples)
            cache[key] = analyse_t3(part, t3).comparisons
    comparisons = cache[key]
    if comparisons is None:
        return {DEGENERATE: True}
    row = comparisons[
        (comparisons["comparison"] == "union_vs_knockout")
        & (comparisons["dataset"] == POOLED)
        & (comparisons["encoder"] == reading["encoder"])
    ]
    if row.empty:
        return {DEGENERATE: True}
    r = row.iloc[0]
    return {
        "estimate": float(r["drop"]),
        "ci_lo": float(r["ci_lo"]),
        "ci_hi": float(r["ci_hi"]),
        "p": float(r["p_holm"]),
        "n": int(r["n"]),
    }


def _routing_values(outcome: RoutingOutcome, comparison: str) -> dict[str, Any]:
    c = outcome.comparison(comparison)
    return {
        "estimate": float(c.diff),
        "ci_lo": float(c.ci_lo),
        "ci_hi": float(c.ci_hi),
        "p": float(c.p_value),
        "n": int(outcome.n),
    }


def _routing_values_paired(a: RoutingOutcome, b: RoutingOutcome) -> dict[str, Any]:
    """Routed hit@k under ``a`` against routed hit@k under ``b`` on the same questions (exact
    McNemar), as a part's values."""
    c = paired_hits(a.hits["routed"], b.hits["routed"], ("a", "b"), bootstrap=Bootstrap())
    return {
        "estimate": float(c.diff),
        "ci_lo": float(c.ci_lo),
        "ci_hi": float(c.ci_hi),
        "p": float(c.p_value),
        "n": int(c.n),
    }


RoutingKey = tuple[str, str, str, str, str, str]


def _selector_inputs(
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


def _routing_outcomes(
    cfg: RobustnessConfig, context: Context
) -> dict[RoutingKey, dict[str, RoutingOutcome] | str]:
    """``{(tie_rule, pool, tiny_pools, bridge_source, selector, alpha_rule): {dataset:
    outcome}}``: the router trained (cross-fitted) on 2Wiki with the selector's ``B_rel`` at the
    α rule's weights (:func:`~regime_core.experiments.router_train.recipe_weights`, computed once
    per selector's data) and applied zero-shot to the others with it, under each reading; the
    reason (a string) where the router cannot be trained. The routing data are built once per
    (pool, tiny pools, bridge source) under the rule; every other selector only swaps ``B_rel``
    (:func:`~regime_core.router.selector_evaluation.reselected`), and the learned one is
    cross-fitted again under each tie rule (its folds are the router's)."""
    datasets = [d for d in (TRAIN_DATASET, *TRANSFER_DATASETS) if d in cfg.datasets]
    if TRAIN_DATASET not in datasets:
        return {}
    out: dict[RoutingKey, dict[str, RoutingOutcome] | str] = {}
    cache: dict[tuple[str, str], SelectorData] = {}
    # "keep" first: its samples hold every item, so the other rule's are cut from its cache
    tiny_rules = sorted(cfg.tiny_pool_rules, key=lambda rule: rule != "keep")
    grid = itertools.product(cfg.pools, tiny_rules, cfg.bridge_sources)
    for pool, tiny, source in grid:
        reading = dataclasses.replace(cfg, pool=pool, tiny_pools=tiny)
        data = load_routing_data(reading, datasets, cfg.primary_encoder, source, context)
        others = [s for s in cfg.selectors if s != "rule"]
        inputs = _selector_inputs(cache, data, source, context) if others else {}
        rule_choices = {d: x.table["b_rel_index"].to_numpy() for d, x in data.items()}
        fixed = choose(inputs, rule_choices, train_dataset=TRAIN_DATASET,
                       variants=(LEARNED,) if LEARNED in others else ())  # fmt: skip
        # every selector's data that no tie rule changes: all but the learned one on 2Wiki
        chosen = {
            s: {d: x if s == "rule" else reselected(x, inputs[d], fixed, s)
                for d, x in data.items() if not fixed.cross_fitted(d, s)}
            for s in cfg.selectors
        }  # fmt: skip
        weighted: dict[tuple[str, str, str], dict[str, RoutingData]] = {}
        for tie_rule in cfg.tie_rules:
            router_cfg = RouterConfig(
                **{f.name: getattr(reading, f.name) for f in dataclasses.fields(RunConfig)},
                dataset=TRAIN_DATASET,
                encoder=cfg.primary_encoder,
                tie_rule=tie_rule,
                bridge_source=source,
            )
            if LEARNED in others:  # cross-fitted on the router's folds under this tie rule
                folds = recipe_folds(data[TRAIN_DATASET], inputs[TRAIN_DATASET], router_cfg)
                choices = cross_fitted(fixed, inputs[TRAIN_DATASET], folds)
                chosen[LEARNED][TRAIN_DATASET] = reselected(
                    data[TRAIN_DATASET], inputs[TRAIN_DATASET], choices, LEARNED
                )
            for selector, alpha_rule in itertools.product(cfg.selectors, cfg.alpha_rules):
                key = (tie_rule, pool, tiny, source, selector, alpha_rule)
                ruled = dataclasses.replace(router_cfg, alpha_rule=alpha_rule)
                # no tie rule changes a selector's B_rel but the learned one's on 2Wiki
                cache_key = (selector, alpha_rule, tie_rule if selector == LEARNED else "")
                if cache_key not in weighted:
                    weights = recipe_weights(chosen[selector], ruled, train_dataset=TRAIN_DATASET)
                    weighted[cache_key] = weights.apply(chosen[selector])
                rows = weighted[cache_key]
                try:
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


def run_robustness(
    cfg: RobustnessConfig | None = None,
    context: Context | None = None,
    *,
    claims: Sequence[Claim] | None = None,
) -> RobustnessResult:
    """Judge every claim under every reading of :func:`claim_knobs` (see the module docstring).

    ``claims`` replaces the repository's ``paper_claims.yml``.
    """
    cfg = cfg or RobustnessConfig()
    context = resolve(context)
    started = time.perf_counter()
    by_id = {c.id: c for c in (claims if claims is not None else load_claims())}
    knobs = {c: k for c, k in claim_knobs(cfg).items() if c in by_id}

    tables: dict[str, pd.DataFrame] = {}
    n_encoded = n_cached = 0
    tiny_items: dict[str, int] = {}
    if any(c in knobs for c in ("t1_r2", "t2_split", "t3_knockout")):
        for pool in cfg.pools:
            outcomes = collect_outcomes(cfg.experiment_config(pool), MULTIVERSE_ARMS, context)
            n_encoded += outcomes.n_encoded
            n_cached += outcomes.n_cached
            all_examples = [ex for s in outcomes.samples.values() for ex in s.examples]
            tables[pool] = _with_reading_columns(outcomes.table, all_examples, cfg, pool)
            if pool == "question":
                items = tables[pool].drop_duplicates(["dataset", "qid"])
                tiny_items = {
                    str(d): int(n) for d, n in items.groupby("dataset")["tiny"].sum().items()
                }
    routing = {}
    if any(c in knobs for c in (*ROUTER_CLAIMS, NEAR_ORACLE)):
        routing = _routing_outcomes(cfg, context)

    primary = primary_reading(cfg)
    t3_cache: dict = {}
    rows: list[dict[str, Any]] = []
    for claim_id, claim_knob_values in knobs.items():
        claim = by_id[claim_id]
        wanted = {**primary, **_PRIMARY_OVERRIDES.get(claim_id, {})}
        for reading in readings(claim_knob_values):
            values = _claim_values(claim, reading, cfg, tables, routing, t3_cache)
            row: dict[str, Any] = {"claim": claim_id, **reading}
            row["primary"] = all(wanted[k] == v for k, v in reading.items())
            if values is None:
                continue  # e.g. a dataset this run does not hold
            if values.get(DEGENERATE):
                row.update(verdict=DEGENERATE, holds=False)
            elif NOT_JUDGED in values:
                row.update(verdict=NOT_JUDGED, holds=False, reason=values[NOT_JUDGED])
            else:
                verdict = judge_values(claim, values).verdict
                shown = _shown_values(values)
                row.update(
                    {k: shown.get(k) for k in ("estimate", "ci_lo", "ci_hi", "p", "n")},
                    verdict=verdict,
                    holds=verdict == "reproduced",
                )
            rows.append(row)
    table = pd.DataFrame(rows)
    for column in ("estimate", "ci_lo", "ci_hi", "p", "n"):
        if column not in table:
            table[column] = np.nan
    return RobustnessResult(
        config=cfg,
        table=table,
        knobs=knobs,
        seconds=time.perf_counter() - started,
        n_encoded=n_encoded,
        n_cached=n_cached,
        tiny_pool_items=tiny_items,
    )


def _shown_values(values: Mapping[str, Any]) -> Mapping[str, Any]:
    """The values a reading's row shows: its own, or, for a comparison judged part by part, the
    part whose interval reaches lowest (for a no-loss claim, the part nearest to failing)."""
    parts = values.get("parts")
    if "estimate" in values or not parts or not all(isinstance(v, Mapping) for v in parts.values()):
        return values
    return min(parts.values(), key=lambda part: float(part["ci_lo"]))


def _part_labels(claim: Claim) -> dict[str, str]:
    """A claim judged per dataset: each dataset (the second part of its estimate's record key,
    ``selection.<dataset>...``) and the part's label in ``paper_claims.yml``."""
    parts = claim.ours.get("parts") or {}
    return {str(keys["estimate"]).split(".")[1]: str(label) for label, keys in parts.items()}


def _claim_values(
    claim: Claim,
    reading: Mapping[str, str],
    cfg: RobustnessConfig,
    tables: Mapping[str, pd.DataFrame],
    routing: Mapping[RoutingKey, Mapping[str, RoutingOutcome] | str],
    t3_cache: dict,
) -> dict[str, Any] | None:
    claim_id = claim.id
    if claim_id == "t1_r2":
        return _t1_values(tables[reading["pool"]], reading, cfg)
    if claim_id == "t2_split":
        return _t2_values(tables[reading["pool"]], reading, cfg)
    if claim_id == "t3_knockout":
        return _t3_values(tables[reading["pool"]], reading, cfg, t3_cache)
    base = (reading["tie_rule"], reading["pool"], reading["tiny_pools"], reading["bridge_source"])
    alpha_rule = reading.get("alpha_rule", config.ALPHA_RULE)
    if claim_id == NEAR_ORACLE:
        rule, gold = (routing.get((*base, s, alpha_rule)) for s in ("rule", "gold"))
        if rule is None or gold is None:
            return None  # the run takes no rule or no gold reading
        if isinstance(rule, str):
            return {NOT_JUDGED: rule}
        if isinstance(gold, str):
            return {NOT_JUDGED: gold}
        return {"parts": {label: _routing_values_paired(rule[d], gold[d])
                          for d, label in _part_labels(claim).items() if d in rule}}  # fmt: skip
    dataset, comparison = ROUTER_CLAIMS[claim_id]
    dataset = reading.get("oracle_dataset", dataset) if claim_id == "oracle_gap" else dataset
    found = routing.get((*base, reading["selector"], alpha_rule), {})
    if isinstance(found, str):
        return {NOT_JUDGED: found}
    outcome = found.get(dataset)
    return None if outcome is None else _routing_values(outcome, comparison)
