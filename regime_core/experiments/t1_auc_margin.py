"""T1, the claim of ``paper_claims.yml`` judged on this run (stated there once): per-query AUC
against the cosine margin.

Our reading. For one query, let ``s_t`` be the target's cosine and ``s_n`` the negatives'.
If the negative scores are roughly Gaussian around their mean with spread σ, then

    AUC = P(s_t > s_n) ≈ Φ(margin / σ),   margin = s_t − mean_n(s_n)

(:func:`regime_core.metrics.margin_mean`). We fit, per cell (dataset × native type × encoder),
the one-parameter curves

* probit:   ``AUC = Φ(margin / σ)``           (σ > 0)
* logistic: ``AUC = 1 / (1 + exp(−margin / s))``  (s > 0, an alternative of the same shape)

by least squares, report the in-sample R² with a bootstrap CI of the refitted R²
(:func:`regime_core.agreement.fit_r2_ci`), and Spearman's ρ as a model-free check of monotonicity.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import optimize, special
from scipy import stats as scipy_stats

from regime_core.agreement import UndefinedR2Error, fit_r2_ci
from regime_core.config import ARMS
from regime_core.experiments.common import ExperimentConfig, table_numbers
from regime_core.experiments.context import Context
from regime_core.experiments.outcomes import Outcomes, SampleNumbers, run_on_outcomes
from regime_core.inputs import Choice, Number
from regime_core.inputs.configs import declared, integer
from regime_core.paper import claim_where

# The paper's statement (paper_claims.yml, the claim judged on this run), for the side-by-side
# line; the R² threshold is also the default of ours (T1Config.r2_threshold).
_PAPER = claim_where(run="t1_auc_margin")
PAPER_R2_THRESHOLD: float = _PAPER.number("threshold")
PAPER_CELLS_PASSING: int = _PAPER.count("passing")
PAPER_CELLS_TOTAL: int = _PAPER.count("total")

MARGINS: tuple[str, ...] = ("std_margin", "margin")
"""the margins T1 can fit AUC on, the primary reading first

- std_margin: the margin divided by the spread of the distractors' cosines, the form the
  derivation's Φ(margin / σ) asks for
- margin: the target's cosine minus the mean distractor cosine, as the theorem writes it
"""
FITS: tuple[str, ...] = ("probit", "logistic")
CELL_KEYS: tuple[str, ...] = ("encoder", "dataset", "native_type")

# Bounds of the scale parameter search, in log space: cosine margins live in [-2, 2], so a
# scale outside [1e-4, 1e2] would make the curve a step or a constant 0.5 on every cell.
_LOG_SCALE_BOUNDS = (math.log(1e-4), math.log(1e2))


# --------------------------------------------------------------------------------------------
# Curves (pure kernels)
# --------------------------------------------------------------------------------------------


def probit_curve(margin: np.ndarray, scale: float | np.ndarray) -> np.ndarray:
    """``Φ(margin / scale)`` (``scale`` a number, or one per row: shape ``(rows, 1)``).

    >>> float(probit_curve(np.array([0.0]), 0.1)[0])
    0.5
    """
    return special.ndtr(np.asarray(margin, dtype=np.float64) / scale)


def logistic_curve(margin: np.ndarray, scale: float | np.ndarray) -> np.ndarray:
    """``1 / (1 + exp(−margin / scale))``.

    >>> round(float(logistic_curve(np.array([0.1]), 0.1)[0]), 4)
    0.7311
    """
    return special.expit(np.asarray(margin, dtype=np.float64) / scale)


CURVES: dict[str, Callable[[np.ndarray, float | np.ndarray], np.ndarray]] = {
    "probit": probit_curve,
    "logistic": logistic_curve,
}


def fit_scale(margin: np.ndarray, auc: np.ndarray, curve: str) -> float:
    """Least-squares scale of ``curve`` (``probit`` or ``logistic``): argmin Σ (auc − f(m/s))².

    Searched in log space on a bounded interval (Brent), so the result is always positive.

    >>> m = np.linspace(-0.2, 0.2, 41)
    >>> round(fit_scale(m, probit_curve(m, 0.05), "probit"), 4)
    0.05
    """
    x = np.asarray(margin, dtype=np.float64)
    y = np.asarray(auc, dtype=np.float64)
    f = CURVES[curve]

    def loss(log_scale: float) -> float:
        return float(np.sum((y - f(x, math.exp(log_scale))) ** 2))

    result = optimize.minimize_scalar(
        loss, bounds=_LOG_SCALE_BOUNDS, method="bounded", options={"xatol": 1e-5}
    )
    return math.exp(float(result.x))


_GOLDEN_MEAN = 0.5 * (3.0 - math.sqrt(5.0))
_SQRT_EPS = math.sqrt(2.2e-16)
_XATOL = 1e-5
_MAX_EVALUATIONS = 500  # minimize_scalar's default maxiter for the bounded method


def fit_scales(margin: np.ndarray, auc: np.ndarray, curve: str) -> np.ndarray:
    """:func:`fit_scale` of each row of two ``(rows, n)`` arrays, all rows searched at once.

    The search is scipy's bounded Brent method (``minimize_scalar(method="bounded")``, the one
    ``fit_scale`` calls) run step for step on every row in lockstep, each row choosing its own
    parabolic or golden step and stopping when its own interval is small enough; so each row's
    scale is the one ``fit_scale`` finds for it (tests/test_experiments_t1.py checks this
    exactly). The bootstrap of T1 refits 10,000 resamples per cell this way (one call instead of
    10,000).

    >>> m = np.linspace(-0.2, 0.2, 41)
    >>> auc = np.stack([probit_curve(m, 0.05), probit_curve(m, 0.1)])
    >>> np.round(fit_scales(np.stack([m, m]), auc, "probit"), 4)
    array([0.05, 0.1 ])
    """
    x = np.asarray(margin, dtype=np.float64)
    y = np.asarray(auc, dtype=np.float64)
    f = CURVES[curve]

    def loss(log_scale: np.ndarray, rows: np.ndarray) -> np.ndarray:
        # math.exp per row, as fit_scale's loss takes it (numpy's exp may differ in the last bit)
        scale = np.array([math.exp(v) for v in log_scale[rows].tolist()])
        return np.sum((y[rows] - f(x[rows], scale[:, None])) ** 2, axis=1)

    n_rows = x.shape[0]
    lower, upper = _LOG_SCALE_BOUNDS
    a, b = np.full(n_rows, lower), np.full(n_rows, upper)
    xf = np.full(n_rows, lower + _GOLDEN_MEAN * (upper - lower))
    nfc, fulc = xf.copy(), xf.copy()
    rat, e = np.zeros(n_rows), np.zeros(n_rows)
    everyone = np.ones(n_rows, dtype=bool)
    fx = loss(xf, everyone)
    fnfc, ffulc = fx.copy(), fx.copy()
    evaluations = 1
    xm = 0.5 * (a + b)
    tol1 = _SQRT_EPS * np.abs(xf) + _XATOL / 3.0
    tol2 = 2.0 * tol1
    active = np.abs(xf - xm) > (tol2 - 0.5 * (b - a))
    with np.errstate(divide="ignore", invalid="ignore"):  # a branch a row does not take
        while active.any() and evaluations < _MAX_EVALUATIONS:
            # the parabola through the three best points, where it is acceptable
            tried = active & (np.abs(e) > tol1)
            r = (xf - nfc) * (fx - ffulc)
            q = (xf - fulc) * (fx - fnfc)
            p = (xf - fulc) * q - (xf - nfc) * r
            q = 2.0 * (q - r)
            p = np.where(q > 0.0, -p, p)
            q = np.abs(q)
            accepted = (
                tried & (np.abs(p) < np.abs(0.5 * q * e)) & (p > q * (a - xf)) & (p < q * (b - xf))
            )
            parabolic = (p + 0.0) / q
            step_to = xf + parabolic
            at_edge = ((step_to - a) < tol2) | ((b - step_to) < tol2)
            toward_middle = np.sign(xm - xf) + ((xm - xf) == 0)
            parabolic = np.where(at_edge, tol1 * toward_middle, parabolic)
            # else a golden-section step into the larger part
            golden_e = np.where(xf >= xm, a - xf, b - xf)
            new_e = np.where(accepted, rat, golden_e)
            new_rat = np.where(accepted, parabolic, _GOLDEN_MEAN * golden_e)
            e = np.where(active, new_e, e)
            rat = np.where(active, new_rat, rat)

            direction = np.sign(rat) + (rat == 0)
            u = xf + direction * np.maximum(np.abs(rat), tol1)
            fu = np.full(n_rows, np.inf)
            fu[active] = loss(u, active)
            evaluations += 1

            better = active & (fu <= fx)
            worse = active & ~(fu <= fx)
            shift_worse = worse & ((fu <= fnfc) | (nfc == xf))
            third_worse = worse & ~shift_worse & ((fu <= ffulc) | (fulc == xf) | (fulc == nfc))
            a = np.where(better & (u >= xf), xf, np.where(worse & (u < xf), u, a))
            b = np.where(better & (u < xf), xf, np.where(worse & (u >= xf), u, b))
            fulc, ffulc = (
                np.where(better | shift_worse, nfc, np.where(third_worse, u, fulc)),
                np.where(better | shift_worse, fnfc, np.where(third_worse, fu, ffulc)),
            )
            nfc, fnfc = (
                np.where(better, xf, np.where(shift_worse, u, nfc)),
                np.where(better, fx, np.where(shift_worse, fu, fnfc)),
            )
            xf, fx = np.where(better, u, xf), np.where(better, fu, fx)

            xm = 0.5 * (a + b)
            tol1 = _SQRT_EPS * np.abs(xf) + _XATOL / 3.0
            tol2 = 2.0 * tol1
            active &= np.abs(xf - xm) > (tol2 - 0.5 * (b - a))
    return np.array([math.exp(v) for v in xf.tolist()])


def curve_fitter(curve: str) -> Callable[[np.ndarray, np.ndarray], Callable[[np.ndarray], Any]]:
    """``fit_fn`` for :func:`regime_core.agreement.fit_r2_ci`: fits the scale, gives the curve."""
    f = CURVES[curve]

    def fit(x: np.ndarray, y: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
        scale = fit_scale(x, y, curve)
        return lambda m: f(m, scale)

    return fit


def rows_curve_fitter(curve: str) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """``fit_rows`` for :func:`regime_core.agreement.fit_r2_ci`: the curve fitted to each row
    (:func:`fit_scales`), its values at that row's margins."""
    f = CURVES[curve]

    def fit_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.asarray(f(x, fit_scales(x, y, curve)[:, None]))

    return fit_rows


# --------------------------------------------------------------------------------------------
# Config and result
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class T1Config(ExperimentConfig):
    """T1's parameters. ``arm``: the query arm whose AUC and margin are fitted; ``margin``:
    ``margin`` (target − mean negative, the theorem's form) or ``std_margin`` (divided by the
    negatives' spread, so the scale should be near 1); ``min_cell_n``: cells with fewer
    queries are listed, not fitted; ``r2_threshold``: the paper's bar."""

    arm: str = declared("q", Choice(ARMS))
    """the query arm whose per-query AUC and margin T1 fits"""
    margin: str = declared("std_margin", Choice(MARGINS))
    """T1's margin: std_margin (the margin divided by the distractors' spread, the form the
    derivation's AUC = Φ(margin / σ) asks for; our primary reading, chosen after the raw margin's
    results were seen, which the book says) or margin (target minus mean distractor cosine)
    """
    # T1 is about AUC, not hit@k: a pool of <= k candidates is no special case for it.
    tiny_pools: str = "keep"
    """keep: T1 is about AUC, where a tiny pool is no special case"""
    min_cell_n: int = declared(30, integer(3))
    """a cell with fewer questions is listed, not fitted"""
    r2_threshold: float = declared(PAPER_R2_THRESHOLD, Number(low=0.0, high=1.0, low_open=True))
    """the R² a cell's fitted curve must reach to pass (the paper's bar)"""


@dataclass(frozen=True)
class T1Result:
    """T1's outcome.

    ``cells``: one row per (encoder, dataset, native_type) with ``n``, ``fitted`` (enough
    queries and a non-constant AUC), ``reason`` when not, and for fitted cells
    ``r2_<fit>``, ``r2_<fit>_lo``, ``r2_<fit>_hi``, ``scale_<fit>`` for each fit of
    :data:`FITS`, ``spearman_rho``, ``spearman_p``. ``points``: one row per query with its
    cell, ``margin`` and ``auc`` (for the scatter plots).
    """

    config: T1Config
    cells: pd.DataFrame
    points: pd.DataFrame
    samples: Mapping[str, Mapping[str, Any]]

    @property
    def fitted(self) -> pd.DataFrame:
        return self.cells[self.cells["fitted"]]

    def n_passing(self, fit: str = "probit") -> int:
        """Fitted cells whose R² reaches the threshold."""
        return int((self.fitted[f"r2_{fit}"] >= self.config.r2_threshold).sum())

    def to_numbers(self) -> dict[str, Any]:
        cfg = self.config
        fitted = self.fitted
        too_few = self.cells[~self.cells["fitted"]]
        summary: dict[str, Any] = {
            "cells": len(self.cells),
            "cells_fitted": len(fitted),
            "cells_not_fitted": len(too_few),
            "not_fitted": "; ".join(
                f"{r.encoder}/{r.dataset}/{r.native_type} (n={r.n}: {r.reason})"
                for r in too_few.itertuples()
            )
            or "none",
            "queries": int(self.cells["n"].sum()),
            # left out of every fit, counted (a question with no negative has no AUC; one whose
            # negatives all score alike has no standardised margin)
            "queries_without_negative": int(self.cells["n_without_negative"].sum()),
            "queries_without_spread": int(self.cells["n_without_spread"].sum()),
        }
        for fit in FITS:
            summary[f"{fit}_cells_passing"] = self.n_passing(fit)
            if len(fitted):
                summary[f"{fit}_median_r2"] = float(fitted[f"r2_{fit}"].median())
                summary[f"{fit}_min_r2"] = float(fitted[f"r2_{fit}"].min())
                summary[f"{fit}_max_r2"] = float(fitted[f"r2_{fit}"].max())
        rho = fitted["spearman_rho"].dropna() if len(fitted) else pd.Series(dtype=float)
        summary["spearman_positive_significant_cells"] = int(
            ((fitted["spearman_rho"] > 0) & (fitted["spearman_p"] < 1 - cfg.confidence)).sum()
            if len(fitted)
            else 0
        )
        if len(rho):
            summary["spearman_median_rho"] = float(rho.median())
        summary["share_passing_probit"] = (
            float(self.n_passing("probit") / len(fitted)) if len(fitted) else 0.0
        )
        cells: dict[str, Any] = {}
        for row in self.cells.itertuples():
            entry: dict[str, Any] = {
                "n": int(row.n),
                "n_without_negative": int(row.n_without_negative),
                "n_without_spread": int(row.n_without_spread),
                "fitted": bool(row.fitted),
            }
            if row.fitted:
                for fit in FITS:
                    for suffix in ("", "_lo", "_hi"):
                        entry[f"r2_{fit}{suffix}"] = float(getattr(row, f"r2_{fit}{suffix}"))
                    entry[f"scale_{fit}"] = float(getattr(row, f"scale_{fit}"))
                if not math.isnan(row.spearman_rho):
                    entry["spearman_rho"] = float(row.spearman_rho)
                    entry["spearman_p"] = float(row.spearman_p)
            else:
                entry["reason"] = str(row.reason)
            cells.setdefault(row.encoder, {}).setdefault(row.dataset, {})[row.native_type] = entry
        return {
            "arm": cfg.arm,
            "margin": cfg.margin,
            "paper": {
                "r2_threshold": PAPER_R2_THRESHOLD,
                "cells_passing": PAPER_CELLS_PASSING,
                "cells": PAPER_CELLS_TOTAL,
            },
            "threshold": float(cfg.r2_threshold),
            "min_cell_n": int(cfg.min_cell_n),
            "summary": summary,
            "cells": cells,
            "sample": {k: dict(v) for k, v in self.samples.items()},
        }


# --------------------------------------------------------------------------------------------
# Analysis (pure) and the run
# --------------------------------------------------------------------------------------------


def fit_cell(
    margin: np.ndarray,
    auc: np.ndarray,
    *,
    resamples: int,
    confidence: float,
    seed: int,
) -> dict[str, float]:
    """Both fits, their R² with bootstrap CIs, and Spearman's ρ for one cell."""
    x = np.asarray(margin, dtype=np.float64)
    y = np.asarray(auc, dtype=np.float64)
    out: dict[str, float] = {}
    for fit in FITS:
        r2, lo, hi = fit_r2_ci(
            x,
            y,
            curve_fitter(fit),
            resamples=resamples,
            confidence=confidence,
            seed=seed,
            fit_rows=rows_curve_fitter(fit),
        )
        out[f"r2_{fit}"], out[f"r2_{fit}_lo"], out[f"r2_{fit}_hi"] = r2, lo, hi
        out[f"scale_{fit}"] = fit_scale(x, y, fit)
    if np.ptp(x) == 0:
        out["spearman_rho"], out["spearman_p"] = math.nan, math.nan
    else:
        rho = scipy_stats.spearmanr(x, y)
        out["spearman_rho"], out["spearman_p"] = float(rho.statistic), float(rho.pvalue)
    return out


def analyse_t1(table: pd.DataFrame, cfg: T1Config, samples: SampleNumbers = None) -> T1Result:
    """T1 from an outcome table (:func:`regime_core.experiments.outcomes.outcome_table` rows)."""
    part = table[table["arm"] == cfg.arm]
    if part.empty:
        raise ValueError(f"analyse_t1: the outcome table has no rows for arm {cfg.arm!r}")
    # A question whose candidates are all gold has no negative, so no AUC and no margin; one
    # whose negatives all score alike has no spread, so no standardised margin. Both are left
    # out of the fits and counted per cell (never silently).
    no_negative = part["auc"].isna()
    no_spread = ~no_negative & part[cfg.margin].isna()
    left_out = (
        part.assign(no_negative=no_negative, no_spread=no_spread)
        .groupby(list(CELL_KEYS), sort=True)[["no_negative", "no_spread"]]
        .sum()
    )
    part = part[~no_negative & ~no_spread]
    groups = dict(tuple(part.groupby(list(CELL_KEYS), sort=True)))
    rows = []
    fitted_points = []
    for key in left_out.index:  # every cell, also one whose questions were all left out
        encoder, dataset, native_type = key
        group = groups.get(key, part.iloc[:0])
        x = group[cfg.margin].to_numpy(dtype=np.float64)
        y = group["auc"].to_numpy(dtype=np.float64)
        row: dict[str, Any] = {
            "encoder": encoder,
            "dataset": dataset,
            "native_type": native_type,
            "n": len(group),
            "n_without_negative": int(left_out.loc[key, "no_negative"]),
            "n_without_spread": int(left_out.loc[key, "no_spread"]),
            "fitted": False,
            "reason": "",
        }
        if len(group) < cfg.min_cell_n:
            row["reason"] = f"fewer than {cfg.min_cell_n} queries with an AUC and a margin"
        elif np.ptp(y) == 0:
            row["reason"] = "AUC is constant"
        else:
            try:
                fits = fit_cell(
                    x,
                    y,
                    resamples=cfg.bootstrap_resamples,
                    confidence=cfg.confidence,
                    seed=cfg.seed,
                )
            except UndefinedR2Error:
                # a few queries differ (a synthetic world's near-perfect retrieval): no
                # resample varies, so no interval; the cell is reported, not fitted
                row["reason"] = "AUC varies in too few queries for a bootstrap interval"
            else:
                row.update(fits)
                row["fitted"] = True
        rows.append(row)
        points = group[["encoder", "dataset", "native_type", "qid"]].copy()
        points["margin"] = x
        points["auc"] = y
        if row["fitted"]:
            points["fitted_probit"] = probit_curve(x, row["scale_probit"])
            points["fitted_logistic"] = logistic_curve(x, row["scale_logistic"])
        fitted_points.append(points)
    cells = pd.DataFrame(rows)
    for fit in FITS:
        for column in (f"r2_{fit}", f"r2_{fit}_lo", f"r2_{fit}_hi", f"scale_{fit}"):
            if column not in cells:
                cells[column] = np.nan
    for column in ("spearman_rho", "spearman_p"):
        if column not in cells:
            cells[column] = np.nan
    points = pd.concat(fitted_points, ignore_index=True)
    return T1Result(config=cfg, cells=cells, points=points, samples=dict(samples or {}))


def other_margin_numbers(table: pd.DataFrame, cfg: T1Config) -> dict[str, Any]:
    """T1 under the *other* margin form of :data:`MARGINS` (raw or standardised), for the
    record: the probit and logistic R² of every fitted cell and the cells passing; pure.

    The point R² is what the verdict counts, so no bootstrap is run (the primary form's record
    carries the intervals)."""
    other = next(m for m in MARGINS if m != cfg.margin)
    result = analyse_t1(table, dataclasses.replace(cfg, margin=other, bootstrap_resamples=1))
    cells = table_numbers(
        result.fitted,
        CELL_KEYS,
        {"n": int, "r2_probit": float, "r2_logistic": float},
    )
    return {
        "margin": other,
        "cells_fitted": len(result.fitted),
        "probit_cells_passing": result.n_passing("probit"),
        "logistic_cells_passing": result.n_passing("logistic"),
        "cells": cells,
    }


def run_t1(cfg: T1Config, context: Context | None = None) -> tuple[T1Result, Outcomes]:
    """T1's run: the outcomes of its arms, analysed
    (:func:`~regime_core.experiments.outcomes.run_on_outcomes`)."""
    return run_on_outcomes(cfg, (cfg.arm,), analyse_t1, context)
