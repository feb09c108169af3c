"""Agreement and fit against scikit-learn; the refitted R²'s bootstrap interval."""

from __future__ import annotations

import doctest
import math

import numpy as np
import pytest
from helpers import refused

from regime_core import agreement
from regime_core.agreement import cohens_kappa, fit_r2_ci, r_squared, r_squared_rows


def test_doctests_pass() -> None:
    result = doctest.testmod(agreement)
    assert result.attempted >= 2
    assert result.failed == 0


@pytest.mark.parametrize("seed", range(5))
def test_cohens_kappa_matches_sklearn(seed: int) -> None:
    from sklearn.metrics import cohen_kappa_score

    rng = np.random.default_rng(seed)
    labels = np.array(["q", "union", "entity"])
    a = labels[rng.integers(0, 3, 50)]
    b = np.where(rng.random(50) < 0.6, a, labels[rng.integers(0, 3, 50)])
    assert cohens_kappa(a, b) == pytest.approx(cohen_kappa_score(a, b))
    assert cohens_kappa(a == "q", b == "q") == pytest.approx(cohen_kappa_score(a == "q", b == "q"))


def test_cohens_kappa_degenerate_single_label() -> None:
    assert math.isnan(cohens_kappa(["q"] * 4, ["q"] * 4))
    assert cohens_kappa(["q"] * 4, ["q"] * 4, undefined=1.0) == 1.0
    # one rater constant, the other not: p_e < 1, kappa is defined (0 here)
    assert cohens_kappa(["q"] * 4, ["q", "u", "q", "q"]) == pytest.approx(0.0)
    with refused(ValueError, names=("2", "3")):
        cohens_kappa(["q", "u"], ["q", "u", "u"])


def test_r_squared_matches_sklearn_and_is_nan_for_constant_y() -> None:
    from sklearn.metrics import r2_score

    rng = np.random.default_rng(0)
    y = rng.normal(size=30)
    yhat = y + rng.normal(scale=0.5, size=30)
    assert r_squared(y, yhat) == pytest.approx(r2_score(y, yhat))
    assert math.isnan(r_squared([1.0, 1.0], [1.0, 2.0]))


def test_r_squared_rows_is_r_squared_of_each_row() -> None:
    rng = np.random.default_rng(2)
    y = rng.normal(size=(20, 30))
    yhat = y + rng.normal(scale=0.5, size=(20, 30))
    y[3], yhat[4] = 2.0, y[4]  # a constant row (NaN) and a perfect fit (1.0)
    expected = [r_squared(a, b) for a, b in zip(y, yhat, strict=True)]
    np.testing.assert_allclose(r_squared_rows(y, yhat), expected, rtol=1e-12)
    assert math.isnan(r_squared_rows(y, yhat)[3]) and r_squared_rows(y, yhat)[4] == 1.0
    with refused(ValueError, names=("shape",)):  # one prediction row would broadcast silently
        r_squared_rows(y, yhat[:1])


def test_fit_r2_ci_vectorised_rejects_a_fit_that_does_not_fit_rows() -> None:
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, 40)
    y = 2 * x + rng.normal(scale=0.5, size=40)

    def rows_linear(xb: np.ndarray, yb: np.ndarray) -> np.ndarray:
        return np.stack([linear_fit(a, b)(a) for a, b in zip(xb, yb, strict=True)])

    assert fit_r2_ci(x, y, linear_fit, resamples=200, fit_rows=rows_linear) == pytest.approx(
        fit_r2_ci(x, y, linear_fit, resamples=200), rel=1e-12
    )


def linear_fit(x: np.ndarray, y: np.ndarray):
    slope, intercept = np.polyfit(x, y, 1)
    return lambda new_x: slope * new_x + intercept


def test_fit_r2_ci_brackets_the_point_estimate_and_is_deterministic() -> None:
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, 80)
    y = 2 * x + rng.normal(scale=0.5, size=80)
    r2, lo, hi = fit_r2_ci(x, y, linear_fit, resamples=300)
    assert r2 == pytest.approx(r_squared(y, linear_fit(x, y)(x)))
    assert 0.0 < lo < r2 < hi < 1.0
    assert fit_r2_ci(x, y, linear_fit, resamples=300) == (r2, lo, hi)
    with refused(ValueError, names=("constant",)):
        fit_r2_ci(x, np.ones_like(x), linear_fit, resamples=10)


def test_r_squared_needs_paired_values() -> None:
    with refused(ValueError, names=("y", "yhat")):
        r_squared([1, 2], [1])
