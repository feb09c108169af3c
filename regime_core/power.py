"""Power of the exact McNemar procedure: the power of a design, the smallest effect it detects,
and the questions an effect needs (exact binomial sums, no normal approximation)."""

from __future__ import annotations

import functools

import numpy as np
from scipy import stats as scipy_stats

from regime_core.config import CONFIDENCE
from regime_core.stats import _check_confidence, _check_count

#: Statistical power the power figures ask for (the conventional 80%).
TARGET_POWER: float = 0.8


def _binomial_pmf(n: int, p: float) -> np.ndarray:
    return scipy_stats.binom.pmf(np.arange(n + 1), n, p)


@functools.lru_cache(maxsize=4096)
def _two_sided_rejections(m: int, alpha: float) -> np.ndarray:
    """For ``b = 0..m`` discordant pairs won by ``a``: does the exact two-sided McNemar test
    reject at ``alpha``? (``p = min(1, 2 min(P(X <= b), P(X >= b)))``, ``X ~ Bin(m, 1/2)``.)"""
    b = np.arange(m + 1)
    low = scipy_stats.binom.cdf(b, m, 0.5)
    high = scipy_stats.binom.sf(b - 1, m, 0.5)
    return np.minimum(1.0, 2.0 * np.minimum(low, high)) < alpha


def mcnemar_power(
    n: int, discordance: float, effect: float, *, alpha: float = 1.0 - CONFIDENCE
) -> float:
    """Power of the exact two-sided McNemar test (equivalently: of its interval excluding zero)
    at level ``alpha`` for ``n`` pairs whose discordance (share of pairs that differ) is
    ``discordance`` and whose true difference of hit rates is ``effect``.

    The discordant count is ``M ~ Bin(n, discordance)``; given ``M = m``, the pairs won by ``a``
    are ``Bin(m, π)`` with ``π = (1 + effect / discordance) / 2``. The power is exact:
    ``Σ_m P(M = m) P(reject | m, π)``, with the test's own rejection region for every ``m``
    (no normal approximation). ``|effect|`` cannot exceed ``discordance``.

    >>> round(mcnemar_power(200, 0.2, 0.1), 3)
    0.875
    """
    n = _check_count(n, "n")
    if not 0.0 <= discordance <= 1.0:
        raise ValueError(f"discordance: must lie in [0, 1], got {discordance!r}")
    if abs(effect) > discordance + 1e-12:
        raise ValueError(
            f"effect: |{effect}| exceeds the discordance {discordance}: a difference of hit "
            "rates is at most the share of pairs that differ"
        )
    if n == 0 or discordance == 0.0:
        return 0.0
    pi = min(1.0, max(0.0, (1.0 + effect / discordance) / 2.0))
    weights = _binomial_pmf(n, discordance)
    power = 0.0
    for m in range(1, n + 1):
        if weights[m] < 1e-15:
            continue
        reject = _two_sided_rejections(m, alpha)
        power += weights[m] * float(_binomial_pmf(m, pi)[reject].sum())
    return float(min(1.0, power))


def detectable_effect(
    n: int,
    discordance: float,
    *,
    alpha: float = 1.0 - CONFIDENCE,
    power: float = TARGET_POWER,
) -> float | None:
    """The smallest positive difference of hit rates the exact McNemar test detects with
    ``power`` at ``alpha`` for ``n`` pairs of this ``discordance`` (power is increasing in the
    effect, so the bisection converges to within 1e-4); ``None`` when not even an effect as
    large as the discordance (every discordant pair won by one side) reaches it.

    >>> round(detectable_effect(200, 0.2), 3)
    0.091
    """
    power = _check_confidence(power, "power")
    if n == 0 or discordance <= 0.0:
        return None
    if mcnemar_power(n, discordance, discordance, alpha=alpha) < power:
        return None
    lo, hi = 0.0, float(discordance)
    while hi - lo > 1e-4:
        mid = (lo + hi) / 2.0
        if mcnemar_power(n, discordance, mid, alpha=alpha) >= power:
            hi = mid
        else:
            lo = mid
    return hi


#: The largest number of questions :func:`questions_needed` searches.
MAX_QUESTIONS_SEARCHED: int = 1_000_000


def questions_needed(
    effect: float,
    discordance: float,
    *,
    alpha: float = 1.0 - CONFIDENCE,
    power: float = TARGET_POWER,
) -> int | None:
    """The number of questions at which the exact McNemar test detects ``effect`` with ``power``
    at ``alpha``, when pairs differ at rate ``discordance``: the smallest ``n`` whose power
    reaches it, found by doubling and then bisection on ``n`` (the exact test's power saw-tooths
    slightly with ``n``, so this is the first crossing the bisection finds, within a few
    questions of the smallest). ``None`` when the effect is 0 or larger than the discordance, or
    more than :data:`MAX_QUESTIONS_SEARCHED` questions would be needed.

    >>> questions_needed(0.1, 0.2)
    168
    """
    power = _check_confidence(power, "power")
    effect = abs(float(effect))
    if effect == 0.0 or discordance <= 0.0 or effect > discordance:
        return None
    hi = 8
    while mcnemar_power(hi, discordance, effect, alpha=alpha) < power:
        hi *= 2
        if hi > MAX_QUESTIONS_SEARCHED:
            return None
    lo = hi // 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if mcnemar_power(mid, discordance, effect, alpha=alpha) >= power:
            hi = mid
        else:
            lo = mid
    return hi
