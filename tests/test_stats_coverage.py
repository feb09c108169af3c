"""The coverage kernel of the paired intervals (regime_core.coverage): its intervals against
scipy, the simulation against the exact enumeration, the book's interval above the floor and the
old interval's defect."""

from __future__ import annotations

import doctest
import math

import numpy as np
import pytest
from helpers import refused
from scipy.stats import binomtest

from regime_core import config, coverage

REPLICATIONS = 400
#: a simulated coverage of p from 400 tables has a binomial standard error sqrt(p(1-p)/400)
#: (about 1.1 points at 95%); the tolerance is 3 of them
Z_TOLERANCE = 3.0


def _tolerance(p: float, replications: int = REPLICATIONS) -> float:
    return Z_TOLERANCE * math.sqrt(max(p * (1.0 - p), 1.0 / replications) / replications)


@pytest.mark.parametrize(("b", "c", "n"), [(5, 0, 485), (3, 7, 100), (0, 4, 50), (12, 9, 200)])
def test_conditional_exact_interval_is_scipys_clopper_pearson_scaled(
    b: int, c: int, n: int
) -> None:
    ci = binomtest(b, b + c).proportion_ci(method="exact")
    m = b + c
    lo, hi = coverage.conditional_exact_interval(b, c, n)
    assert float(lo) == pytest.approx((2 * ci.low - 1) * m / n, abs=1e-12)
    assert float(hi) == pytest.approx((2 * ci.high - 1) * m / n, abs=1e-12)


def test_conditional_exact_interval_is_a_point_without_discordant_questions() -> None:
    lo, hi = coverage.conditional_exact_interval(0, 0, 100)
    assert float(lo) == float(hi) == 0.0


def test_score_coverage_read_from_the_statistic_matches_the_interval() -> None:
    rng = np.random.default_rng(config.SEED)
    draws = rng.multinomial(200, coverage.cell_probabilities(0.05, 0.5), size=300)
    both, b, c, neither = draws.T
    for method in ("score_cc", "score"):
        lo, hi = coverage.interval(method, both, b, c, neither)
        by_ends = (lo <= 0.025) & (hi >= 0.025)
        assert np.array_equal(coverage.covers(method, 0.025, both, b, c, neither), by_ends)


def test_the_exact_enumeration_loses_no_mass() -> None:
    _, _, pmf = coverage.trinomial_support(500, 0.03, 0.01)
    assert pmf.sum() == pytest.approx(1.0, abs=1e-9)


# (n, discordance, asymmetry): all one way with n·ψ = 1 and 1, then two larger, asymmetric points
POINTS = [(200, 0.005, 1.0), (50, 0.02, 1.0), (100, 0.05, 0.5), (500, 0.1, 0.25)]


@pytest.mark.parametrize(("n", "psi", "a"), POINTS)
def test_simulation_agrees_with_enumeration_and_the_book_interval_reaches_the_floor(
    n: int, psi: float, a: float
) -> None:
    rng = np.random.default_rng(config.SEED)
    simulated = coverage.simulate_point(n, psi, a, REPLICATIONS, rng)
    exact = coverage.coverage_grid([n], [psi], [a]).set_index("method")["coverage"]
    for method in coverage.EXACT_METHODS:
        p = float(exact[method])
        assert abs(simulated[method][0] - p) <= _tolerance(p), method
    assert exact["score_cc"] >= coverage.COVERAGE_FLOOR
    assert simulated["score_cc"][0] >= coverage.COVERAGE_FLOOR - _tolerance(0.95)
    assert simulated["newcombe"][0] > 0.5  # computed, and a sane interval


def test_the_old_interval_undercovers_when_few_discordant_questions_go_one_way() -> None:
    n, psi = 485, 5 / 485  # five discordant questions expected, all won by arm a
    rng = np.random.default_rng(config.SEED)
    simulated = coverage.simulate_point(
        n, psi, 1.0, REPLICATIONS, rng, methods=("conditional_exact", "score_cc")
    )
    exact = coverage.coverage_grid([n], [psi], [1.0]).set_index("method")["coverage"]
    assert exact["conditional_exact"] < 0.75
    assert simulated["conditional_exact"][0] < 0.95 - 10 * _tolerance(0.95)
    assert exact["score_cc"] >= coverage.COVERAGE_FLOOR


def test_the_whole_exact_grid_the_book_draws() -> None:
    grid = coverage.coverage_grid(methods=("conditional_exact", "score_cc"))
    minima = coverage.minimum_coverage(grid).set_index("method")
    assert minima.loc["score_cc", "minimum"] >= coverage.COVERAGE_FLOOR
    assert minima.loc["score_cc", "below_floor"] == 0
    assert minima.loc["conditional_exact", "minimum"] < 0.5


def test_a_grid_point_the_concordant_split_cannot_hold_is_refused() -> None:
    with refused(ValueError, names=("hit_rate_b",)):
        coverage.cell_probabilities(0.2, 0.0, hit_rate_b=0.05)


def test_the_grid_names_each_point_by_its_point_columns() -> None:
    """The columns a simulation (benchmarks/bench_interval_coverage.py) builds with
    ``point_columns`` and merges on are those of the exact grid, values included."""
    grid = coverage.coverage_grid([50, 200], [0.02], [0.0, 0.5], methods=("score_cc",))
    named = list(coverage.point_columns(50, 0.02, 0.0))
    assert list(grid.columns[: len(named)]) == named
    for row in grid.to_dict("records"):
        point = coverage.point_columns(row["n"], row["discordance"], row["asymmetry"])
        assert {k: row[k] for k in named} == point
    assert coverage.point_columns(200, 0.02, 0.5)["expected_discordant"] == 4.0
    assert doctest.testmod(coverage).failed == 0


def _coverage_by_hand(n: int, psi: float, a: float, continuity: bool) -> float:
    """The exact coverage of Tango's interval at one grid point, summed over every (b, c) with
    exact trinomial weights and the statistic written out again from Tango (1998)."""
    from math import comb, sqrt

    z = 1.959963984540054
    p12, p21 = psi * (1 + a) / 2, psi * (1 - a) / 2
    delta = a * psi
    total = 0.0
    for b in range(n + 1):
        for c in range(n + 1 - b):
            weight = comb(n, b) * comb(n - b, c) * p12**b * p21**c * (1 - p12 - p21) ** (n - b - c)
            if weight < 1e-16:
                continue
            big_b = -b - c + (2 * n - b + c) * delta
            big_c = -c * delta * (1 - delta)
            q = (sqrt(max(big_b**2 - 8 * n * big_c, 0.0)) - big_b) / (4 * n)
            numerator = b - c - n * delta
            if continuity:
                numerator = math.copysign(max(abs(numerator) - 1, 0.0), numerator)
            variance = n * (2 * q + delta * (1 - delta))
            t = numerator / sqrt(variance) if variance > 0 else (0.0 if numerator == 0 else 9e9)
            total += weight * (abs(t) <= z)
    return total


@pytest.mark.parametrize(("n", "psi", "a"), [(50, 0.1, 1.0), (100, 0.05, 0.5), (60, 0.2, 0.0)])
def test_a_few_points_of_exact_coverage_match_a_sum_by_hand(n: int, psi: float, a: float) -> None:
    grid = coverage.coverage_grid([n], [psi], [a], methods=("score_cc", "score"))
    found = grid.set_index("method")["coverage"]
    for method, continuity in (("score_cc", True), ("score", False)):
        assert found[method] == pytest.approx(_coverage_by_hand(n, psi, a, continuity), abs=1e-9)


def test_the_selection_rule_picks_the_uncorrected_score_interval_the_book_uses() -> None:
    grid = coverage.coverage_grid(widths=True)
    summary = coverage.coverage_summary(grid).set_index("method")
    # the corrected interval over-covers on average and is wider; the uncorrected one is closer
    assert summary.loc["score_cc", "mean"] > summary.loc["score", "mean"] > config.CONFIDENCE
    assert summary.loc["score_cc", "mean_width"] > summary.loc["score", "mean_width"]
    assert summary.loc["score", "far_below"] <= coverage.FAR_BELOW_SHARE
    assert summary.loc["conditional_exact", "mean"] < config.CONFIDENCE - coverage.MEAN_TOLERANCE
    chosen = coverage.select_interval(summary.reset_index())
    assert chosen == ("score_cc" if config.CONTINUITY_CORRECTION else "score")
