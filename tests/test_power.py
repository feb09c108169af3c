"""The exact power of the McNemar procedure against a simulation of the verdict procedure."""

from __future__ import annotations

import doctest
import math

import numpy as np
import pytest

from regime_core import power
from regime_core.power import detectable_effect, mcnemar_power, questions_needed
from regime_core.stats import mcnemar_interval


def test_doctests_pass() -> None:
    result = doctest.testmod(power)
    assert result.attempted >= 3
    assert result.failed == 0


def _simulated_rejections(n, discordance, effect, trials, seed, alpha=0.05):
    rng = np.random.default_rng(seed)
    pi = (1 + effect / discordance) / 2
    discordant = rng.random((trials, n)) < discordance
    a_wins = rng.random((trials, n)) < pi
    a_only = (discordant & a_wins).sum(axis=1)
    b_only = (discordant & ~a_wins).sum(axis=1)
    rejected = 0
    for x, y in zip(a_only, b_only, strict=True):
        lo, hi = mcnemar_interval(int(x), int(y), n, confidence=1 - alpha)
        rejected += lo > 0 or hi < 0
    return rejected / trials


@pytest.mark.parametrize(
    ("n", "discordance", "effect"), [(200, 0.2, 0.1), (120, 0.3, 0.05), (400, 0.08, 0.04)]
)
def test_power_matches_a_simulation_of_the_verdict_procedure(n, discordance, effect) -> None:
    trials = 6000
    simulated = _simulated_rejections(n, discordance, effect, trials, seed=n)
    exact = mcnemar_power(n, discordance, effect)
    sd = math.sqrt(exact * (1 - exact) / trials)
    assert abs(simulated - exact) < 4 * sd + 1e-3


def test_power_boundaries() -> None:
    # no effect: the power is the test's size, at most alpha
    assert mcnemar_power(300, 0.2, 0.0) <= 0.05
    assert mcnemar_power(300, 0.0, 0.0) == 0.0
    assert mcnemar_power(50, 0.2, 0.2) > mcnemar_power(50, 0.2, 0.1)
    with pytest.raises(ValueError, match="exceeds the discordance"):
        mcnemar_power(100, 0.1, 0.2)


def test_detectable_effect_reaches_the_target_power_and_no_less() -> None:
    mde = detectable_effect(300, 0.15)
    assert mde is not None
    assert mcnemar_power(300, 0.15, mde) >= 0.8
    assert mcnemar_power(300, 0.15, mde - 2e-4) < 0.8
    assert detectable_effect(300, 0.0) is None
    assert detectable_effect(5, 0.2) is None  # too few pairs for any effect
    assert detectable_effect(1200, 0.15) < mde  # more questions detect smaller effects


def test_questions_needed_is_the_first_n_with_enough_power() -> None:
    n = questions_needed(0.06, 0.15)
    assert n is not None
    assert mcnemar_power(n, 0.15, 0.06) >= 0.8
    assert mcnemar_power(n - 15, 0.15, 0.06) < 0.8
    assert questions_needed(0.0, 0.1) is None
    assert questions_needed(0.2, 0.1) is None  # larger than the discordance allows
