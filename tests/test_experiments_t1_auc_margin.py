"""Unit tests of T1 (AUC against margin) on synthetic outcome tables."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from regime_core.agreement import fit_r2_ci
from regime_core.experiments.t1_auc_margin import (
    FITS,
    T1Config,
    analyse_t1,
    curve_fitter,
    fit_scale,
    fit_scales,
    logistic_curve,
    probit_curve,
    rows_curve_fitter,
)
from regime_core.runner.records import load_record, write_record


def _table(cells: dict[tuple[str, str, str], tuple[int, str]], seed: int = 0) -> pd.DataFrame:
    """Per cell (encoder, dataset, type) -> (n, kind): 'probit' data follow Φ(m/0.1) plus
    noise, 'noise' data are unrelated to the margin, 'constant' has AUC 1 everywhere."""
    rng = np.random.default_rng(seed)
    frames = []
    for (encoder, dataset, native_type), (n, kind) in cells.items():
        margin = rng.normal(0.05, 0.12, n)
        if kind == "probit":
            auc = np.clip(probit_curve(margin, 0.1) + rng.normal(0, 0.03, n), 0, 1)
        elif kind == "noise":
            auc = rng.uniform(0, 1, n)
        else:
            auc = np.ones(n)
        frames.append(
            pd.DataFrame(
                {
                    "qid": [f"{dataset}-{native_type}-{i}" for i in range(n)],
                    "encoder": encoder,
                    "dataset": dataset,
                    "native_type": native_type,
                    "arm": "q",
                    "auc": auc,
                    "margin": margin,
                    "std_margin": margin / 0.1,
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


@pytest.mark.parametrize("curve", ["probit", "logistic"])
@pytest.mark.parametrize("scale", [0.02, 0.1, 0.7])
def test_fit_scale_recovers_the_scale(curve: str, scale: float) -> None:
    margin = np.linspace(-0.5, 0.5, 101)
    f = probit_curve if curve == "probit" else logistic_curve
    assert fit_scale(margin, f(margin, scale), curve) == pytest.approx(scale, rel=1e-3)


@pytest.mark.parametrize("curve", FITS)
def test_fit_scales_finds_each_rows_fit_scale(curve: str) -> None:
    """The lockstep search takes each row's own path: every row lands where fit_scale lands
    (to 1e-9, far inside the search's 1e-5 tolerance, so no row took another path), also a
    constant row, a row at a bound and rows of different shapes of curve."""
    rng = np.random.default_rng(5)
    for n, spread, scale in [(3, 1.0, 0.5), (40, 0.05, 0.01), (250, 3.0, 4.0), (90, 0.3, 50.0)]:
        x = rng.normal(0, spread, (60, n))
        y = np.clip(probit_curve(x, scale) + rng.normal(0, 0.1, (60, n)), 0, 1)
        y[0], y[1], x[2] = 0.5, 1.0, 0.0  # flat, a step, no margin at all
        one_by_one = np.array([fit_scale(x[i], y[i], curve) for i in range(len(x))])
        np.testing.assert_allclose(fit_scales(x, y, curve), one_by_one, rtol=1e-9)


@pytest.mark.parametrize("curve", FITS)
def test_the_vectorised_bootstrap_gives_the_refitting_bootstraps_interval(curve: str) -> None:
    rng = np.random.default_rng(6)
    x = rng.normal(0, 1, 70)
    y = np.clip(probit_curve(x, 0.8) + rng.normal(0, 0.1, 70), 0, 1)
    one_by_one = fit_r2_ci(x, y, curve_fitter(curve), resamples=300, seed=2)
    at_once = fit_r2_ci(
        x, y, curve_fitter(curve), resamples=300, seed=2, fit_rows=rows_curve_fitter(curve)
    )
    np.testing.assert_allclose(at_once, one_by_one, rtol=1e-9)


def test_analyse_t1_fits_separates_and_flags_cells(tmp_path) -> None:
    table = _table(
        {
            ("enc", "d1", "bridge"): (120, "probit"),
            ("enc", "d1", "comparison"): (120, "noise"),
            ("enc", "d2", "tiny"): (5, "probit"),
            ("enc", "d2", "flat"): (50, "constant"),
        }
    )
    cfg = T1Config(datasets=("hotpotqa",), min_cell_n=20, bootstrap_resamples=200, margin="margin")
    result = analyse_t1(table, cfg)
    cells = result.cells.set_index("native_type")
    assert cells.loc["bridge", "fitted"] and cells.loc["bridge", "r2_probit"] > 0.9
    assert cells.loc["bridge", "scale_probit"] == pytest.approx(0.1, rel=0.15)
    lo, hi = cells.loc["bridge", ["r2_probit_lo", "r2_probit_hi"]]
    assert lo <= cells.loc["bridge", "r2_probit"] <= hi
    assert cells.loc["bridge", "spearman_rho"] > 0.8
    assert cells.loc["comparison", "fitted"] and cells.loc["comparison", "r2_probit"] < 0.3
    assert not cells.loc["tiny", "fitted"] and "fewer than 20" in cells.loc["tiny", "reason"]
    assert not cells.loc["flat", "fitted"] and cells.loc["flat", "reason"] == "AUC is constant"
    assert result.n_passing("probit") == 1

    numbers = result.to_numbers()
    assert numbers["summary"]["cells"] == 4
    assert numbers["summary"]["cells_fitted"] == 2
    assert numbers["summary"]["probit_cells_passing"] == 1
    assert "enc/d2/tiny" in numbers["summary"]["not_fitted"]
    assert numbers["paper"] == {"r2_threshold": 0.9, "cells_passing": 6, "cells": 8}
    assert numbers["cells"]["enc"]["d2"]["tiny"] == {
        "n": 5,
        "n_without_negative": 0,
        "n_without_spread": 0,
        "fitted": False,
        "reason": "fewer than 20 queries with an AUC and a margin",
    }
    # the numbers are a valid record (finite scalars only) and read back unchanged
    record = load_record(write_record(tmp_path, name="t1", config=cfg, numbers=numbers))
    assert record["numbers"]["summary"]["probit_cells_passing"] == 1


def test_analyse_t1_is_deterministic_and_uses_the_margin_parameter() -> None:
    table = _table({("enc", "d1", "bridge"): (60, "probit")})
    cfg = T1Config(min_cell_n=10, bootstrap_resamples=100, margin="margin")
    a = analyse_t1(table, cfg).cells
    b = analyse_t1(table, cfg).cells
    pd.testing.assert_frame_equal(a, b)
    std = analyse_t1(table, T1Config(min_cell_n=10, bootstrap_resamples=100, margin="std_margin"))
    # std_margin = margin / 0.1 here, so the fitted scale is ten times larger, R² the same
    assert std.cells.loc[0, "scale_probit"] == pytest.approx(
        10 * a.loc[0, "scale_probit"], rel=1e-3
    )
    assert std.cells.loc[0, "r2_probit"] == pytest.approx(a.loc[0, "r2_probit"], abs=1e-6)


def test_analyse_t1_errors_are_actionable() -> None:
    table = _table({("enc", "d1", "bridge"): (30, "probit")})
    with pytest.raises(ValueError, match="no rows for arm 'union'"):
        analyse_t1(table, T1Config(arm="union"))
    assert not math.isnan(
        analyse_t1(table, T1Config(min_cell_n=10, bootstrap_resamples=50)).cells.loc[0, "r2_probit"]
    )


def test_other_margin_numbers_fit_the_other_form() -> None:
    from regime_core.experiments.t1_auc_margin import T1Config, analyse_t1, other_margin_numbers

    rng = np.random.default_rng(3)
    rows = []
    for i in range(60):
        margin = rng.normal(0.1, 0.05)
        spread = rng.uniform(0.02, 0.2)
        rows.append(
            {
                "encoder": "e",
                "dataset": "d",
                "native_type": "t",
                "arm": "q",
                "qid": f"q{i}",
                "margin": margin,
                "std_margin": margin / spread,
                "auc": float(np.clip(0.5 + margin / spread / 4, 0, 1)),
            }
        )
    table = pd.DataFrame(rows)
    cfg = T1Config(min_cell_n=10, bootstrap_resamples=20, margin="margin")
    other = other_margin_numbers(table, cfg)
    assert other["margin"] == "std_margin" and other["cells_fitted"] == 1
    alone = analyse_t1(table, T1Config(margin="std_margin", min_cell_n=10, bootstrap_resamples=1))
    assert other["cells"]["e"]["d"]["t"]["r2_probit"] == pytest.approx(
        float(alone.cells["r2_probit"].iloc[0])
    )
    # the AUC is a function of the standardised margin here, not of the raw one
    assert (
        other["cells"]["e"]["d"]["t"]["r2_probit"]
        > analyse_t1(table, cfg).cells["r2_probit"].iloc[0]
    )
    assert other_margin_numbers(table, T1Config(margin="std_margin", min_cell_n=10))["margin"] == (
        "margin"
    )


def test_the_primary_margin_is_the_standardised_one() -> None:
    # the derivation's AUC = Φ(margin / σ) asks for the margin over the negatives' spread
    assert T1Config().margin == "std_margin"


def test_questions_without_a_negative_or_a_spread_are_counted_not_dropped() -> None:
    table = _table({("enc", "d1", "bridge"): (60, "probit"), ("enc", "d1", "gone"): (4, "probit")})
    bridge = table["native_type"] == "bridge"
    table.loc[bridge & (table["qid"].isin(table.loc[bridge, "qid"].iloc[:3])), "auc"] = np.nan
    table.loc[bridge & (table["qid"] == table.loc[bridge, "qid"].iloc[5]), "std_margin"] = np.nan
    table.loc[table["native_type"] == "gone", "auc"] = np.nan  # a cell with no AUC at all
    result = analyse_t1(table, T1Config(min_cell_n=10, bootstrap_resamples=20))
    cells = result.cells.set_index("native_type")
    assert (cells.loc["bridge", "n"], cells.loc["bridge", "n_without_negative"]) == (56, 3)
    assert cells.loc["bridge", "n_without_spread"] == 1
    assert cells.loc["gone", "n"] == 0 and not cells.loc["gone", "fitted"]
    summary = result.to_numbers()["summary"]
    assert summary["queries_without_negative"] == 7 and summary["queries_without_spread"] == 1
    assert summary["queries"] + 8 == len(table)


def test_a_cell_without_a_defined_interval_is_reported_not_fitted(monkeypatch) -> None:
    """Issue 44: on the exported toy world, T1 crashed ("every bootstrap resample was
    constant"): retrieval is near perfect, so the AUC differs from 1 in a query or two, and no
    resample's R² is defined. Such a cell is reported, not fitted, with the reason."""
    from regime_core.agreement import UndefinedR2Error
    from regime_core.experiments import t1_auc_margin

    table = _table({("enc", "d1", "bridge"): (120, "probit"), ("enc", "d1", "flat"): (60, "noise")})
    fit = t1_auc_margin.fit_r2_ci

    def undefined_on_the_flat_cell(x, y, *args, **kwargs):
        if len(y) == 60:
            raise UndefinedR2Error("y: every bootstrap resample was constant; R² CI is undefined")
        return fit(x, y, *args, **kwargs)

    monkeypatch.setattr(t1_auc_margin, "fit_r2_ci", undefined_on_the_flat_cell)
    cfg = T1Config(datasets=("hotpotqa",), min_cell_n=20, bootstrap_resamples=200, margin="margin")
    cells = analyse_t1(table, cfg).cells.set_index("native_type")
    assert cells.loc["bridge", "fitted"]
    assert not cells.loc["flat", "fitted"]
    assert cells.loc["flat", "reason"] == "AUC varies in too few queries for a bootstrap interval"
    # the undefined R² of the fit itself is the same kind of error
    with pytest.raises(UndefinedR2Error, match="is constant"):
        fit_r2_ci(np.arange(40.0), np.ones(40), lambda x, y: lambda z: z * 0 + 1, resamples=50)
