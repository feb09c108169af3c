"""T3, the claim of ``paper_claims.yml`` judged on this run (stated there once): the relation
sentence ``B_rel`` and its knockout.

Our reading. Where the bridge is needed (B-dominant items: ¬P1 ∧ P2), compare

* ``union``    = f(q) + α·f(B_rel)                       (the relation sentence added), with
* ``knockout`` = f(q) + α·f(bridge without B_rel)        (everything *but* it), and
* ``entity``   = f(q) + α·f(hop-2 entity as the bridge writes it).

We report the drop hit@k(union) − hit@k(knockout) with a paired bootstrap CI and an McNemar
p (Holm-corrected over every test of the run), per encoder and dataset and pooled, and the same
for union − entity. The entity arm's text is the mention found in the bridge
(:func:`regime_core.data.regimes.bridge_entity_mention`), never the target's title;
``entity_is_title_share`` says how often that mention nevertheless *equals* the title (then the
entity arm queries by the target's name, the design notes' leakage trap).

Subset rules (``T3Config.subset``): :data:`SUBSET_RULES`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from regime_core.experiments import outcomes
from regime_core.experiments.common import (
    ExperimentConfig,
    compare_arms,
    holm_family,
    table_numbers,
)
from regime_core.experiments.context import Context
from regime_core.inputs import Choice
from regime_core.inputs.configs import LEVEL, declared
from regime_core.multiplicity import holm, holm_intervals
from regime_core.paper import claim_where

T3_ARMS: tuple[str, ...] = ("q", "bridge", "union", "knockout", "entity")
T3_COMPARISONS: tuple[tuple[str, str], ...] = (("union", "knockout"), ("union", "entity"))
# The paper's knockout cost as fractions of R@5 (paper_claims.yml, the claim judged on this run).
_PAPER = claim_where(run="t3_brel_knockout")
PAPER_DROP_LOW: float = _PAPER.number("low")
PAPER_DROP_HIGH: float = _PAPER.number("high")
PAPER_P_BELOW: float = _PAPER.number("p_below")

#: The record's numbers of each comparison row, and their types.
COMPARISON_NUMBERS: dict[str, type] = {
    "n": int,
    "hit_a": float,
    "hit_b": float,
    "drop": float,
    "ci_lo": float,
    "ci_hi": float,
    "ci_lo_unadjusted": float,
    "ci_hi_unadjusted": float,
    "p": float,
    "p_holm": float,
    "n_a_better": int,
    "n_b_better": int,
    "significant": bool,
    "in_paper_range": bool,
    "agrees": bool,
}
COMPARISON_COLUMNS: list[str] = [
    "encoder",
    "dataset",
    "comparison",
    "n",
    "hit_a",
    "hit_b",
    "drop",
    "ci_lo",
    "ci_hi",
    "p",
    "n_a_better",
    "n_b_better",
]

SUBSET_RULES: dict[str, str] = {
    "b_dominant": "¬P1 ∧ P2: the question does not name the hop-2 entity, the bridge does",
    "not_p1": "¬P1: the question does not name the hop-2 entity (B-dominant and 'neither')",
    "non_parallel": "every item with a hop order (comparison items left out)",
    "every_item": "every item",
}
"""the questions T3's knockout can be measured on"""


def subset_mask(attrs: pd.DataFrame, rule: str) -> pd.Series:
    """Boolean mask of the items a subset rule keeps; pure (needs ``p1``, ``p2``, ``parallel``)."""
    if rule == "b_dominant":
        return (~attrs["p1"].astype(bool)) & attrs["p2"].astype(bool)
    if rule == "not_p1":
        return ~attrs["p1"].astype(bool)
    if rule == "non_parallel":
        return ~attrs["parallel"].astype(bool)
    return pd.Series(True, index=attrs.index)


@dataclass(frozen=True)
class T3Config(ExperimentConfig):
    """T3's parameters: ``subset`` (a key of :data:`SUBSET_RULES`) and ``significance``."""

    subset: str = declared("b_dominant", Choice(tuple(SUBSET_RULES)))
    """the questions T3's knockout is measured on (a key of SUBSET_RULES)"""
    significance: float = declared(0.05, LEVEL)
    """a knockout loss is significant when positive with a Holm-adjusted p below this"""


@dataclass(frozen=True)
class T3Result:
    """T3's outcome.

    ``comparisons``: one row per (encoder, dataset level, comparison) with ``n`` (subset items
    having both arms), ``hit_a``, ``hit_b``, ``drop`` (= hit_a − hit_b), CI, ``p``, ``p_holm``,
    ``in_paper_range`` (drop within the paper's range) and ``agrees`` (drop > 0 with p_holm
    below the paper's bound). ``hits``: hit@k of every arm on the subset.
    ``entity``: per (encoder, dataset level) the subset size, entity-query count and the
    share whose bridge mention equals the target title.
    """

    config: T3Config
    comparisons: pd.DataFrame
    hits: pd.DataFrame
    entity: pd.DataFrame
    samples: Mapping[str, Mapping[str, Any]]
    evidence: outcomes.Evidence = field(default_factory=outcomes.Evidence)

    def to_numbers(self) -> dict[str, Any]:
        comparisons = table_numbers(
            self.comparisons, ("comparison", "encoder", "dataset"), COMPARISON_NUMBERS
        )
        hits = table_numbers(self.hits, ("encoder", "dataset", "arm"), {"n": int, "hit": float})
        entity: dict[str, Any] = {}
        for row in self.entity.itertuples(index=False):
            entry: dict[str, float] = {
                "subset_n": int(row.subset_n),
                "with_mention": int(row.with_mention),
                "mention_is_title": int(row.mention_is_title),
            }
            if row.with_mention:
                entry["mention_is_title_share"] = float(row.mention_is_title / row.with_mention)
            entity.setdefault(row.encoder, {})[row.dataset] = entry
        pooled = self.comparisons[
            (self.comparisons["dataset"] == outcomes.POOLED)
            & (self.comparisons["comparison"] == "union_vs_knockout")
        ]
        return {
            "k": int(self.config.k),
            "subset": self.config.subset,
            "subset_rule": SUBSET_RULES[self.config.subset],
            "paper": {
                "drop_low": PAPER_DROP_LOW,
                "drop_high": PAPER_DROP_HIGH,
                "p_below": PAPER_P_BELOW,
            },
            "summary": {
                "knockout_agrees_all_encoders": bool(len(pooled)) and bool(pooled["agrees"].all()),
                "knockout_in_range_encoders": int(pooled["in_paper_range"].sum()),
                "encoders": len(pooled),
            },
            "comparisons": comparisons,
            # the tests Holm adjusted together: every comparison, encoder and dataset level
            "holm_family": holm_family(
                self.comparisons[self.comparisons["in_holm_family"]],
                ("comparison", "encoder", "dataset"),
            ),
            "hits": hits,
            "entity": entity,
            "sample": {k: dict(v) for k, v in self.samples.items()},
            "predicate_names": self.config.predicate_names,
            "knockout_single": self.config.knockout_single,
            **self.evidence.numbers(),
        }


def analyse_t3(
    table: pd.DataFrame, cfg: T3Config, samples: outcomes.SampleNumbers = None
) -> T3Result:
    """T3 from an outcome table holding the arms of :data:`T3_ARMS`; pure."""
    hit = f"hit@{cfg.k}"  # the table was collected at cfg.k (run_on_outcomes)
    keys = ["encoder", "dataset", "qid"]
    attrs = table.drop_duplicates(keys).set_index(keys)
    in_subset = subset_mask(attrs, cfg.subset)
    subset_ids = set(attrs.index[in_subset.to_numpy()])
    part = table[[key in subset_ids for key in zip(*(table[k] for k in keys), strict=True)]]
    # A dataset where P1 or P2 is degenerate is no evidence about the regimes: not pooled.
    evidence = outcomes.evidence_datasets(attrs.reset_index())
    pooled_datasets = evidence.pooled_datasets
    pooled_part = part[part["dataset"].isin(pooled_datasets)]
    levels = pd.concat([part, pooled_part.assign(dataset=outcomes.POOLED)], ignore_index=True)

    hits = (
        levels.groupby(["encoder", "dataset", "arm"], sort=True)[hit]
        .agg(["size", "mean"])
        .rename(columns={"size": "n", "mean": "hit"})
        .reset_index()
    )

    rows: list[dict[str, Any]] = []
    for a, b in T3_COMPARISONS:
        if not {a, b} <= set(part["arm"]):
            continue
        wide = outcomes.arm_matrix(part, hit, (a, b))
        pooled_wide = wide[wide["dataset"].isin(pooled_datasets)]
        wide = pd.concat([wide, pooled_wide.assign(dataset=outcomes.POOLED)], ignore_index=True)
        for (encoder, dataset), group in wide.groupby(["encoder", "dataset"], sort=True):
            result = compare_arms(group, a, b, cfg)
            rows.append(
                {
                    "encoder": encoder,
                    "dataset": dataset,
                    "comparison": f"{a}_vs_{b}",
                    "n": result.n,
                    "hit_a": result.mean_a,
                    "hit_b": result.mean_b,
                    "drop": result.diff,
                    "ci_lo": result.ci_lo,
                    "ci_hi": result.ci_hi,
                    "p": result.p_value,
                    "n_a_better": result.n_a_better,
                    "n_b_better": result.n_b_better,
                }
            )
    comparisons = pd.DataFrame(
        rows,
        columns=COMPARISON_COLUMNS,
    )
    # the interval at the level Holm judged each comparison, so it agrees with its Holm p; the
    # 95% interval stays beside it as *_unadjusted. A pooled level of one dataset is that
    # dataset's test again: it is left out of the family and takes its twin's adjusted values
    # (one dataset is never counted twice)
    comparisons["ci_lo_unadjusted"] = comparisons["ci_lo"]
    comparisons["ci_hi_unadjusted"] = comparisons["ci_hi"]
    comparisons["in_holm_family"] = ~outcomes.pooled_twin_mask(
        comparisons["dataset"], pooled_datasets
    )
    comparisons["p_holm"] = np.nan
    family = comparisons[comparisons["in_holm_family"]]
    if len(family):
        index = family.index
        comparisons.loc[index, "p_holm"] = holm(family["p"].to_numpy())
        lo, hi = holm_intervals(
            family["n_a_better"].to_numpy(),
            family["n_b_better"].to_numpy(),
            family["n"].to_numpy(),
            family["p"].to_numpy(),
            cfg.significance,
        )
        comparisons.loc[index, "ci_lo"], comparisons.loc[index, "ci_hi"] = lo, hi
        twins = ~comparisons["in_holm_family"]
        if twins.any():
            own = comparisons.set_index(["comparison", "encoder", "dataset"])
            for i in comparisons.index[twins]:
                row = comparisons.loc[i]
                twin = own.loc[(row["comparison"], row["encoder"], pooled_datasets[0])]
                for column in ("p_holm", "ci_lo", "ci_hi"):
                    comparisons.loc[i, column] = twin[column]
    comparisons["significant"] = (comparisons["drop"] > 0) & (
        comparisons["p_holm"] < cfg.significance
    )
    comparisons["in_paper_range"] = comparisons["drop"].between(PAPER_DROP_LOW, PAPER_DROP_HIGH)
    comparisons["agrees"] = (comparisons["drop"] > 0) & (comparisons["p_holm"] < PAPER_P_BELOW)

    entity_rows = []
    subset_attrs = attrs[in_subset.to_numpy()].reset_index()
    entity_q = part[part["arm"] == "entity"]
    entity_keys = set(zip(*(entity_q[k] for k in keys), strict=True))
    subset_attrs["has_entity_query"] = [
        key in entity_keys for key in zip(*(subset_attrs[k] for k in keys), strict=True)
    ]
    for level in (False, True):
        frame = subset_attrs.assign(dataset=outcomes.POOLED) if level else subset_attrs
        for (encoder, dataset), group in frame.groupby(["encoder", "dataset"], sort=True):
            with_mention = group[group["has_entity_query"]]
            entity_rows.append(
                {
                    "encoder": encoder,
                    "dataset": dataset,
                    "subset_n": len(group),
                    "with_mention": len(with_mention),
                    "mention_is_title": int(with_mention["entity_is_title"].astype(bool).sum()),
                }
            )
    entity = pd.DataFrame(
        entity_rows, columns=["encoder", "dataset", "subset_n", "with_mention", "mention_is_title"]
    )
    return T3Result(cfg, comparisons, hits, entity, dict(samples or {}), evidence)


def run_t3(cfg: T3Config, context: Context | None = None) -> tuple[T3Result, outcomes.Outcomes]:
    """T3's run: the outcomes of its arms, analysed
    (:func:`~regime_core.experiments.outcomes.run_on_outcomes`)."""
    return outcomes.run_on_outcomes(cfg, T3_ARMS, analyse_t3, context)
