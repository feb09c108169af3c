"""Paired comparisons of per-query outcomes and multiple-testing corrections.

Every comparison takes two arrays of equal length paired by query (``a[i]`` and ``b[i]`` are
the same question under two arms). The computations are scipy's and statsmodels' where they
offer one; this module validates the inputs, fixes the choices (two-sided, percentile
intervals, seeds) and keeps the record the notebooks write, :class:`PairedComparison`.

**One procedure per comparison of hit rates.** Paired hit@k outcomes get Tango's (1998) score
interval of the difference of hit rates (:func:`score_interval`) and the p of the test it
inverts, McNemar's asymptotic test (:func:`score_test`, statsmodels' ``mcnemar(exact=False)``
statistic), both without continuity correction as Fagerland, Lydersen and Laake (2013, 2014)
recommend (``config.CONTINUITY_CORRECTION`` restores Edwards' correction): the interval excludes
zero exactly when ``p < 1 - confidence``, and it treats the number of discordant pairs as random
(it can reach past ``±m/n``, is never ``[0, 0]``). The exact conditional p (``p_exact``) and
the mid-p (``p_mid``) are kept beside it. Nothing is resampled: every end follows from the counts.

>>> r = compare_paired([1, 1, 1, 0, 1, 1], [0, 0, 1, 0, 0, 1])
>>> (r.n, r.n_a_better, r.n_b_better, round(r.p_exact, 3), round(r.p_mid, 3), r.ci_method)
(6, 3, 0, 0.25, 0.125, 'score')
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from scipy import stats as scipy_stats

from regime_core.config import (
    BOOTSTRAP_RESAMPLES,
    CONFIDENCE,
    CONTINUITY_CORRECTION,
    PERMUTATION_RESAMPLES,
    SEED,
)
from regime_core.inputs import Choice, check_value
from regime_core.inputs.configs import LEVEL
from regime_core.inputs.statistics import COUNT, RESAMPLES

ArrayLike = Sequence[float] | Sequence[bool] | np.ndarray

TESTS: tuple[str, ...] = ("mcnemar", "sign", "permutation")
"""the paired tests a comparison of two arms can use: mcnemar (McNemar's asymptotic test and the
score interval it inverts, for binary outcomes such as hit@5; the exact conditional p and the
mid-p kept beside it), sign (exact, any ordinal outcome), permutation (sign flips, real
values such as AUC or margins)"""
EXACT_PERMUTATION_MAX_N: int = 20  # up to 2**20 sign patterns are enumerated exactly


# --- validation -------------------------------------------------------------------------------


def _vector(values: Any, name: str) -> np.ndarray:
    """``values`` as one float per query, refused when a paired comparison would be silently
    wrong with it: not one value per query, none at all, or NaN (``None`` becomes NaN here)."""
    array = np.asarray(values, dtype=np.float64)  # text or objects: numpy's own ValueError
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


# --- the exact McNemar test -----------------------------------------------------------------


@dataclass(frozen=True)
class TestResult:
    """A test's outcome: name, statistic, two-sided p-value and the discordant-pair count."""

    test: str
    statistic: float
    p_value: float
    n_discordant: int

    __test__ = False  # not a pytest test class, despite the name


def mcnemar(a_bool: ArrayLike, b_bool: ArrayLike, *, exact: bool = True) -> TestResult:
    """McNemar's test for paired binary outcomes (statsmodels), two-sided.

    The table is ``[[both, a only], [b only, neither]]``; only the discordant cells
    ``n_a = a only`` and ``n_b = b only`` matter. ``exact=True`` is the exact binomial test on
    them (statistic ``min(n_a, n_b)``, ``p = min(1, 2 P(X <= min))`` with ``X ~ Bin(n_a + n_b,
    1/2)``); ``exact=False`` is the χ² test, with continuity correction when
    ``config.CONTINUITY_CORRECTION``. No discordant pair gives ``p = 1``.
    """
    from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

    x, y = _paired(a_bool, b_bool, names=("a_bool", "b_bool"))
    x, y = _binary(x, "a_bool"), _binary(y, "b_bool")
    n_a, n_b = int(np.sum(x & ~y)), int(np.sum(~x & y))
    name = "mcnemar_exact" if exact else "mcnemar_chi2"
    if n_a + n_b == 0:
        return TestResult(name, 0.0, 1.0, 0)
    table = [[int(np.sum(x & y)), n_a], [n_b, int(np.sum(~x & ~y))]]
    result = sm_mcnemar(table, exact=exact, correction=CONTINUITY_CORRECTION)
    return TestResult(name, float(result.statistic), float(result.pvalue), n_a + n_b)


def mcnemar_mid_p(n_a_better: int, n_b_better: int) -> float:
    """The mid-p McNemar test (Fagerland, Lydersen and Laake 2013), two-sided: the exact
    conditional p less the probability of the observed split, ``2·P(X <= k) - P(X = k)`` with
    ``k = min(b, c)``, ``X ~ Bin(b + c, 1/2)`` (scipy); 1 with no discordant pair or ``b = c``.

    >>> round(mcnemar_mid_p(5, 0), 5), mcnemar_mid_p(8, 8)
    (0.03125, 1.0)
    """
    b = check_value(COUNT, n_a_better, where="mcnemar_mid_p", field="n_a_better")
    c = check_value(COUNT, n_b_better, where="mcnemar_mid_p", field="n_b_better")
    k, m = min(b, c), b + c
    if m == 0:
        return 1.0
    p = 2.0 * scipy_stats.binom.cdf(k, m, 0.5) - scipy_stats.binom.pmf(k, m, 0.5)
    return float(min(1.0, p))


# --- the paired difference of hit rates: Tango's score interval and its test -------------------


def tango_statistic(
    delta0: ArrayLike | float,
    n_a_better: Any,
    n_b_better: Any,
    n: Any,
    *,
    continuity: bool = CONTINUITY_CORRECTION,
) -> np.ndarray:
    """Tango's (1998) score statistic for ``H0: p_a - p_b = delta0`` on paired binary outcomes.

    With ``b = n_a_better`` (a hit, b missed), ``c = n_b_better`` and ``n`` pairs,
    ``T = (b - c - n·delta0) / sqrt(n·(2·q + delta0·(1 - delta0)))``, where ``q`` is the maximum
    likelihood estimate of the share of pairs won by ``b`` under the null:
    ``q = (sqrt(B² - 4AC) - B) / (2A)``, ``A = 2n``, ``B = -b - c + (2n - b + c)·delta0``,
    ``C = -c·delta0·(1 - delta0)``. ``T`` falls as ``delta0`` rises; at ``delta0 = 0`` it is
    McNemar's ``(b - c) / sqrt(b + c)``. ``continuity=True`` shrinks the numerator by 1 towards
    zero, to 0 within 1 of it (Edwards' correction), so that at ``delta0 = 0`` ``T²`` is
    ``max(|b - c| - 1, 0)² / (b + c)``: statsmodels' ``mcnemar(exact=False, correction=True)``
    except at ``b = c``, where statsmodels squares ``-1`` (8 and 8 give it p = 0.80, this
    statistic p = 1). Without the correction they agree everywhere. A zero denominator
    (``delta0 = ±1``, or no discordant pair at ``delta0 = 0``) gives 0 where the numerator is 0
    and ``±inf`` elsewhere. Broadcasts: arrays in, an array out.

    >>> float(tango_statistic(0.0, 30, 10, 200, continuity=False)) == (30 - 10) / 40 ** 0.5
    True
    >>> float(tango_statistic(0.0, 30, 10, 200, continuity=True)) == (30 - 10 - 1) / 40 ** 0.5
    True
    """
    d = np.asarray(delta0, dtype=np.float64)
    b = np.asarray(n_a_better, dtype=np.float64)
    c = np.asarray(n_b_better, dtype=np.float64)
    total = np.asarray(n, dtype=np.float64)
    big_a = 2.0 * total
    big_b = -b - c + (2.0 * total - b + c) * d
    big_c = -c * d * (1.0 - d)
    q = (np.sqrt(np.maximum(big_b * big_b - 4.0 * big_a * big_c, 0.0)) - big_b) / (2.0 * big_a)
    numerator = b - c - total * d
    if continuity:
        numerator = np.sign(numerator) * np.maximum(np.abs(numerator) - 1.0, 0.0)
    variance = total * (2.0 * q + d * (1.0 - d))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = numerator / np.sqrt(variance)
    degenerate = ~(variance > 0.0)
    infinite = np.where(numerator > 0.0, np.inf, -np.inf)
    return np.where(degenerate, np.where(numerator == 0.0, 0.0, infinite), t)


def critical_value(confidence: float) -> float:
    """The standard normal's ``(1 + confidence) / 2`` quantile, ``z`` of a two-sided interval.

    >>> round(critical_value(0.95), 4)
    1.96
    """
    return float(scipy_stats.norm.isf((1.0 - confidence) / 2.0))


#: bisection steps of :func:`score_interval`: 2^-64 of the unit interval, below float spacing
_BISECTION_STEPS: int = 64


def score_interval(
    n_a_better: Any,
    n_b_better: Any,
    n: Any,
    *,
    confidence: float = CONFIDENCE,
    continuity: bool = CONTINUITY_CORRECTION,
) -> tuple[np.ndarray, np.ndarray]:
    """The score interval of ``p_a - p_b`` for paired binary outcomes (Tango 1998), with
    Edwards' continuity correction if ``continuity``; vectorised: ``(lo, hi)`` arrays of the
    inputs' broadcast shape.

    The interval is ``{delta0 : |T(delta0)| <= z}`` (:func:`tango_statistic` ``T``, ``z`` the
    standard normal's ``(1 + confidence) / 2`` quantile); ``T`` falls with ``delta0``, so each end
    is bisected on ``[-1, estimate]`` and ``[estimate, 1]`` (:data:`_BISECTION_STEPS` halvings:
    exact to float precision on every machine). The ends may pass ``±m/n`` (``m`` discordant
    pairs); with none the interval is not a point. It excludes ``delta0`` exactly when
    :func:`score_test` rejects it at ``1 - confidence`` (McNemar's χ² test at 0). Why no
    correction by default: ``benchmarks/bench_interval_coverage.py``.

    >>> lo, hi = score_interval(0, 0, 192, continuity=False)
    >>> round(float(lo), 4), round(float(hi), 4)
    (-0.0196, 0.0196)
    """
    confidence = check_value(LEVEL, confidence, where="score_interval", field="confidence")
    b, c, total = np.broadcast_arrays(
        np.asarray(n_a_better, dtype=np.int64),
        np.asarray(n_b_better, dtype=np.int64),
        np.asarray(n, dtype=np.int64),
    )
    if np.any(b < 0) or np.any(c < 0) or np.any(total <= 0) or np.any(b + c > total):
        raise ValueError(
            "score_interval: counts must be whole numbers >= 0 with n_a_better + n_b_better <= n"
            f" and n > 0; got {b.ravel()[:3]}, {c.ravel()[:3]}, {total.ravel()[:3]}"
        )
    z = critical_value(confidence)
    estimate = (b - c) / total

    def statistic(d: np.ndarray) -> np.ndarray:
        return tango_statistic(d, b, c, total, continuity=continuity)

    # lower end: below it T > z; the bracket's right side is the smallest point found inside
    _, lo = _bisect(lambda d: statistic(d) > z, np.full(b.shape, -1.0), estimate)
    # upper end: up to it T >= -z; the bracket's left side is the largest point found inside
    hi, _ = _bisect(lambda d: statistic(d) >= -z, estimate, np.ones(b.shape))
    return lo, hi


def _bisect(
    boundary_is_right_of: Callable[[np.ndarray], np.ndarray], left: np.ndarray, right: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Bisect every element of ``[left, right]`` at once towards the point where
    ``boundary_is_right_of(x)`` turns from true to false; returns the final ``(left, right)``."""
    left, right = np.array(left, dtype=np.float64), np.array(right, dtype=np.float64)
    for _ in range(_BISECTION_STEPS):
        mid = (left + right) / 2.0
        go_right = boundary_is_right_of(mid)
        left = np.where(go_right, mid, left)
        right = np.where(go_right, right, mid)
    return left, right


@lru_cache(maxsize=1 << 16)
def _score_interval_ends(b: int, c: int, n: int, confidence: float) -> tuple[float, float]:
    """:func:`score_interval`'s ends, kept per counts (they are a pure function of them): a run
    compares thousands of arm pairs whose counts repeat, each interval 128 evaluations of T."""
    lo, hi = score_interval(b, c, n, confidence=confidence)
    return float(lo), float(hi)


def score_test(
    n_a_better: int,
    n_b_better: int,
    n: int,
    *,
    delta0: float = 0.0,
    continuity: bool = CONTINUITY_CORRECTION,
) -> TestResult:
    """The two-sided score test of ``p_a - p_b = delta0`` (paired binary outcomes) that
    :func:`score_interval` inverts: ``p = 2·(1 - Φ(|T(delta0)|))``. At ``delta0 = 0`` it is
    McNemar's χ² test, ``(b - c)² / (b + c) ~ χ²₁`` (with the continuity correction,
    ``max(|b - c| - 1, 0)² / (b + c)``); no discordant pair gives ``p = 1``. The statistic
    reported is ``T``.

    >>> round(score_test(30, 10, 200, continuity=False).p_value, 5)
    0.00157
    """
    b = check_value(COUNT, n_a_better, where="score_test", field="n_a_better")
    c = check_value(COUNT, n_b_better, where="score_test", field="n_b_better")
    total = check_value(COUNT, n, where="score_test", field="n")
    if total == 0 or b + c > total:
        raise ValueError(f"n: {total} pairs cannot hold {b + c} discordant ones")
    t = float(tango_statistic(delta0, b, c, total, continuity=continuity))
    p = 1.0 if t == 0.0 else float(min(1.0, 2.0 * scipy_stats.norm.sf(abs(t))))
    name = "mcnemar_chi2_cc" if continuity else "mcnemar_chi2"
    return TestResult(name if delta0 == 0.0 else "paired_score", t, p, b + c)


# --- bootstrap (scipy) ------------------------------------------------------------------------


def paired_bootstrap_ci(
    a: ArrayLike,
    b: ArrayLike,
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    confidence: float = CONFIDENCE,
    seed: int = SEED,
) -> tuple[float, float, float]:
    """Mean paired difference ``mean(a - b)`` and its percentile bootstrap CI:
    ``scipy.stats.bootstrap`` resamples the queries with replacement (pairs stay together) and
    takes the ``((1 - confidence) / 2, (1 + confidence) / 2)`` percentiles of the mean
    differences of ``resamples`` resamples, drawn by ``numpy.random.default_rng(seed)``;
    returns ``(mean_diff, lo, hi)``.

    >>> d, lo, hi = paired_bootstrap_ci([1, 1, 0, 1], [0, 1, 0, 0], resamples=1000)
    >>> d, lo <= d <= hi
    (0.5, True)
    """
    x, y = _paired(a, b)
    resamples = check_value(RESAMPLES, resamples, where="paired_bootstrap_ci", field="resamples")
    confidence = check_value(LEVEL, confidence, where="paired_bootstrap_ci", field="confidence")
    diff = x - y
    if np.all(diff == diff[0]):  # every resample has the same mean: scipy warns, the CI is a point
        return float(diff.mean()), float(diff[0]), float(diff[0])
    result = scipy_stats.bootstrap(
        (diff,),
        np.mean,
        n_resamples=resamples,
        confidence_level=confidence,
        method="percentile",
        vectorized=True,
        rng=np.random.default_rng(seed),
    )
    return (
        float(diff.mean()),
        float(result.confidence_interval.low),
        float(result.confidence_interval.high),
    )


# --- other paired tests (scipy) ---------------------------------------------------------------


def sign_test(a: ArrayLike, b: ArrayLike) -> TestResult:
    """Exact two-sided sign test of the discordant pairs (ties dropped), statistic ``n+``: the p
    of ``binomtest(n+, n+ + n-, 0.5)``, ``n+ = #{a > b}``, ``n- = #{a < b}``; none gives p = 1.

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


def paired_permutation_test(
    a: ArrayLike,
    b: ArrayLike,
    *,
    resamples: int = PERMUTATION_RESAMPLES,
    seed: int = SEED,
) -> TestResult:
    """Two-sided paired permutation (sign-flip) test of ``mean(a - b) = 0``.

    ``scipy.stats.permutation_test`` on the non-zero differences ``d_i = a_i - b_i`` (flipping a
    zero changes nothing) with ``permutation_type="samples"``, which flips their signs, and the
    statistic ``sum(d)``: every one of the ``2^m`` sign patterns when ``m <= 20``
    (:data:`EXACT_PERMUTATION_MAX_N`, exact), else ``resamples`` random ones drawn by
    ``default_rng(seed)``. The p-value is scipy's two-sided one (twice the smaller tail, at most
    1); the statistic reported is ``mean(a - b)`` over all pairs.

    >>> round(paired_permutation_test([3, 2, 5, 1], [1, 2, 4, 0]).p_value, 4)
    0.25
    """
    x, y = _paired(a, b)
    resamples = check_value(
        RESAMPLES, resamples, where="paired_permutation_test", field="resamples"
    )
    diff_all = x - y
    diff = diff_all[diff_all != 0]
    m = diff.size
    if m == 0:
        return TestResult("permutation", 0.0, 1.0, 0)
    if m == 1:  # two sign patterns, ±d, as extreme as each other (scipy needs two observations)
        return TestResult("permutation_exact", float(diff_all.mean()), 1.0, 1)
    exact = m <= EXACT_PERMUTATION_MAX_N
    result = scipy_stats.permutation_test(
        (diff,),
        lambda d, axis=-1: np.sum(d, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=np.inf if exact else resamples,
        alternative="two-sided",
        rng=np.random.default_rng(seed),
    )
    name = "permutation_exact" if exact else "permutation"
    return TestResult(name, float(diff_all.mean()), float(min(1.0, result.pvalue)), m)


# --- the record the notebooks keep ------------------------------------------------------------


@dataclass(frozen=True)
class PairedComparison:
    """Arm ``a`` against arm ``b`` on the same queries: effect, interval and test.

    ``diff = mean_a - mean_b`` with the interval ``[ci_lo, ci_hi]`` at ``confidence``, made by
    ``ci_method`` (a key of :data:`regime_core.vocabulary.INTERVAL_NAMES`: for binary outcomes
    the score interval that inverts ``test``, whose two-sided p-value is ``p_value``).
    ``n_a_better`` and ``n_b_better`` count the queries where ``a > b`` and ``a < b``;
    ``n_discordant`` is their sum. ``p_exact`` is the exact conditional McNemar p and ``p_mid``
    its mid-p (binary outcomes; ``None`` otherwise), kept for comparison with software that
    reports them; no verdict reads them. ``bootstrap_resamples`` is ``None`` when nothing was
    resampled.
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
    ci_method: str
    p_value: float
    statistic: float
    p_exact: float | None
    p_mid: float | None
    n_discordant: int
    n_a_better: int
    n_b_better: int
    bootstrap_resamples: int | None
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
    """Compare two arms' per-query outcomes: mean difference, interval and a paired test.

    ``test``: ``"mcnemar"`` (binary outcomes such as hit@5: :func:`score_test` and the score
    interval it inverts, :func:`score_interval`; nothing resampled),
    ``"sign"`` (exact; ordinal outcomes) or ``"permutation"`` (sign flips; real values such as
    AUC): these two report a percentile bootstrap interval (``resamples``, ``seed``; the
    permutation test uses ``permutation_resamples``, same seed).
    """
    check_value(Choice(TESTS), test, where="compare_paired", field="test")
    x, y = _paired(a, b)
    confidence = check_value(LEVEL, confidence, where="compare_paired", field="confidence")
    n_a_better, n_b_better = int(np.sum(x > y)), int(np.sum(x < y))
    if test == "mcnemar":
        _binary(x, "a")
        _binary(y, "b")
        result = score_test(n_a_better, n_b_better, int(x.size))
        p_exact: float | None = mcnemar(x, y, exact=True).p_value
        p_mid: float | None = mcnemar_mid_p(n_a_better, n_b_better)
        diff = (n_a_better - n_b_better) / int(x.size)
        lo, hi = _score_interval_ends(n_a_better, n_b_better, int(x.size), confidence)
        ci_method = "score_cc" if CONTINUITY_CORRECTION else "score"
        used_resamples = None
    else:
        diff, lo, hi = paired_bootstrap_ci(
            x, y, resamples=resamples, confidence=confidence, seed=seed
        )
        if test == "sign":
            result = sign_test(x, y)
        else:
            result = paired_permutation_test(x, y, resamples=permutation_resamples, seed=seed)
        ci_method, used_resamples = "bootstrap_percentile", int(resamples)
        p_exact = p_mid = None
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
        confidence=confidence,
        ci_method=ci_method,
        p_value=result.p_value,
        statistic=result.statistic,
        p_exact=p_exact,
        p_mid=p_mid,
        n_discordant=n_a_better + n_b_better,
        n_a_better=n_a_better,
        n_b_better=n_b_better,
        bootstrap_resamples=used_resamples,
        permutation_resamples=int(permutation_resamples) if test == "permutation" else None,
        seed=int(seed),
    )
