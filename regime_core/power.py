"""Power of the paired comparison of hit rates the verdicts read: the probability that our
interval (:func:`regime_core.stats.score_interval`) excludes a claim's null on the side of the
effect, the smallest effect it detects, and the questions an effect needs.

**The model.** ``n`` questions fall into the four cells of a paired 2×2 table by a multinomial
draw; only the discordant cells matter, with shares ``p_ab = (ψ + Δ)/2`` (arm a hits, b misses)
and ``p_ba = (ψ - Δ)/2``. So the number of discordant pairs is random (``Bin(n, ψ)``), not held
at its observed value. The nuisance discordance is ``ψ = max(ψ_obs, |Δ|)``: our observed share
of discordant questions, raised to ``|Δ|`` where a larger effect needs more discordant pairs
(every one of them then goes one way): the most favourable choice, so the questions an effect
needs are a lower bound; the verdicts' power sentences give them also with the effect added to the
observed share, ``ψ_obs + |Δ|`` (:func:`regime_core.runner.judge.power_text`). The power is
exact: the sum of the multinomial probabilities of the tables ``(b, c)`` whose score statistic
(:func:`tango_statistic`) rejects the null, over every table outside tails of total mass below
1e-10 (no normal approximation, no simulation; ``tests/test_power.py`` checks it against one).

**The null is the claim's own.** An effect is tested against zero; a no-loss claim against
``-margin`` (the interval's lower end must lie above it) and an equivalence claim against
``±margin`` (both ends inside), each at the level of the two-sided interval, so the power is
that of the very verdict rule.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np
from scipy import special
from scipy import stats as scipy_stats

from regime_core.config import CONFIDENCE, CONTINUITY_CORRECTION
from regime_core.inputs import Choice, check_value
from regime_core.inputs.configs import LEVEL
from regime_core.inputs.statistics import POWER_QUESTION
from regime_core.inputs.statistics import SIDES as SIDES
from regime_core.stats import critical_value, tango_statistic

#: Statistical power the power figures ask for (the conventional 80%).
TARGET_POWER: float = 0.8
#: The largest number of questions :func:`questions_needed` searches.
MAX_QUESTIONS_SEARCHED: int = 200_000
_TAIL: float = 1e-10


def _support(n: int, p: float) -> np.ndarray:
    if p <= 0.0:
        return np.zeros(1, dtype=np.int64)
    lo = int(scipy_stats.binom.ppf(_TAIL, n, p))
    hi = int(scipy_stats.binom.isf(_TAIL, n, p))
    return np.arange(max(lo, 0), min(hi, n) + 1, dtype=np.int64)


def _log_cell(k: np.ndarray, p: float) -> np.ndarray:
    if p <= 0.0:
        return np.where(k == 0, 0.0, -np.inf)
    return k * math.log(p)


@functools.lru_cache(maxsize=8192)
def _power_kernel(
    n: int, p_ab: float, p_ba: float, null: float, side: str, z: float, continuity: bool
) -> float:
    b = _support(n, p_ab)[:, None]
    c = _support(n, p_ba)[None, :]
    rest = n - b - c
    concordant = 1.0 - p_ab - p_ba
    with np.errstate(divide="ignore", invalid="ignore"):
        log_pmf = (
            special.gammaln(n + 1)
            - special.gammaln(b + 1)
            - special.gammaln(c + 1)
            - special.gammaln(np.maximum(rest, 0) + 1)
            + _log_cell(b, p_ab)
            + _log_cell(c, p_ba)
            + np.where(rest > 0, rest * math.log(concordant) if concordant > 0 else -np.inf, 0.0)
        )
    pmf = np.where(rest >= 0, np.exp(log_pmf), 0.0)
    if side == "greater":
        reject = tango_statistic(null, b, c, n, continuity=continuity) > z
    elif side == "less":
        reject = tango_statistic(null, b, c, n, continuity=continuity) < -z
    else:
        reject = (tango_statistic(-null, b, c, n, continuity=continuity) > z) & (
            tango_statistic(null, b, c, n, continuity=continuity) < -z
        )
    return float(min(1.0, (pmf * reject).sum()))


def power(
    n: int,
    discordance: float,
    effect: float,
    *,
    null: float = 0.0,
    side: str = "greater",
    confidence: float = CONFIDENCE,
    continuity: bool = CONTINUITY_CORRECTION,
) -> float:
    """The probability that our ``confidence`` interval of ``n`` paired questions excludes
    ``null`` on ``side`` (``within``: lies inside ``±null``) when the true difference of hit
    rates is ``effect`` and the observed share of discordant questions ``discordance`` (the
    module's model: the discordance used is ``max(discordance, |effect|)``).

    >>> round(power(200, 0.2, 0.1), 3)
    0.905
    """
    asked = {"n": n, "discordance": discordance, "effect": effect, "null": null, "side": side,
             "confidence": confidence}  # fmt: skip
    read = POWER_QUESTION.read(asked, where="power")
    if side == "within" and read["null"] <= 0.0:
        raise ValueError(f"power: field 'null', an equivalence margin, must be positive: {null!r}")
    if read["n"] == 0:
        return 0.0
    psi = max(read["discordance"], abs(read["effect"]))
    z = critical_value(read["confidence"])
    p_ab, p_ba = (psi + read["effect"]) / 2.0, (psi - read["effect"]) / 2.0
    return _power_kernel(read["n"], p_ab, max(p_ba, 0.0), read["null"], side, z, bool(continuity))


def _smallest(reaches: Callable[[float], bool], top: float) -> float | None:
    """The smallest ``d`` in ``(0, top]`` with ``reaches(d)`` (monotone), to 1e-4; ``None``
    when ``top`` does not reach."""
    if top <= 0.0 or not reaches(top):
        return None
    lo, hi = 0.0, top
    while hi - lo > 1e-4:
        mid = (lo + hi) / 2.0
        lo, hi = (lo, mid) if reaches(mid) else (mid, hi)
    return hi


def detectable_effect(
    n: int,
    discordance: float,
    *,
    confidence: float = CONFIDENCE,
    target: float = TARGET_POWER,
) -> float | None:
    """The smallest positive difference of hit rates whose interval excludes zero (above it)
    with power ``target`` (:func:`power`, ``null = 0``); bisection to 1e-4, ``None`` when not
    even a difference of 1 reaches it.

    >>> round(detectable_effect(200, 0.2), 3)
    0.087
    """
    target = check_value(LEVEL, target, where="detectable_effect", field="target")
    return _smallest(lambda d: power(n, discordance, d, confidence=confidence) >= target, top=1.0)


def smallest_margin(
    n: int,
    discordance: float,
    *,
    side: str = "greater",
    confidence: float = CONFIDENCE,
    target: float = TARGET_POWER,
) -> float | None:
    """When the true difference is zero: the smallest margin ``m`` that our interval shows
    with power ``target``, as a no-loss (``greater``: its lower end above ``-m``) or an
    equivalence (``within``: both ends inside ``±m``); bisection to 1e-4, ``None`` when not
    even ``m = 1`` is shown.

    >>> round(smallest_margin(485, 0.1), 3), round(smallest_margin(485, 0.1, side="within"), 3)
    (0.041, 0.048)
    """
    target = check_value(LEVEL, target, where="smallest_margin", field="target")
    # a margin is shown above -m (greater) or within ±m (within), never below
    check_value(Choice(("greater", "within")), side, where="smallest_margin", field="side")

    def reaches(m: float) -> bool:
        null = -m if side == "greater" else m
        return power(n, discordance, 0.0, null=null, side=side, confidence=confidence) >= target

    return _smallest(reaches, top=1.0)


def questions_needed(
    effect: float,
    discordance: float,
    *,
    null: float = 0.0,
    side: str = "greater",
    confidence: float = CONFIDENCE,
    target: float = TARGET_POWER,
) -> int | None:
    """The number of questions at which :func:`power` for ``effect`` reaches ``target``: the
    first crossing found by doubling and bisection on ``n`` (the power of a discrete test
    saw-tooths slightly with ``n``, so within a few questions of the smallest such ``n``).
    ``None`` when ``effect`` lies on the wrong side of ``null`` (nothing to detect) or more than
    :data:`MAX_QUESTIONS_SEARCHED` questions would be needed.

    >>> questions_needed(0.1, 0.2)
    145
    """
    target = check_value(LEVEL, target, where="questions_needed", field="target")
    check_value(Choice(SIDES), side, where="questions_needed", field="side")
    wrong_side = (
        (side == "greater" and effect <= null)
        or (side == "less" and effect >= null)
        or (side == "within" and abs(effect) >= null)
    )
    if wrong_side:
        return None

    def reaches(n: int) -> bool:
        return power(n, discordance, effect, null=null, side=side, confidence=confidence) >= target

    hi = 8
    while not reaches(hi):
        hi *= 2
        if hi > MAX_QUESTIONS_SEARCHED:
            return None
    lo = hi // 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if reaches(mid) else (mid, hi)
    return hi
