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

import itertools
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from regime_core import config
from regime_core.data.regimes import PREDICATE_NAMES, RegimeRules, regime_table
from regime_core.experiments.common import ExperimentConfig
from regime_core.experiments.context import Context, resolve
from regime_core.experiments.outcomes import POOLED, collect_outcomes, evidence_datasets
from regime_core.experiments.robustness_grid import (
    DEGENERATE,
    EXAMPLE_READINGS,
    LEVEL_POOLED,
    NOT_JUDGED,
    PRIMARY_OVERRIDES,
    SELECTION,
    RobustnessConfig,
    claim_knobs,
    claim_reading,
    primary_reading,
    readings,
)
from regime_core.experiments.robustness_routing import (
    RoutingKey,
    paired_routing_values,
    routing_outcomes,
    routing_values,
)
from regime_core.experiments.t1_auc_margin import T1Config, analyse_t1
from regime_core.experiments.t2_regime_decomposition import T2Config, analyse_t2
from regime_core.experiments.t3_brel_knockout import T3Config, analyse_t3
from regime_core.paper import Claim, load_claims, load_roles
from regime_core.router.evaluation import RoutingOutcome
from regime_core.runner.claim_record import judge_values
from regime_core.runner.ours import OURS_FIELDS, Comparison, Holds, Ours, Parts, Share
from regime_core.schema import Example

ClaimConfig = TypeVar("ClaimConfig", bound=ExperimentConfig)

#: The arms the multiverse retrieves once per pool mode.
MULTIVERSE_ARMS: tuple[str, ...] = ("q", "bridge", "union", "knockout")


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
        if judged.empty:  # no reading judged (e.g. no dataset of the claim in the run): none flip
            flips[knob] = 0.0
            continue
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


@dataclass(frozen=True)
class Reading:
    """A claim under one reading: our side, as the verdict rules read it
    (:mod:`regime_core.runner.ours`), and what the reading's row shows beside its verdict
    (``estimate``, ``ci_lo``, ``ci_hi``, ``p``, ``n``, where it has them)."""

    ours: Ours
    shown: Mapping[str, Any]

    @classmethod
    def of(cls, ours: Comparison | Parts) -> Reading:
        """A comparison shows itself; one judged part by part, the part whose interval reaches
        lowest (for a no-loss claim, the part nearest to failing)."""
        part = min(ours.parts.values(), key=lambda c: c.ci_lo) if isinstance(ours, Parts) else ours
        return cls(ours, part.summary())


@dataclass(frozen=True)
class Unjudged:
    """A reading with no verdict: :data:`DEGENERATE`, or :data:`NOT_JUDGED` with the reason."""

    verdict: str
    reason: str | None = None


def _t1_values(table: pd.DataFrame, reading: Mapping[str, str], cfg: RobustnessConfig) -> Reading:
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
    median = float(fitted["r2_probit"].median()) if len(fitted) else np.nan
    return Reading(Share(result.n_passing("probit"), len(fitted), direction), {"estimate": median})


def _claim_config(cls: type[ClaimConfig], cfg: RobustnessConfig, **own: Any) -> ClaimConfig:
    """T2's or T3's config on the multiverse's datasets and encoders, k, seed and confidence."""
    return cls(**{name: getattr(cfg, name) for name in _CLAIM_SHARED}, **own)


#: What every claim reading takes from the multiverse's own settings.
_CLAIM_SHARED: tuple[str, ...] = ("datasets", "encoders", "k", "seed", "confidence")


def _t2_values(
    table: pd.DataFrame, reading: Mapping[str, str], cfg: RobustnessConfig
) -> Reading | Unjudged:
    part = reading_table(table, reading)
    if _level_is_degenerate(part, reading["level"]):
        return Unjudged(DEGENERATE)
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
    holds = Holds(
        bool(result.holds("union_vs_q")),
        {str(r.encoder): bool(r.holds) for r in verdicts.itertuples()},
    )
    shown = _row_values(b_cell.iloc[0], "union_vs_q_diff", "union_vs_q_") if len(b_cell) else {}
    return Reading(holds, shown)


def _t3_values(
    table: pd.DataFrame, reading: Mapping[str, str], cfg: RobustnessConfig, cache: dict
) -> Reading | Unjudged:
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
        return Unjudged(DEGENERATE)
    row = comparisons[
        (comparisons["comparison"] == "union_vs_knockout")
        & (comparisons["dataset"] == POOLED)
        & (comparisons["encoder"] == reading["encoder"])
    ]
    if row.empty:
        return Unjudged(DEGENERATE)
    return Reading.of(Comparison(**_row_values(row.iloc[0], "drop")))


def _row_values(row: pd.Series, estimate: str, prefix: str = "") -> dict[str, Any]:
    """A reading's values from a row of T2's cells or T3's comparisons: its ``estimate``
    column, the ``<prefix>ci_lo``, ``<prefix>ci_hi`` and ``<prefix>p_holm`` columns and ``n``."""
    return {
        "estimate": float(row[estimate]),
        "ci_lo": float(row[f"{prefix}ci_lo"]),
        "ci_hi": float(row[f"{prefix}ci_hi"]),
        "p": float(row[f"{prefix}p_holm"]),
        "n": int(row["n"]),
    }


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
    # every reading samples the same prepared examples: parsed once for the whole multiverse
    context = resolve(context).with_examples_read(cfg.datasets, cfg.split)
    started = time.perf_counter()
    by_id = {c.id: c for c in (claims if claims is not None else load_claims())}
    knobs = claim_knobs(cfg, list(by_id.values()))
    reads = {claim_reading(by_id[c]) for c in knobs}

    tables: dict[str, pd.DataFrame] = {}
    n_encoded = n_cached = 0
    tiny_items: dict[str, int] = {}
    if reads & set(EXAMPLE_READINGS):
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
    if reads - set(EXAMPLE_READINGS):
        routing = routing_outcomes(cfg, context)

    primary = primary_reading(cfg)
    t3_cache: dict = {}
    rows: list[dict[str, Any]] = []
    for claim_id, claim_knob_values in knobs.items():
        claim = by_id[claim_id]
        wanted = {**primary, **PRIMARY_OVERRIDES.get(claim.run, {})}
        for reading in readings(claim_knob_values):
            found = _claim_values(claim, reading, cfg, tables, routing, t3_cache)
            row: dict[str, Any] = {"claim": claim_id, **reading}
            row["primary"] = all(wanted[k] == v for k, v in reading.items())
            if found is None:
                continue  # e.g. a dataset this run does not hold
            if isinstance(found, Unjudged):
                reason = {} if found.reason is None else {"reason": found.reason}
                row.update(verdict=found.verdict, holds=False, **reason)
            else:
                verdict = judge_values(claim, found.ours).verdict
                row.update(
                    {k: found.shown.get(k) for k in OURS_FIELDS},
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
) -> Reading | Unjudged | None:
    read = claim_reading(claim)
    if read == "t1_auc_margin":
        return _t1_values(tables[reading["pool"]], reading, cfg)
    if read == "t2_regime_decomposition":
        return _t2_values(tables[reading["pool"]], reading, cfg)
    if read == "t3_brel_knockout":
        return _t3_values(tables[reading["pool"]], reading, cfg, t3_cache)
    base = (reading["tie_rule"], reading["pool"], reading["tiny_pools"], reading["bridge_source"])
    alpha_rule = reading.get("alpha_rule", config.ALPHA_RULE)
    item_set = reading.get("item_set", config.ITEM_SET)
    if read == SELECTION:
        rule, gold = (routing.get((*base, s, alpha_rule, item_set)) for s in ("rule", "gold"))
        if rule is None or gold is None:
            return None  # the run takes no rule or no gold reading
        if isinstance(rule, str):
            return Unjudged(NOT_JUDGED, rule)
        if isinstance(gold, str):
            return Unjudged(NOT_JUDGED, gold)
        return Reading.of(
            Parts(
                {
                    label: paired_routing_values(rule[d], gold[d])
                    for d, label in _part_labels(claim).items()
                    if d in rule
                }
            )
        )
    # the dataset of the role its data fills (the oracle gap's: the reading's oracle dataset)
    dataset = reading.get("oracle_dataset", load_roles()[claim.data[0]].paper or "")
    found = routing.get((*base, reading["selector"], alpha_rule, item_set), {})
    if isinstance(found, str):
        return Unjudged(NOT_JUDGED, found)
    outcome = found.get(dataset)
    return None if outcome is None else Reading.of(routing_values(outcome, claim.comparison))
