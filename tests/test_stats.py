"""Paired statistics against scipy, statsmodels and scikit-learn; determinism; CI coverage."""

from __future__ import annotations

import doctest
import warnings

import numpy as np
import pytest
from helpers import refused
from scipy import stats as scipy_stats

from regime_core import stats
from regime_core.config import SEED
from regime_core.multiplicity import holm, holm_levels
from regime_core.stats import (
    PairedComparison,
    compare_paired,
    mcnemar,
    paired_bootstrap_ci,
    paired_permutation_test,
    score_interval,
    score_test,
    sign_test,
)


def paired_binary(seed: int, n: int = 200, p_a: float = 0.6, p_b: float = 0.5):
    rng = np.random.default_rng(seed)
    return rng.random(n) < p_a, rng.random(n) < p_b


def test_doctests_pass() -> None:
    result = doctest.testmod(stats)
    assert result.attempted > 5
    assert result.failed == 0


# --- bootstrap --------------------------------------------------------------------------------


def test_bootstrap_is_deterministic_and_seed_dependent() -> None:
    a, b = paired_binary(0)
    first = paired_bootstrap_ci(a, b, resamples=2000, seed=SEED)
    assert first == paired_bootstrap_ci(a, b, resamples=2000, seed=SEED)
    assert first != paired_bootstrap_ci(a, b, resamples=2000, seed=SEED + 1)
    diff, lo, hi = first
    assert diff == pytest.approx(np.mean(a.astype(float) - b))
    assert lo < diff < hi


def test_bootstrap_matches_scipy_percentile_bootstrap() -> None:
    rng = np.random.default_rng(1)
    a = rng.normal(0.3, 1.0, 300)
    b = a - rng.normal(0.1, 0.5, 300)
    _, lo, hi = paired_bootstrap_ci(a, b, resamples=20_000, confidence=0.9)
    reference = scipy_stats.bootstrap(
        (a - b,), np.mean, n_resamples=20_000, confidence_level=0.9, method="percentile", rng=3
    ).confidence_interval
    # Different random streams: agreement to a small fraction of the CI width.
    width = hi - lo
    assert lo == pytest.approx(reference.low, abs=0.03 * width)
    assert hi == pytest.approx(reference.high, abs=0.03 * width)


def test_bootstrap_ci_covers_true_difference_at_about_nominal_rate() -> None:
    rng = np.random.default_rng(2)
    true_diff, covered, trials = 0.1, 0, 200
    for trial in range(trials):
        a = rng.random(120) < 0.6
        b = rng.random(120) < 0.5
        _, lo, hi = paired_bootstrap_ci(a, b, resamples=1000, confidence=0.9, seed=trial)
        covered += lo <= true_diff <= hi
    # Binomial(200, 0.9) lies in [0.84, 0.96] with overwhelming probability.
    assert 0.84 <= covered / trials <= 0.96


def test_bootstrap_chunking_handles_more_cells_than_one_chunk() -> None:
    a = np.arange(5000) % 3 == 0
    b = np.zeros(5000, dtype=bool)
    diff, lo, hi = paired_bootstrap_ci(a, b, resamples=1200)  # 6M cells: two chunks
    assert lo < diff < hi
    assert hi - lo < 0.05


# --- paired tests -----------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(4))
def test_sign_test_matches_binomtest_and_statsmodels(seed: int) -> None:
    from statsmodels.stats.descriptivestats import sign_test as sm_sign_test

    rng = np.random.default_rng(seed)
    a = rng.integers(0, 4, 40).astype(float)
    b = rng.integers(0, 4, 40).astype(float)
    ours = sign_test(a, b)
    n_pos, n_neg = int(np.sum(a > b)), int(np.sum(a < b))
    assert ours.n_discordant == n_pos + n_neg
    assert ours.p_value == pytest.approx(scipy_stats.binomtest(n_pos, n_pos + n_neg).pvalue)
    assert ours.p_value == pytest.approx(sm_sign_test(a - b, mu0=0)[1])


@pytest.mark.parametrize("seed", range(4))
def test_mcnemar_matches_exact_binomial_and_chi_square(seed: int) -> None:
    a, b = paired_binary(seed, n=80)
    n_a, n_b = int(np.sum(a & ~b)), int(np.sum(~a & b))
    exact = mcnemar(a, b)
    assert exact.n_discordant == n_a + n_b
    assert exact.statistic == min(n_a, n_b)
    assert exact.p_value == pytest.approx(scipy_stats.binomtest(n_a, n_a + n_b).pvalue)
    chi2 = mcnemar(a, b, exact=False)
    statistic = (n_a - n_b) ** 2 / (n_a + n_b)  # no continuity correction (the default)
    assert chi2.statistic == pytest.approx(statistic)
    assert chi2.p_value == pytest.approx(scipy_stats.chi2.sf(statistic, df=1))


def test_no_discordant_pairs_give_p_one() -> None:
    same = np.array([True, False, True])
    assert mcnemar(same, same).p_value == 1.0
    assert mcnemar(same, same, exact=False).p_value == 1.0
    assert sign_test(same, same).p_value == 1.0
    assert paired_permutation_test(same, same).p_value == 1.0


@pytest.mark.parametrize("n", [6, 12, 16])
def test_exact_permutation_matches_scipy(n: int) -> None:
    rng = np.random.default_rng(n)
    a = rng.normal(0.4, 1.0, n)
    b = rng.normal(0.0, 1.0, n)
    ours = paired_permutation_test(a, b)
    reference = scipy_stats.permutation_test(
        (a, b),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        permutation_type="samples",
        n_resamples=np.inf,
        vectorized=True,
    )
    assert ours.test == "permutation_exact"
    assert ours.p_value == pytest.approx(reference.pvalue, rel=1e-9)
    assert ours.statistic == pytest.approx(np.mean(a - b))


def test_exact_permutation_with_ties_and_zero_differences() -> None:
    a = np.array([1, 1, 0, 1, 1, 0, 1, 1, 1, 0], dtype=float)
    b = np.array([0, 1, 0, 0, 1, 1, 0, 0, 1, 0], dtype=float)
    ours = paired_permutation_test(a, b)
    # differences: +1 four times, -1 once, zeros elsewhere: |T*| >= 3 in 12 of 32 patterns
    assert ours.n_discordant == 5
    assert ours.p_value == pytest.approx(12 / 32)


def test_exact_permutation_with_one_nonzero_difference() -> None:
    # two sign patterns, +2 and -2, equally extreme: p = 1 (scipy refuses one observation)
    ours = paired_permutation_test([2.0, 0.0, 0.0], [0.0, 0.0, 0.0])
    assert (ours.test, ours.p_value, ours.n_discordant) == ("permutation_exact", 1.0, 1)
    assert ours.statistic == pytest.approx(2 / 3)


def test_monte_carlo_permutation_agrees_with_scipy_and_counts_the_observed_pattern() -> None:
    rng = np.random.default_rng(9)
    a = rng.normal(0.15, 1.0, 60)
    b = rng.normal(0.0, 1.0, 60)
    ours = paired_permutation_test(a, b, resamples=20_000)
    assert ours.test == "permutation"
    reference = scipy_stats.permutation_test(
        (a, b),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        permutation_type="samples",
        n_resamples=20_000,
        vectorized=True,
        rng=1,
    ).pvalue
    assert ours.p_value == pytest.approx(reference, abs=0.02)
    # scipy counts the observed pattern in each tail and doubles the smaller one
    extreme = paired_permutation_test(np.ones(40), np.zeros(40), resamples=999)
    assert extreme.p_value == pytest.approx(2 / 1000)


def test_permutation_is_deterministic() -> None:
    rng = np.random.default_rng(4)
    a, b = rng.normal(size=50), rng.normal(size=50)
    assert paired_permutation_test(a, b, seed=3) == paired_permutation_test(a, b, seed=3)


# --- multiple testing ------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(8))
def test_holm_equals_statsmodels_exactly(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # an independent implementation: statsmodels' multipletests, compared bit for bit (the same
    # products and maxima), on families of 1 to 40 with ties, zeros and p-values that pass 1
    import gc

    from statsmodels.stats.multitest import multipletests

    # multipletests calls gc.collect() on every call (seconds each in a full test process);
    # collecting garbage changes no p-value, so the comparison runs without it
    monkeypatch.setattr(gc, "collect", lambda *_args: 0)
    rng = np.random.default_rng(seed)
    for m in (1, 2, 3, 12, 40):
        p = np.round(rng.random(m) ** 3, 2)  # rounding creates ties and zeros
        p[rng.random(m) < 0.2] = 1.0
        assert holm(p).tolist() == multipletests(p, method="holm")[1].tolist()


def test_pvalues_outside_unit_interval_raise() -> None:
    with refused(ValueError, names=("pvalues",)):
        holm([0.2, 1.5])


# --- compare_paired and validation ------------------------------------------------------------


@pytest.mark.parametrize("test", ["mcnemar", "sign", "permutation"])
def test_compare_paired_record(test: str) -> None:
    a, b = paired_binary(5, n=150)
    result = compare_paired(
        a, b, test=test, resamples=1000, permutation_resamples=1000, label_a="union", label_b="q"
    )
    assert isinstance(result, PairedComparison)
    assert result.n == 150
    assert result.diff == pytest.approx(result.mean_a - result.mean_b)
    assert result.ci_lo < result.diff < result.ci_hi
    assert result.n_a_better == int(np.sum(a & ~b))
    assert result.n_discordant == result.n_a_better + result.n_b_better
    assert 0.0 < result.p_value <= 1.0
    record = result.to_dict()
    assert record["label_a"] == "union" and record["test"].startswith(test)
    assert result == compare_paired(
        a, b, test=test, resamples=1000, permutation_resamples=1000, label_a="union", label_b="q"
    )
    with pytest.raises(AttributeError):
        result.diff = 0.0  # type: ignore[misc]


def test_compare_paired_p_value_follows_the_chosen_test() -> None:
    a, b = paired_binary(6, n=100)
    r = compare_paired(a, b, test="mcnemar", resamples=200)
    assert r.p_value == score_test(r.n_a_better, r.n_b_better, r.n).p_value
    assert r.p_exact == mcnemar(a, b).p_value
    assert compare_paired(a, b, test="sign", resamples=200).p_value == sign_test(a, b).p_value


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: paired_bootstrap_ci([1, 0], [1, 0, 1]), "lengths 2 != 3"),
        (lambda: paired_bootstrap_ci([1, float("nan")], [1, 0]), "a: value at position 1"),
        (lambda: paired_bootstrap_ci([], []), "a: is empty"),
        (lambda: paired_bootstrap_ci([1, 0], [1, 0], confidence=1.5), "confidence"),
        (lambda: paired_bootstrap_ci([1, 0], [1, 0], resamples=0), "resamples"),
        (lambda: mcnemar([1, 0, 2], [1, 0, 1]), "a_bool: McNemar"),
        (lambda: mcnemar([1, 0, 1], [0.5, 0, 1]), "b_bool: McNemar"),
        (lambda: sign_test([1, 2], [[1, 2]]), "b: expected a 1-D array"),
        (lambda: compare_paired([0.2, 0.3], [0.1, 0.3]), "a: McNemar"),
        (lambda: compare_paired([1, 0], [1, 0], test="wilcoxon"), "'wilcoxon'"),
    ],
)
def test_invalid_inputs_raise_value_error_naming_the_argument(call, message: str) -> None:
    with warnings.catch_warnings(), refused(ValueError, names=(message,)):
        warnings.simplefilter("error")
        call()


# --- the score interval: one procedure with the test -----------------------------------------


@pytest.mark.parametrize("m", [1, 2, 7, 20, 61, 200])
@pytest.mark.parametrize("confidence", [0.95, 0.99, 1 - 0.05 / 6])
@pytest.mark.parametrize("continuity", [True, False])
def test_score_interval_excludes_zero_exactly_when_mcnemar_rejects(m, confidence, continuity):
    from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

    alpha = 1 - confidence
    for b in range(m + 1):
        a_only, b_only = b, m - b
        n = m + 5
        # the test the interval inverts is statsmodels' McNemar chi-square
        table = [[5, a_only], [b_only, 0]]
        # statsmodels does not stop the correction at zero: (|0| - 1)² = 1 when b = c
        p = (
            sm_mcnemar(table, exact=False, correction=continuity).pvalue
            if a_only != b_only or not continuity
            else 1.0
        )
        assert score_test(a_only, b_only, n, continuity=continuity).p_value == pytest.approx(
            min(1.0, p), rel=1e-9, abs=1e-15
        )
        lo, hi = score_interval(a_only, b_only, n, confidence=confidence, continuity=continuity)
        if abs(p - alpha) > 1e-9:
            assert (lo > 0 or hi < 0) == (p < alpha), (m, b, lo, hi, p)
        assert lo <= (a_only - b_only) / n <= hi


def _independent_score_interval(
    b: int, c: int, n: int, z: float, continuity: bool
) -> tuple[float, float]:
    """Tango's interval recomputed another way: the restricted maximum likelihood of the share
    of b-only pairs found numerically (not by the closed form), the statistic on a fine grid of
    delta0, and the ends refined by root finding."""
    from scipy import optimize

    def restricted_q(d: float) -> float:
        # maximise the multinomial log-likelihood over q = p_ba with p_ab = q + d
        def negative(q: float) -> float:
            p_ab, p_ba = q + d, q
            rest = 1 - p_ab - p_ba
            if min(p_ab, p_ba, rest) < 0:
                return np.inf
            terms = [(b, p_ab), (c, p_ba), (n - b - c, rest)]
            return -sum(k * np.log(p) for k, p in terms if k > 0)

        lo, hi = max(0.0, -d), (1 - d) / 2
        if hi - lo < 1e-15:
            return lo
        return float(
            optimize.minimize_scalar(
                negative, bounds=(lo, hi), method="bounded", options={"xatol": 1e-13}
            ).x
        )

    def t(d: float) -> float:
        q = restricted_q(d)
        num = b - c - n * d
        if continuity:
            num = np.sign(num) * max(abs(num) - 1, 0)
        return num / np.sqrt(n * (2 * q + d * (1 - d)))

    est = (b - c) / n
    lo = -1.0 if est <= -1 else optimize.brentq(lambda d: t(d) - z, -1 + 1e-12, est, xtol=1e-13)
    hi = 1.0 if est >= 1 else optimize.brentq(lambda d: t(d) + z, est, 1 - 1e-12, xtol=1e-13)
    return lo, hi


@pytest.mark.numeric
@pytest.mark.parametrize(
    ("b", "c", "n"),
    [(5, 0, 485), (0, 70, 485), (33, 1, 485), (0, 0, 192), (40, 20, 160), (3, 9, 50)],
)
@pytest.mark.parametrize("continuity", [False, True])
def test_score_interval_matches_an_independent_inversion(
    b: int, c: int, n: int, continuity: bool
) -> None:
    z = scipy_stats.norm.isf(0.025)
    lo, hi = score_interval(b, c, n, continuity=continuity)
    ref_lo, ref_hi = _independent_score_interval(b, c, n, z, continuity)
    assert float(lo) == pytest.approx(ref_lo, abs=2e-6)
    assert float(hi) == pytest.approx(ref_hi, abs=2e-6)


def test_score_interval_reaches_past_the_discordant_share_and_is_never_a_point() -> None:
    # five discordant pairs of 485, all a's way: the conditional interval stopped at +1.0 pp
    lo, hi = score_interval(5, 0, 485)
    assert 0 < lo < 5 / 485 < hi  # uncorrected: +0.24 to +2.39 pp (router_vs_union_2wiki)
    assert float(lo) == pytest.approx(0.0024, abs=5e-5) and float(hi) == pytest.approx(
        0.0239, abs=5e-5
    )
    lo, hi = score_interval(5, 0, 485, continuity=True)
    assert hi > 5 / 485 and lo < 0 < hi  # corrected: -0.14 to +2.67 pp, holding zero
    lo, hi = score_interval(0, 0, 192)  # no discordant pair
    assert lo < 0 < hi and float(hi) == pytest.approx(-float(lo), rel=1e-12)
    # vectorised: one call, many tables, the same ends as one by one
    many = score_interval([5, 0, 33], [0, 70, 1], [485, 485, 485])
    for k, (b, c) in enumerate([(5, 0), (0, 70), (33, 1)]):
        one = score_interval(b, c, 485)
        assert (many[0][k], many[1][k]) == (one[0], one[1])
    with refused(ValueError, names=("score_interval",)):
        score_interval(6, 6, 10)


def test_compare_paired_reports_the_score_interval_and_nothing_resampled() -> None:
    a, b = paired_binary(11, n=150)
    r = compare_paired(a, b)
    assert r.ci_method == "score" and r.bootstrap_resamples is None
    lo, hi = score_interval(r.n_a_better, r.n_b_better, r.n)
    assert (r.ci_lo, r.ci_hi) == (float(lo), float(hi))
    assert r.p_value == score_test(r.n_a_better, r.n_b_better, r.n).p_value
    assert r.p_exact == mcnemar(a, b).p_value
    # the seed cannot matter: nothing is random
    assert compare_paired(a, b, seed=1) == dataclasses_replace_seed(r, 1)
    real = compare_paired(a.astype(float) * 0.5, b, test="permutation", resamples=500)
    assert real.ci_method == "bootstrap_percentile" and real.p_exact is None
    assert real.p_mid is None


def _mid_p_by_hand(b: int, c: int) -> float:
    """Fagerland, Lydersen and Laake's (2013) mid-p, summed term by term with exact integers."""
    from fractions import Fraction
    from math import comb

    m, k = b + c, min(b, c)
    if m == 0:
        return 1.0
    below = sum(Fraction(comb(m, i), 2**m) for i in range(k))  # P(X < k)
    point = Fraction(comb(m, k), 2**m)
    return float(min(Fraction(1), 2 * below + point))  # 2 P(X <= k) - P(X = k)


@pytest.mark.parametrize(("b", "c"), [(5, 0), (0, 5), (8, 8), (9, 8), (30, 10), (1, 0), (0, 0),
                                      (17, 40), (120, 95)])  # fmt: skip
def test_mid_p_matches_a_computation_by_hand(b: int, c: int) -> None:
    from regime_core.stats import mcnemar_mid_p

    assert mcnemar_mid_p(b, c) == pytest.approx(_mid_p_by_hand(b, c), rel=1e-12, abs=1e-15)
    # it never exceeds the exact conditional p it halves the point mass of
    exact = 1.0 if b + c == 0 else scipy_stats.binomtest(b, b + c).pvalue
    assert mcnemar_mid_p(b, c) <= exact + 1e-15


def test_compare_paired_keeps_the_mid_p_beside_the_exact_p() -> None:
    a, b = paired_binary(13, n=150)
    r = compare_paired(a, b)
    assert r.p_mid == pytest.approx(_mid_p_by_hand(r.n_a_better, r.n_b_better), rel=1e-12)
    assert r.p_mid < r.p_exact


def test_the_uncorrected_test_equals_statsmodels_even_when_wins_equal_losses() -> None:
    from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

    for b in (1, 8, 40):
        table = [[10, b], [b, 10]]
        ours = score_test(b, b, 2 * b + 20, continuity=False).p_value
        assert ours == pytest.approx(sm_mcnemar(table, exact=False, correction=False).pvalue)
        # the corrected statistic stops at zero; statsmodels squares -1 (8 and 8: p = 0.80)
        corrected = sm_mcnemar(table, exact=False, correction=True).pvalue
        assert score_test(b, b, 2 * b + 20, continuity=True).p_value == 1.0 > corrected


def test_compare_paired_keeps_each_intervals_ends_per_counts_and_level() -> None:
    # the ends are kept per (counts, confidence): a second level on the same counts is its own
    a, b = paired_binary(12, n=120)
    wide = compare_paired(a, b, confidence=0.99)
    narrow = compare_paired(a, b, confidence=0.8)
    for r, level in ((wide, 0.99), (narrow, 0.8)):
        lo, hi = score_interval(r.n_a_better, r.n_b_better, r.n, confidence=level)
        assert (r.ci_lo, r.ci_hi) == (float(lo), float(hi))
    assert wide.ci_lo < narrow.ci_lo < narrow.ci_hi < wide.ci_hi
    assert compare_paired(a, b, confidence=0.99) == wide


def dataclasses_replace_seed(r: PairedComparison, seed: int) -> PairedComparison:
    import dataclasses

    return dataclasses.replace(r, seed=seed)


# --- Holm-adjusted intervals ------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_holm_levels_make_adjusted_intervals_agree_with_holm(seed: int) -> None:
    rng = np.random.default_rng(seed)
    comparisons = []
    for _ in range(int(rng.integers(2, 12))):
        n = int(rng.integers(40, 300))
        a = rng.random(n) < rng.uniform(0.3, 0.8)
        b = rng.random(n) < rng.uniform(0.3, 0.8)
        comparisons.append(compare_paired(a, b))
    p = np.array([c.p_value for c in comparisons])
    adjusted = holm(p)
    levels = holm_levels(p, alpha=0.05)
    for c, p_holm, level in zip(comparisons, adjusted, levels, strict=True):
        lo, hi = score_interval(c.n_a_better, c.n_b_better, c.n, confidence=1 - level)
        assert (lo > 0 or hi < 0) == (p_holm < 0.05)
        assert level >= 0.05 / len(p) - 1e-15


def test_holm_levels_boundaries() -> None:
    assert holm_levels([0.2], alpha=0.05).tolist() == [0.05]
    assert holm_levels([0.001, 0.002], alpha=0.05).tolist() == [0.025, 0.05]
    # the first test fails: every hypothesis keeps the Bonferroni level
    assert holm_levels([0.03, 0.5, 0.9], alpha=0.05).tolist() == pytest.approx([0.05 / 3] * 3)
    with refused(ValueError, names=("alpha",)):
        holm_levels([0.1], alpha=1.5)


def test_an_estimate_on_an_end_of_the_old_interval_now_lies_inside_its_interval() -> None:
    # 11 of 12 a-hits against 10 of 12 b-hits: one discordant pair, a's way; the conditional
    # exact interval ended at the estimate itself; the score interval reaches past it
    a = np.array([1] * 11 + [0])
    b = np.array([1] * 10 + [0, 0])
    c = compare_paired(a, b)
    assert c.ci_lo < 0 < c.diff == 1 / 12 < c.ci_hi
    flipped = compare_paired(b, a)
    assert flipped.ci_lo < flipped.diff == -1 / 12 < 0 < flipped.ci_hi
    for seed in range(200):  # and any other outcomes: the estimate never leaves its interval
        rng = np.random.default_rng(seed)
        x, y = rng.integers(0, 2, 33), rng.integers(0, 2, 33)
        d = compare_paired(x, y)
        assert d.ci_lo <= d.diff <= d.ci_hi
