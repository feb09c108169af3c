"""Agreement and fit: Cohen's κ (scikit-learn), R² and a bootstrap interval of a refitted
curve's R² (scipy)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np
from scipy import stats as scipy_stats

from regime_core.config import BOOTSTRAP_RESAMPLES, CONFIDENCE, SEED
from regime_core.inputs import check_value
from regime_core.inputs.configs import LEVEL
from regime_core.inputs.statistics import RESAMPLES
from regime_core.stats import ArrayLike, _paired


def _percentile_ci(values: np.ndarray, confidence: float) -> tuple[float, float]:
    """The ``((1 - confidence) / 2, (1 + confidence) / 2)`` percentiles of bootstrap values."""
    tail = (1.0 - confidence) / 2.0
    lo, hi = np.quantile(values, [tail, 1.0 - tail])
    return float(lo), float(hi)


def cohens_kappa(a: Sequence[Any], b: Sequence[Any], *, undefined: float = math.nan) -> float:
    """Cohen's kappa between two labelings of the same items (scikit-learn's
    ``cohen_kappa_score``); labels of any hashable type.

    When both labelings use one and the same label, chance agreement is 1 and kappa is 0/0:
    this returns ``undefined`` (NaN by default, scikit-learn's ``replace_undefined_by``).

    >>> round(cohens_kappa(["q", "u", "u", "q"], ["q", "u", "q", "q"]), 4)
    0.5
    """
    from sklearn.metrics import cohen_kappa_score

    left, right = list(a), list(b)
    if len(left) != len(right):
        raise ValueError(f"a and b must label the same items: lengths {len(left)} != {len(right)}")
    labels = sorted(set(left) | set(right), key=repr)
    code = {label: i for i, label in enumerate(labels)}
    x = [code[v] for v in left]
    y = [code[v] for v in right]
    if len(labels) == 1:
        return float(undefined)
    return float(cohen_kappa_score(x, y, labels=list(range(len(labels)))))


def r_squared(y: ArrayLike, yhat: ArrayLike) -> float:
    """Coefficient of determination ``1 - SS_res / SS_tot`` (scikit-learn's ``r2_score``);
    NaN when ``y`` is constant.

    >>> r_squared([1, 2, 3], [1, 2, 4])
    0.5
    """
    from sklearn.metrics import r2_score

    obs, pred = _paired(y, yhat, names=("y", "yhat"))
    if np.all(obs == obs[0]):
        return math.nan
    return float(r2_score(obs, pred))


def r_squared_rows(y: np.ndarray, yhat: np.ndarray) -> np.ndarray:
    """:func:`r_squared` of each row of two ``(rows, n)`` arrays of one shape, NaN for a
    constant row.

    The same sums as scikit-learn's ``r2_score`` (squared residuals, squared deviations from the
    mean, each summed along the row), so each row's value is the one ``r_squared`` gives it;
    without ``r2_score``'s input checks, which cost 70% of T1's bootstrap (its caller,
    :func:`fit_r2_ci`'s vectorised bootstrap, passes scipy's resamples of paired arrays).

    >>> y = np.array([[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]])
    >>> r_squared_rows(y, np.array([[1.0, 2.0, 4.0]] * 2))
    array([0.5, nan])
    """
    obs = np.asarray(y, dtype=np.float64)
    pred = np.asarray(yhat, dtype=np.float64)
    if obs.ndim != 2 or obs.shape != pred.shape:  # numpy would broadcast a (1, n) silently
        raise ValueError(
            f"y and yhat must be (rows, n) arrays of one shape: {obs.shape}, {pred.shape}"
        )
    residual = np.sum((obs - pred) ** 2, axis=1)
    spread = np.sum((obs - np.mean(obs, axis=1)[:, None]) ** 2, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        # r2_score's force_finite: no residual is 1.0, whatever the spread
        r2 = np.where(residual == 0, 1.0, 1.0 - residual / spread)
    return np.where(np.all(obs == obs[:, :1], axis=1), math.nan, r2)


FitFunction = Callable[[np.ndarray, np.ndarray], Callable[[np.ndarray], np.ndarray]]
RowsFitFunction = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""fits a curve to each row of ``(rows, n)`` arrays ``x``, ``y`` and returns the fitted values"""


class UndefinedR2Error(ValueError):
    """R² or its interval is undefined: the outcome is constant in the sample or in every
    bootstrap resample of it (a caller reports the cell as not fitted, saying so)."""


def fit_r2_ci(
    x: ArrayLike,
    y: ArrayLike,
    fit_fn: FitFunction,
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    confidence: float = CONFIDENCE,
    seed: int = SEED,
    fit_rows: RowsFitFunction | None = None,
) -> tuple[float, float, float]:
    """R² of a fitted curve and a percentile bootstrap CI of the R² of the *refitted* curve.

    ``fit_fn(x, y)`` fits the curve and returns a predictor ``predict(x) -> yhat``. The point
    estimate is the in-sample R² on all points; ``scipy.stats.bootstrap`` draws ``resamples``
    paired resamples of the points (``default_rng(seed)``), each refitted and scored in-sample.
    Resamples whose R² is undefined (constant y) are left out of the percentiles; if all are,
    ValueError. Returns ``(r2, lo, hi)``.

    ``fit_rows``, the same fit for every row of ``(rows, n)`` arrays at once, makes the
    bootstrap vectorised: scipy draws the same resamples, and each resample's R² is the one
    ``fit_fn`` gives it when ``fit_rows`` fits each row as ``fit_fn`` would.
    """
    xs, ys = _paired(x, y, names=("x", "y"))
    resamples = check_value(RESAMPLES, resamples, where="fit_r2_ci", field="resamples")
    confidence = check_value(LEVEL, confidence, where="fit_r2_ci", field="confidence")
    point = r_squared(ys, np.asarray(fit_fn(xs, ys)(xs), dtype=np.float64))
    if math.isnan(point):
        raise UndefinedR2Error("y: is constant, so R² is undefined")

    def refit(xb: np.ndarray, yb: np.ndarray) -> float:
        if np.all(yb == yb[0]):
            return math.nan
        return r_squared(yb, np.asarray(fit_fn(xb, yb)(xb), dtype=np.float64))

    def refit_rows(xb: np.ndarray, yb: np.ndarray, axis: int = -1) -> np.ndarray:
        # scipy's vectorised call (only when fit_rows is given): (resamples, n) along axis -1
        return r_squared_rows(yb, np.asarray(cast(RowsFitFunction, fit_rows)(xb, yb), np.float64))

    with warnings.catch_warnings():  # undefined resamples are handled below, not warned about
        warnings.simplefilter("ignore", scipy_stats.DegenerateDataWarning)
        # scipy also takes the standard error of the resampled R²s (which we do not report):
        # numpy warns when it has too few defined values for one
        for message in ("Degrees of freedom <= 0", "invalid value encountered in"):
            warnings.filterwarnings(
                "ignore", message=message, category=RuntimeWarning, module="numpy._core._methods"
            )
        result = scipy_stats.bootstrap(
            (xs, ys),
            refit if fit_rows is None else refit_rows,
            n_resamples=resamples,
            paired=True,
            vectorized=fit_rows is not None,
            method="percentile",
            confidence_level=confidence,
            rng=np.random.default_rng(seed),
        )
    values = np.asarray(result.bootstrap_distribution, dtype=np.float64)
    defined = values[~np.isnan(values)]
    if defined.size == 0:
        raise UndefinedR2Error("y: every bootstrap resample was constant; R² CI is undefined")
    lo, hi = _percentile_ci(defined, confidence)
    return point, lo, hi
