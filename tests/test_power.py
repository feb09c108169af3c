"""The exact power of the verdict's own interval against a simulation of the verdict procedure."""

from __future__ import annotations

import doctest
import math

import numpy as np
import pytest
from helpers import refused

from regime_core import power as power_module
from regime_core.power import detectable_effect, power, questions_needed, smallest_margin
from regime_core.stats import score_interval

pytestmark = pytest.mark.numeric


def test_doctests_pass() -> None:
    result = doctest.testmod(power_module)
    assert result.attempted >= 4
    assert result.failed == 0


def _simulated_power(n, discordance, effect, trials, seed, *, null=0.0, side="greater"):
    """Draw paired tables from the module's model, build the verdict's interval on each (the
    package's score_interval, not the power kernel) and count how often the rule passes."""
    rng = np.random.default_rng(seed)
    psi = max(discordance, abs(effect))
    cells = [(psi + effect) / 2, (psi - effect) / 2, 1 - psi]
    counts = rng.multinomial(n, cells, size=trials)
    lo, hi = score_interval(counts[:, 0], counts[:, 1], np.full(trials, n))
    if side == "greater":
        return float(np.mean(lo > null))
    if side == "less":
        return float(np.mean(hi < null))
    return float(np.mean((lo > -null) & (hi < null)))


@pytest.mark.parametrize(
    ("n", "discordance", "effect", "null", "side"),
    [
        (200, 0.2, 0.1, 0.0, "greater"),
        (120, 0.3, -0.05, 0.0, "less"),
        (400, 0.08, 0.04, 0.0, "greater"),
        (485, 5 / 485, 0.046, 0.0, "greater"),  # the discordance rises to the effect
        (485, 0.1, 0.0, -0.01, "greater"),  # no loss: the null is minus the margin
        (900, 0.05, 0.0, 0.02, "within"),  # equivalence within ±2 pp
    ],
)
def test_power_matches_a_simulation_of_the_verdict_procedure(n, discordance, effect, null, side):
    trials = 6000
    simulated = _simulated_power(n, discordance, effect, trials, seed=n, null=null, side=side)
    exact = power(n, discordance, effect, null=null, side=side)
    sd = math.sqrt(max(exact * (1 - exact), 1e-4) / trials)
    assert abs(simulated - exact) < 4 * sd + 2e-3, (simulated, exact)


def test_power_boundaries() -> None:
    # no effect against zero: the power is the size of one side, at most alpha/2
    assert power(300, 0.2, 0.0) <= 0.025
    assert power(300, 0.0, 0.0) == 0.0
    assert power(50, 0.2, 0.2) > power(50, 0.2, 0.1)
    # an effect larger than the observed discordance is not refused: the discordance rises
    assert power(100, 0.1, 0.2) > 0.5
    with refused(ValueError, names=("side", "'above'")):
        power(100, 0.1, 0.05, side="above")
    with refused(ValueError, names=("margin",)):
        power(100, 0.1, 0.0, null=-0.01, side="within")


def test_detectable_effect_reaches_the_target_power_and_no_less() -> None:
    mde = detectable_effect(300, 0.15)
    assert mde is not None
    assert power(300, 0.15, mde) >= 0.8
    assert power(300, 0.15, mde - 2e-4) < 0.8
    # no discordance observed: still an effect is detectable, since it brings its own pairs
    assert detectable_effect(300, 0.0) is not None
    assert detectable_effect(2, 0.2) is None  # too few pairs for any effect
    assert detectable_effect(1200, 0.15) < mde  # more questions detect smaller effects


def test_smallest_margin_is_what_a_null_effect_shows() -> None:
    m = smallest_margin(485, 0.1)
    assert m is not None
    assert power(485, 0.1, 0.0, null=-m, side="greater") >= 0.8
    assert power(485, 0.1, 0.0, null=-(m - 2e-4), side="greater") < 0.8
    within = smallest_margin(485, 0.1, side="within")
    assert within is not None and within > m  # both ends inside is harder than one


def test_questions_needed_is_the_first_n_with_enough_power() -> None:
    n = questions_needed(0.06, 0.15)
    assert n is not None
    assert power(n, 0.15, 0.06) >= 0.8
    assert power(n - 15, 0.15, 0.06) < 0.8
    assert questions_needed(0.0, 0.1) is None
    assert questions_needed(0.0, 0.1, null=-0.01) is not None  # no loss at a true zero
