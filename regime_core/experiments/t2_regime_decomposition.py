"""T2, the claim of ``paper_claims.yml`` judged on this run (stated there once): the regime split by
two surface predicates, across encoders.

Our reading. Split the questions by P1 (the hop-2 entity is named in the question) and P2 (it
appears in a relation-bearing sentence of the bridge; :mod:`regime_core.data.regimes`).

We measure hit@k (the paper's R@k of the hop-2 target) of ``q``, ``bridge`` and ``union`` in each
(P1, P2) cell, per dataset, pooled over datasets (``"all"``), and per encoder; the paired
differences Δ(union − q) and Δ(bridge − q) with a percentile bootstrap CI and an McNemar
p-value (:func:`regime_core.stats.compare_paired`), Holm-corrected over *every* test of the run
(all encoders, dataset levels, cells and both comparisons: one family, the conservative choice).

Verdict rule (:func:`predicate_split_verdict`), on the pooled level of each encoder:

* **B-dominant holds**: in the cell ¬P1 ∧ P2, Δ(union − q) > 0 with Holm p < ``significance``;
* **Q-dominant holds**: in each P1 cell (P1 ∧ P2, P1 ∧ ¬P2) with at least ``min_cell_n``
  queries, Δ(union − q) is *not* significantly > 0 (Δ ≤ 0 or Holm p ≥ ``significance``);
* the split **holds across encoders** iff both hold for every encoder.

The same rule is applied to Δ(bridge − q) and reported alongside, as a secondary verdict.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from regime_core.data.regimes import regime_label
from regime_core.experiments.common import (
    ExperimentConfig,
    compare_arms,
    holm_family,
    table_numbers,
)
from regime_core.experiments.context import Context
from regime_core.experiments.outcomes import (
    POOLED,
    Evidence,
    Outcomes,
    SampleNumbers,
    arm_matrix,
    evidence_datasets,
    pooled_twin_mask,
    pq_label,
    run_on_outcomes,
)
from regime_core.inputs.configs import LEVEL, declared, integer
from regime_core.multiplicity import holm, holm_intervals

T2_ARMS: tuple[str, ...] = ("q", "bridge", "union")
COMPARISONS: tuple[tuple[str, str], ...] = (("union", "q"), ("bridge", "q"))


def comparison_name(a: str, b: str) -> str:
    """``"union_vs_q"``."""
    return f"{a}_vs_{b}"


@dataclass(frozen=True)
class T2Config(ExperimentConfig):
    """T2's parameters: ``significance`` is the family-wise level of the Holm-corrected tests;
    ``min_cell_n`` is the smallest Q-dominant cell the verdict requires to be non-significant
    (smaller cells are reported but cannot refute the split)."""

    significance: float = declared(0.05, LEVEL)
    """a union gain is significant when positive with a Holm-adjusted McNemar p below this"""
    min_cell_n: int = declared(30, integer())
    """the smallest Q-dominant cell whose gain must be non-significant for T2 to hold; smaller cells
    are reported but cannot refute it
    """


@dataclass(frozen=True)
class T2Result:
    """T2's outcome.

    ``cells``: one row per (encoder, dataset level, P1, P2) with ``n``, ``hit_<arm>`` per arm
    and, per comparison ``c`` of :data:`COMPARISONS`, ``c_diff``, ``c_ci_lo``, ``c_ci_hi``,
    ``c_p``, ``c_p_holm``, ``c_significant`` (Δ > 0 and Holm p < significance). ``verdicts``:
    one row per (encoder, comparison) with the rule's parts (see the module docstring).
    ``n_excluded``: queries without a union query (no B_rel), per encoder and dataset.
    """

    config: T2Config
    cells: pd.DataFrame
    verdicts: pd.DataFrame
    n_excluded: Mapping[str, Mapping[str, int]]
    samples: Mapping[str, Mapping[str, Any]]
    evidence: Evidence = field(default_factory=Evidence)

    def holds(self, comparison: str = "union_vs_q") -> bool:
        part = self.verdicts[self.verdicts["comparison"] == comparison]
        return bool(len(part)) and bool(part["holds"].all())

    def holm_family(self) -> dict[str, Any]:
        """The tests Holm adjusted together: every comparison of every cell, dataset level
        and encoder of the run, a pooled level of one dataset alone excepted
        (:func:`~regime_core.experiments.common.holm_family`)."""
        family = self.cells[self.cells["in_holm_family"]]
        tests = pd.concat(
            [family.assign(comparison=comparison_name(a, b)) for a, b in COMPARISONS],
            ignore_index=True,
        )
        return holm_family(tests, ("comparison", "encoder", "dataset", "cell"))

    def to_numbers(self) -> dict[str, Any]:
        cells: dict[str, Any] = {}
        for row in self.cells.itertuples(index=False):
            entry: dict[str, Any] = {
                "n": int(row.n),
                "regime": str(row.regime),
            }
            for arm in T2_ARMS:
                entry[f"hit_{arm}"] = float(getattr(row, f"hit_{arm}"))
            for a, b in COMPARISONS:
                c = comparison_name(a, b)
                entry[c] = {
                    "diff": float(getattr(row, f"{c}_diff")),
                    "ci_lo": float(getattr(row, f"{c}_ci_lo")),
                    "ci_hi": float(getattr(row, f"{c}_ci_hi")),
                    "ci_lo_unadjusted": float(getattr(row, f"{c}_ci_lo_unadjusted")),
                    "ci_hi_unadjusted": float(getattr(row, f"{c}_ci_hi_unadjusted")),
                    "p": float(getattr(row, f"{c}_p")),
                    "p_holm": float(getattr(row, f"{c}_p_holm")),
                    "significant": bool(getattr(row, f"{c}_significant")),
                    "n_a_better": int(getattr(row, f"{c}_n_a_better")),
                    "n_b_better": int(getattr(row, f"{c}_n_b_better")),
                }
            cells.setdefault(row.encoder, {}).setdefault(row.dataset, {})[row.cell] = entry
        verdict_fields = ("b_dominant_significant", "q_dominant_not_significant", "holds")
        verdicts = table_numbers(
            self.verdicts,
            ("comparison", "encoder"),
            {**dict.fromkeys(verdict_fields, bool), "too_few_questions": str},
        )
        for a, b in COMPARISONS:
            c = comparison_name(a, b)
            if c in verdicts:
                verdicts[c]["holds_across_encoders"] = self.holds(c)
        return {
            "k": int(self.config.k),
            "significance": float(self.config.significance),
            "min_cell_n": int(self.config.min_cell_n),
            "tests": int(self.holm_family()["tests"]),
            "holm_family": self.holm_family(),
            "cells": cells,
            "verdict": verdicts,
            "excluded_no_b_rel": {e: dict(d) for e, d in self.n_excluded.items()},
            "sample": {k: dict(v) for k, v in self.samples.items()},
            "predicate_names": self.config.predicate_names,
            **self.evidence.numbers(),
        }


def cell_table(
    wide: pd.DataFrame, cfg: T2Config, pooled_datasets: Sequence[str] | None = None
) -> pd.DataFrame:
    """Per (encoder, dataset level, P1, P2) hit rates and paired comparisons; pure.

    ``wide`` has one row per (encoder, dataset, qid) with one column per arm of
    :data:`T2_ARMS` (the hit@k values) and ``p1``, ``p2``. The pooled level (``"all"``) pools
    ``pooled_datasets`` (default: every dataset of ``wide``).
    """
    pooled = wide if pooled_datasets is None else wide[wide["dataset"].isin(pooled_datasets)]
    levels = [wide, pooled.assign(dataset=POOLED)]
    frame = pd.concat(levels, ignore_index=True)
    rows: list[dict[str, Any]] = []
    for (encoder, dataset, p1, p2), group in frame.groupby(
        ["encoder", "dataset", "p1", "p2"], sort=True
    ):
        row: dict[str, Any] = {
            "encoder": encoder,
            "dataset": dataset,
            "p1": bool(p1),
            "p2": bool(p2),
            "cell": pq_label(bool(p1), bool(p2)),
            "regime": regime_label(bool(p1), bool(p2)),
            "n": len(group),
        }
        for arm in T2_ARMS:
            row[f"hit_{arm}"] = float(group[arm].mean())
        for a, b in COMPARISONS:
            c = comparison_name(a, b)
            result = compare_arms(group, a, b, cfg)
            row[f"{c}_diff"] = result.diff
            row[f"{c}_ci_lo"] = result.ci_lo
            row[f"{c}_ci_hi"] = result.ci_hi
            row[f"{c}_p"] = result.p_value
            row[f"{c}_n_a_better"] = result.n_a_better
            row[f"{c}_n_b_better"] = result.n_b_better
        rows.append(row)
    cells = pd.DataFrame(rows)
    # One Holm family over every test of the run (cells x comparisons); each comparison's
    # interval is then the one at the level Holm judged it, so that it agrees with its Holm p
    # (the 95% interval stays beside it, as *_unadjusted). A pooled level of one dataset alone
    # repeats that dataset's tests: left out of the family, it takes its twin's adjusted values.
    # ``wide`` is never empty: analyse_t2 refuses a run with no dataset to pool first
    names = [comparison_name(a, b) for a, b in COMPARISONS]
    pooled_names = sorted(set(pooled["dataset"]))
    twins = pooled_twin_mask(cells["dataset"], pooled_names)
    family = cells[~twins]

    def column(suffix: str) -> np.ndarray:
        return np.concatenate([family[f"{c}_{suffix}"].to_numpy() for c in names])

    all_p = column("p")
    adjusted = holm(all_p)
    n = np.concatenate([family["n"].to_numpy()] * len(names))
    lo, hi = holm_intervals(column("n_a_better"), column("n_b_better"), n, all_p, cfg.significance)
    for i, c in enumerate(names):
        part = slice(i * len(family), (i + 1) * len(family))
        cells[f"{c}_ci_lo_unadjusted"] = cells[f"{c}_ci_lo"]
        cells[f"{c}_ci_hi_unadjusted"] = cells[f"{c}_ci_hi"]
        for name, values in (("ci_lo", lo), ("ci_hi", hi), ("p_holm", adjusted)):
            cells.loc[family.index, f"{c}_{name}"] = values[part]
    if twins.any():
        own = cells[~twins].set_index(["encoder", "dataset", "p1", "p2"])
        for index in cells.index[twins]:
            row = cells.loc[index]
            twin = own.loc[(row["encoder"], pooled_names[0], row["p1"], row["p2"])]
            for c in names:
                for name in ("ci_lo", "ci_hi", "p_holm"):
                    cells.loc[index, f"{c}_{name}"] = twin[f"{c}_{name}"]
    for c in names:
        cells[f"{c}_significant"] = (cells[f"{c}_diff"] > 0) & (
            cells[f"{c}_p_holm"] < cfg.significance
        )
    cells["in_holm_family"] = ~twins
    return cells


def too_few_text(
    b_dominant_n: int,
    q_dominant_ns: Sequence[int],
    min_cell_n: int,
    *,
    b_dominant_significant: bool = False,
) -> str:
    """Why the predicate split cannot be decided on a level's cells ("" when it can): no
    Q-dominant cell reaches ``min_cell_n`` questions, or the B-dominant cell is below it and
    its gain not significant (a significant one is decided however small); pure.

    >>> too_few_text(40, [12, 3], 30)
    'n = 12 below 30 in every Q-dominant cell'
    >>> too_few_text(8, [50], 30), too_few_text(40, [50], 30)
    ('n = 8 below 30 in the B-dominant cell', '')
    """
    reasons = []
    if not any(n >= min_cell_n for n in q_dominant_ns):
        largest = max(q_dominant_ns, default=0)
        reasons.append(f"n = {largest} below {min_cell_n} in every Q-dominant cell")
    if b_dominant_n < min_cell_n and not b_dominant_significant:
        reasons.append(f"n = {b_dominant_n} below {min_cell_n} in the B-dominant cell")
    return "; ".join(reasons)


def predicate_split_verdict(cells: pd.DataFrame, cfg: T2Config) -> pd.DataFrame:
    """The module docstring's rule, per encoder and comparison, on the pooled level; pure.
    ``too_few_questions`` says why a split that does not hold is undecided rather than
    refuted (:func:`too_few_text`; "" when the cells are large enough)."""
    pooled = cells[cells["dataset"] == POOLED]
    rows = []
    for encoder, group in pooled.groupby("encoder", sort=True):
        for a, b in COMPARISONS:
            c = comparison_name(a, b)
            b_cell = group[(~group["p1"]) & (group["p2"])]
            q_cells = group[group["p1"] & (group["n"] >= cfg.min_cell_n)]
            b_ok = bool(len(b_cell)) and bool(b_cell[f"{c}_significant"].all())
            q_ok = bool(len(q_cells)) and not bool(q_cells[f"{c}_significant"].any())
            b_n = int(b_cell["n"].sum())
            too_few = too_few_text(
                b_n, group[group["p1"]]["n"].tolist(), cfg.min_cell_n, b_dominant_significant=b_ok
            )
            rows.append(
                {
                    "encoder": encoder,
                    "comparison": c,
                    "b_dominant_n": b_n,
                    "q_dominant_cells_judged": len(q_cells),
                    "b_dominant_significant": b_ok,
                    "q_dominant_not_significant": q_ok,
                    "holds": b_ok and q_ok,
                    # only a split the cells could not refute: one that holds needs no excuse
                    "too_few_questions": "" if b_ok and q_ok else too_few,
                }
            )
    return pd.DataFrame(rows)


def check_pooled_evidence(evidence: Evidence) -> None:
    """``ValueError`` saying what the data lack when no dataset of the run can be pooled (in
    each, P1 or P2 is the same for nearly every question), so the split has no evidence."""
    if evidence.pooled_datasets:
        return
    table = evidence.degenerate
    lacks = []
    if table is not None:
        for row in table[table["degenerate"]].itertuples(index=False):
            share = float(row.share_true)
            value, most = ("true", share) if share >= 0.5 else ("false", 1 - share)
            lacks.append(
                f"{row.dataset}: {str(row.predicate).upper()} is {value} for {most:.0%} of its "
                f"{row.n} questions"
            )
    raise ValueError(
        "T2 compares the regimes P1 and P2 separate, and no dataset of this run separates "
        f"them ({'; '.join(lacks) or 'no question'}). A dataset prepared with --fill-b-rel "
        "has a B_rel for every bridge, so P2 holds wherever the hop-2 entity is in it: "
        "prepare it from the bridge's sentences (the `sentences` field) to run T2, or run "
        "T2 on another dataset"
    )


def analyse_t2(table: pd.DataFrame, cfg: T2Config, samples: SampleNumbers = None) -> T2Result:
    """T2 from an outcome table holding the arms of :data:`T2_ARMS`."""
    # the table was collected at cfg.k (run_on_outcomes), so it holds this hit@k column
    wide = arm_matrix(table, f"hit@{cfg.k}", T2_ARMS)
    queries = table[table["arm"] == "q"].groupby(["encoder", "dataset"])["qid"].nunique()
    kept = wide.groupby(["encoder", "dataset"])["qid"].nunique()
    excluded: dict[str, dict[str, int]] = {}
    for (encoder, dataset), n in queries.items():
        excluded.setdefault(str(encoder), {})[str(dataset)] = int(
            n - kept.get((encoder, dataset), 0)
        )
    evidence = evidence_datasets(wide)
    check_pooled_evidence(evidence)
    cells = cell_table(wide, cfg, evidence.pooled_datasets)
    verdicts = predicate_split_verdict(cells, cfg)
    return T2Result(cfg, cells, verdicts, excluded, dict(samples or {}), evidence)


def run_t2(cfg: T2Config, context: Context | None = None) -> tuple[T2Result, Outcomes]:
    """T2's run: the outcomes of its arms, analysed
    (:func:`~regime_core.experiments.outcomes.run_on_outcomes`)."""
    return run_on_outcomes(cfg, T2_ARMS, analyse_t2, context)
