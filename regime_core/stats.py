"""Paired comparisons of per-query outcomes, multiple-testing corrections, agreement and fit R².

Every comparison takes two arrays of equal length paired by query (``a[i]`` and ``b[i]`` are
the same question under two arms). Randomised procedures take ``seed`` (default
``config.SEED``) and a resample count (defaults in :mod:`regime_core.config`), use a NumPy
``Generator``, and return identical results for identical inputs and seed.

The verb the notebooks call is :func:`compare_paired`, which returns a
:class:`PairedComparison` record (mean difference, percentile bootstrap CI, test p-value,
discordant counts).

>>> r = compare_paired([1, 1, 1, 0, 1, 1], [0, 0, 1, 0, 0, 1], test="mcnemar", resamples=2000)
>>> (r.n, r.n_a_better, r.n_b_better, round(r.p_value, 3))
(6, 3, 0, 0.25)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy import stats as scipy_stats

from regime_core.config import BOOTSTRAP_RESAMPLES, CONFIDENCE, PERMUTATION_RESAMPLES, SEED

ArrayLike = Sequence[float] | Sequence[bool] | np.ndarray

TESTS: tuple[str, ...] = ("mcnemar", "sign", "permutation")
"""the paired tests a comparison of two arms can use

- mcnemar: exact McNemar test, for binary outcomes such as hit@5
- sign: exact sign test, for any ordinal outcome
- permutation: sign-flip permutation test, for real values such as AUC or margins
"""
EXACT_PERMUTATION_MAX_N: int = 20  # up to 2**20 sign patterns are enumerated exactly
_CHUNK_CELLS: int = 4_000_000  # bound on resample-matrix cells held in memory at once


# --- validation -------------------------------------------------------------------------------


def _vector(values: Any, name: str) -> np.ndarray:
    array = np.asarray(values)
    if array.dtype == object:
        raise ValueError(f"{name}: expected numbers or booleans, got objects")
    array = array.astype(np.float64)
    if array.ndim != 1:
        raise ValueError(f"{name}: expected a 1-D array (one value per query), got {array.shape}")
    if array.size == 0:
        raise ValueError(f"{name}: is empty; a paired comparison needs at least one query")
    if not np.all(np.isfinite(array)):
        bad = int(np.flatnonzero(~np.isfinite(array))[0])
        raise ValueError(f"{name}: value at position {bad} is NaN or infinite")
    return array


def _paired(a: Any, b: Any, names: tuple[str, str] = ("a", "b")) -> tuple[np.ndarray, np.ndarray]:
    x, y = _vector(a, names[0]), _vector(b, names[1])
    if x.size != y.size:
        raise ValueError(
            f"{names[0]} and {names[1]} must be paired by query: lengths {x.size} != {y.size}"
        )
    return x, y


def _binary(values: np.ndarray, name: str) -> np.ndarray:
    if not np.all((values == 0) | (values == 1)):
        raise ValueError(f"{name}: McNemar's test needs binary outcomes (0/1 or False/True)")
    return values.astype(bool)


def _check_resamples(resamples: int, name: str = "resamples") -> int:
    if isinstance(resamples, bool) or not isinstance(resamples, int | np.integer) or resamples < 1:
        raise ValueError(f"{name}: must be a positive integer, got {resamples!r}")
    return int(resamples)


def _check_confidence(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence: must lie strictly between 0 and 1, got {confidence!r}")
    return float(confidence)


# --- bootstrap --------------------------------------------------------------------------------


def _bootstrap_means(values: np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Means of ``resamples`` resamples (with replacement) of ``values``, in fixed-size chunks."""
    n = values.size
    chunk = max(1, _CHUNK_CELLS // n)
    means = np.empty(resamples)
    for start in range(0, resamples, chunk):
        stop = min(resamples, start + chunk)
        index = rng.integers(0, n, size=(stop - start, n))
        means[start:stop] = values[index].mean(axis=1)
    return means


def paired_bootstrap_ci(
    a: ArrayLike,
    b: ArrayLike,
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    confidence: float = CONFIDENCE,
    seed: int = SEED,
) -> tuple[float, float, float]:
    """Mean paired difference ``mean(a - b)`` and its percentile bootstrap CI.

    Queries are resampled with replacement (pairs stay together), the mean difference is
    recomputed on each of ``resamples`` resamples, and the CI is the
    ``((1 - confidence) / 2, (1 + confidence) / 2)`` percentiles of those means.

    Returns ``(mean_diff, lo, hi)``.

    >>> d, lo, hi = paired_bootstrap_ci([1, 1, 0, 1], [0, 1, 0, 0], resamples=1000)
    >>> d, lo <= d <= hi
    (0.5, True)
    """
    x, y = _paired(a, b)
    resamples = _check_resamples(resamples)
    confidence = _check_confidence(confidence)
    diff = x - y
    means = _bootstrap_means(diff, resamples, np.random.default_rng(seed))
    lo, hi = _percentile_ci(means, confidence)
    return float(diff.mean()), lo, hi


def _percentile_ci(values: np.ndarray, confidence: float) -> tuple[float, float]:
    """The ``((1 - confidence) / 2, (1 + confidence) / 2)`` percentiles of bootstrap values."""
    tail = (1.0 - confidence) / 2.0
    lo, hi = np.quantile(values, [tail, 1.0 - tail])
    return float(lo), float(hi)


# --- paired tests -----------------------------------------------------------------------------


@dataclass(frozen=True)
class TestResult:
    """A test's outcome: name, statistic, two-sided p-value and the discordant-pair count."""

    test: str
    statistic: float
    p_value: float
    n_discordant: int

    __test__ = False  # not a pytest test class, despite the name


def sign_test(a: ArrayLike, b: ArrayLike) -> TestResult:
    """Exact two-sided sign test on the discordant pairs (ties ``a == b`` are dropped).

    With ``n+ = #{a > b}`` and ``n- = #{a < b}``, ``p = binomtest(n+, n+ + n-, 0.5)``; the
    statistic is ``n+``. No discordant pair gives ``p = 1``.

    >>> sign_test([3, 2, 5, 1], [1, 2, 4, 0]).p_value
    0.25
    """
    x, y = _paired(a, b)
    n_pos, n_neg = int(np.sum(x > y)), int(np.sum(x < y))
    n_discordant = n_pos + n_neg
    if n_discordant == 0:
        return TestResult("sign", float(n_pos), 1.0, 0)
    p = scipy_stats.binomtest(n_pos, n_discordant, 0.5, alternative="two-sided").pvalue
    return TestResult("sign", float(n_pos), float(p), n_discordant)


def mcnemar(a_bool: ArrayLike, b_bool: ArrayLike, *, exact: bool = True) -> TestResult:
    """McNemar's test for paired binary outcomes (statsmodels), two-sided.

    The table is ``[[both, a only], [b only, neither]]``; only the discordant cells
    ``n_a = a only`` and ``n_b = b only`` matter. ``exact=True`` is the exact binomial test on
    them (statistic ``min(n_a, n_b)``); ``exact=False`` is the chi-square with continuity
    correction, ``(|n_a - n_b| - 1)^2 / (n_a + n_b)``. No discordant pair gives ``p = 1``
    (statsmodels' chi-square would divide by zero).
    """
    from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

    x, y = _paired(a_bool, b_bool, names=("a_bool", "b_bool"))
    x, y = _binary(x, "a_bool"), _binary(y, "b_bool")
    n_a, n_b = int(np.sum(x & ~y)), int(np.sum(~x & y))
    name = "mcnemar_exact" if exact else "mcnemar_chi2"
    if n_a + n_b == 0:
        return TestResult(name, 0.0, 1.0, 0)
    table = [[int(np.sum(x & y)), n_a], [n_b, int(np.sum(~x & ~y))]]
    result = sm_mcnemar(table, exact=exact, correction=True)
    return TestResult(name, float(result.statistic), float(result.pvalue), n_a + n_b)


def _sign_flip_sums(diff: np.ndarray, signs: np.ndarray) -> np.ndarray:
    return signs @ diff


def paired_permutation_test(
    a: ArrayLike,
    b: ArrayLike,
    *,
    resamples: int = PERMUTATION_RESAMPLES,
    seed: int = SEED,
) -> TestResult:
    """Two-sided paired permutation (sign-flip) test of ``mean(a - b) = 0``.

    Under the null each difference ``d_i = a_i - b_i`` is equally likely to have either sign.
    Zero differences are dropped (flipping them changes nothing); with ``m`` non-zero
    differences the statistic is ``T = sum(d)``. If ``m <= 20`` all ``2^m`` sign patterns are
    enumerated and ``p = #{|T*| >= |T|} / 2^m`` exactly; otherwise ``resamples`` random
    patterns give ``p = (1 + #{|T*| >= |T|}) / (resamples + 1)`` (the +1 counts the observed
    pattern, so p is never 0). The statistic reported is ``mean(a - b)`` over all pairs.

    >>> round(paired_permutation_test([3, 2, 5, 1], [1, 2, 4, 0]).p_value, 4)
    0.25
    """
    x, y = _paired(a, b)
    resamples = _check_resamples(resamples)
    diff_all = x - y
    diff = diff_all[diff_all != 0]
    m = diff.size
    if m == 0:
        return TestResult("permutation", 0.0, 1.0, 0)
    observed = abs(diff.sum())
    # Sums of the same values in another order can differ in the last bits; count those as ties.
    tolerance = 1e-9 * max(1.0, float(np.abs(diff).sum()))
    if m <= EXACT_PERMUTATION_MAX_N:
        hits = 0
        rows = max(1, _CHUNK_CELLS // m)
        bits = np.arange(m)
        for start in range(0, 2**m, rows):
            # Pattern number j flips the signs of the differences at the set bits of j.
            pattern = np.arange(start, min(2**m, start + rows))[:, None]
            signs = 1.0 - 2.0 * ((pattern >> bits) & 1)
            hits += int(np.sum(np.abs(_sign_flip_sums(diff, signs)) >= observed - tolerance))
        p = hits / 2**m
        name = "permutation_exact"
    else:
        rng = np.random.default_rng(seed)
        hits = 0
        rows = max(1, _CHUNK_CELLS // m)
        for start in range(0, resamples, rows):
            count = min(rows, resamples - start)
            signs = rng.choice(np.array([-1.0, 1.0]), size=(count, m))
            hits += int(np.sum(np.abs(_sign_flip_sums(diff, signs)) >= observed - tolerance))
        p = (1 + hits) / (resamples + 1)
        name = "permutation"
    return TestResult(name, float(diff_all.mean()), float(min(1.0, p)), m)


# --- multiple testing -------------------------------------------------------------------------


def _pvalues(pvalues: Any) -> np.ndarray:
    p = _vector(pvalues, "pvalues")
    if np.any((p < 0) | (p > 1)):
        raise ValueError("pvalues: every p-value must lie in [0, 1]")
    return p


def bonferroni(pvalues: ArrayLike) -> np.ndarray:
    """Bonferroni-adjusted p-values: ``min(1, m * p_i)``.

    >>> bonferroni([0.01, 0.04, 0.5]).tolist()
    [0.03, 0.12, 1.0]
    """
    p = _pvalues(pvalues)
    return np.minimum(1.0, p * p.size)


def holm(pvalues: ArrayLike) -> np.ndarray:
    """Holm step-down adjusted p-values, in the input order.

    Sorting ascending, ``p_(i)`` becomes ``max_{j <= i} min(1, (m - j + 1) p_(j))``; reject
    where the adjusted value is below alpha. Controls the family-wise error like Bonferroni,
    with more power.

    >>> holm([0.01, 0.04, 0.03]).round(4).tolist()
    [0.03, 0.06, 0.06]
    """
    p = _pvalues(pvalues)
    m = p.size
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.maximum.accumulate(scaled)
    return adjusted


# --- agreement and fit ------------------------------------------------------------------------


def cohens_kappa(a: Sequence[Any], b: Sequence[Any], *, undefined: float = math.nan) -> float:
    """Cohen's kappa between two labelings of the same items (labels of any hashable type).

    ``kappa = (p_o - p_e) / (1 - p_e)`` with observed agreement ``p_o`` and chance agreement
    ``p_e = sum_l P_a(l) P_b(l)``. When both labelings use one and the same label, ``p_e = 1``
    and kappa is 0/0: this returns ``undefined`` (NaN by default, like scikit-learn's
    ``replace_undefined_by``).

    >>> round(cohens_kappa(["q", "u", "u", "q"], ["q", "u", "q", "q"]), 4)
    0.5
    """
    left, right = list(a), list(b)
    if len(left) == 0 or len(right) == 0:
        raise ValueError("a, b: need at least one labelled item")
    if len(left) != len(right):
        raise ValueError(f"a and b must label the same items: lengths {len(left)} != {len(right)}")
    labels = sorted(set(left) | set(right), key=repr)
    code = {label: i for i, label in enumerate(labels)}
    x = np.array([code[v] for v in left])
    y = np.array([code[v] for v in right])
    confusion = np.zeros((len(labels), len(labels)))
    np.add.at(confusion, (x, y), 1.0)
    confusion /= confusion.sum()
    p_observed = float(np.trace(confusion))
    p_chance = float(confusion.sum(axis=1) @ confusion.sum(axis=0))
    if math.isclose(p_chance, 1.0):
        return float(undefined)
    return (p_observed - p_chance) / (1.0 - p_chance)


def r_squared(y: ArrayLike, yhat: ArrayLike) -> float:
    """Coefficient of determination ``1 - SS_res / SS_tot``; NaN when ``y`` is constant.

    >>> r_squared([1, 2, 3], [1, 2, 4])
    0.5
    """
    obs, pred = _paired(y, yhat, names=("y", "yhat"))
    ss_tot = float(np.sum((obs - obs.mean()) ** 2))
    if ss_tot == 0.0:
        return math.nan
    return 1.0 - float(np.sum((obs - pred) ** 2)) / ss_tot


FitFunction = Callable[[np.ndarray, np.ndarray], Callable[[np.ndarray], np.ndarray]]


def fit_r2_ci(
    x: ArrayLike,
    y: ArrayLike,
    fit_fn: FitFunction,
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    confidence: float = CONFIDENCE,
    seed: int = SEED,
) -> tuple[float, float, float]:
    """R² of a fitted curve and a percentile bootstrap CI of the R² of the *refitted* curve.

    ``fit_fn(x, y)`` fits the curve and returns a predictor ``predict(x) -> yhat``. The point
    estimate is the in-sample R² on all points; each of ``resamples`` bootstrap resamples
    (points with replacement) is refitted and scored in-sample. Resamples whose R² is undefined
    (constant y) are left out; if all are, ValueError. Returns ``(r2, lo, hi)``.
    """
    xs, ys = _paired(x, y, names=("x", "y"))
    resamples = _check_resamples(resamples)
    confidence = _check_confidence(confidence)
    point = r_squared(ys, np.asarray(fit_fn(xs, ys)(xs), dtype=np.float64))
    if math.isnan(point):
        raise ValueError("y: is constant, so R² is undefined")
    rng = np.random.default_rng(seed)
    values = np.empty(resamples)
    for i in range(resamples):
        index = rng.integers(0, xs.size, size=xs.size)
        xb, yb = xs[index], ys[index]
        values[i] = r_squared(yb, np.asarray(fit_fn(xb, yb)(xb), dtype=np.float64))
    defined = values[~np.isnan(values)]
    if defined.size == 0:
        raise ValueError("y: every bootstrap resample was constant; R² CI is undefined")
    lo, hi = _percentile_ci(defined, confidence)
    return point, lo, hi


# --- the record the notebooks keep ------------------------------------------------------------


@dataclass(frozen=True)
class PairedComparison:
    """Arm ``a`` against arm ``b`` on the same queries: effect, CI and test.

    ``diff = mean_a - mean_b`` with a percentile bootstrap CI ``[ci_lo, ci_hi]`` at
    ``confidence``; ``p_value`` is the two-sided p-value of ``test``. ``n_a_better`` and
    ``n_b_better`` count the queries where ``a > b`` and ``a < b``;
    ``n_discordant`` is their sum.
    """

    label_a: str
    label_b: str
    test: str
    n: int
    mean_a: float
    mean_b: float
    diff: float
    ci_lo: float
    ci_hi: float
    confidence: float
    p_value: float
    statistic: float
    n_discordant: int
    n_a_better: int
    n_b_better: int
    bootstrap_resamples: int
    permutation_resamples: int | None
    seed: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def compare_paired(
    a: ArrayLike,
    b: ArrayLike,
    *,
    test: str = "mcnemar",
    resamples: int = BOOTSTRAP_RESAMPLES,
    permutation_resamples: int = PERMUTATION_RESAMPLES,
    confidence: float = CONFIDENCE,
    seed: int = SEED,
    label_a: str = "a",
    label_b: str = "b",
) -> PairedComparison:
    """Compare two arms' per-query outcomes: mean difference, bootstrap CI and a paired test.

    ``test`` is ``"mcnemar"`` (exact; binary outcomes such as hit@5), ``"sign"`` (exact; any
    ordinal outcome) or ``"permutation"`` (sign flips; real-valued outcomes such as AUC or
    margins). The bootstrap uses ``resamples`` and ``seed``; the permutation test
    ``permutation_resamples`` and the same seed.
    """
    if test not in TESTS:
        raise ValueError(f"test: unknown test {test!r}; choose one of {', '.join(TESTS)}")
    x, y = _paired(a, b)
    if test == "mcnemar":
        _binary(x, "a")
        _binary(y, "b")
    diff, lo, hi = paired_bootstrap_ci(x, y, resamples=resamples, confidence=confidence, seed=seed)
    if test == "mcnemar":
        result = mcnemar(x, y, exact=True)
    elif test == "sign":
        result = sign_test(x, y)
    else:
        result = paired_permutation_test(x, y, resamples=permutation_resamples, seed=seed)
    return PairedComparison(
        label_a=label_a,
        label_b=label_b,
        test=result.test,
        n=int(x.size),
        mean_a=float(x.mean()),
        mean_b=float(y.mean()),
        diff=diff,
        ci_lo=lo,
        ci_hi=hi,
        confidence=float(confidence),
        p_value=result.p_value,
        statistic=result.statistic,
        n_discordant=int(np.sum(x != y)),
        n_a_better=int(np.sum(x > y)),
        n_b_better=int(np.sum(x < y)),
        bootstrap_resamples=int(resamples),
        permutation_resamples=int(permutation_resamples) if test == "permutation" else None,
        seed=int(seed),
    )
