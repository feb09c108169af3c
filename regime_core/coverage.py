"""How often the intervals of a paired difference of hit rates cover the true difference.

Two arms answer the same ``n`` questions; each question falls in one cell of the paired table:
both hit, only arm a hits (``b`` questions), only arm b hits (``c``), neither. The grid of
:func:`coverage_grid` fixes the share of discordant questions ``ψ`` (``discordance``) and the
``asymmetry`` ``a``: arm a wins a share ``(1 + a) / 2`` of the discordant questions, so the true
difference of hit rates is ``Δ = a·ψ`` (``a = 1``: every discordant question goes one way). The
concordant questions split so that arm b's hit rate is ``hit_rate_b``; only Newcombe's interval
depends on that split.

The intervals compared, each a pure function of the counts (:data:`METHODS`):

- ``conditional_exact``: the interval the book used first, the Clopper–Pearson interval
  ``[π_lo, π_hi]`` of ``b`` among the ``m = b + c`` discordant questions mapped to
  ``[(2π_lo - 1)·m/n, (2π_hi - 1)·m/n]`` (``[0, 0]`` when ``m = 0``);
- ``score_cc``: Tango's score interval with Edwards' continuity correction, the book's second;
  ``score``: the same without the correction, the book's now
  (:func:`regime_core.stats.score_interval`, ``config.CONTINUITY_CORRECTION``);
- ``bonett_price``: the adjusted Wald interval of Bonett and Price (2012);
- ``newcombe``: Newcombe's hybrid score interval without continuity correction (method 10).

:func:`coverage_grid` computes the exact coverage (and mean width) of the methods that depend on
``(b, c)`` alone by enumerating the trinomial law of ``(b, c)``; :func:`simulate_point` estimates
any method's coverage from multinomial draws (``benchmarks/bench_interval_coverage.py`` runs it
over the grid and checks it against the enumeration).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import special
from scipy import stats as scipy_stats

from regime_core.config import CONFIDENCE
from regime_core.inputs import Choice, Items, check_value
from regime_core.inputs.configs import SHARE
from regime_core.inputs.statistics import DISCORDANCE
from regime_core.stats import critical_value, score_interval, tango_statistic

#: the intervals compared, by name, and what each is
METHODS: dict[str, str] = {
    "conditional_exact": "the conditional exact interval (Clopper–Pearson interval of the "
    "discordant questions won, scaled by m/n): the book's first interval",
    "score_cc": "Tango's score interval with Edwards' continuity correction: the book's interval",
    "score": "Tango's score interval without continuity correction",
    "bonett_price": "Bonett and Price's adjusted Wald interval",
    "newcombe": "Newcombe's hybrid score interval (method 10, no continuity correction)",
}
#: the methods whose interval depends on ``(b, c, n)`` alone, so their coverage is enumerated
EXACT_METHODS: tuple[str, ...] = ("conditional_exact", "score_cc", "score", "bonett_price")

GRID_N: tuple[int, ...] = (50, 100, 200, 500, 1000)
"""numbers of questions of the coverage grid"""
GRID_DISCORDANCE: tuple[float, ...] = (0.005, 0.01, 0.02, 0.05, 0.1, 0.2)
"""shares of discordant questions (one arm hits, the other misses) of the coverage grid"""
GRID_ASYMMETRY: tuple[float, ...] = (0.0, 0.25, 0.5, 0.75, 1.0)
"""asymmetries of the coverage grid: arm a wins a share (1 + a)/2 of the discordant questions, so
the difference of hit rates is a times the discordance (1: every discordant question goes one way)
"""
HIT_RATE_B: float = 0.7
"""arm b's hit rate in the coverage grid (how the concordant questions split; only Newcombe's
interval depends on it)
"""
MIN_EXPECTED_DISCORDANT: float = 1.0
"""the grid points judged are those with at least this many discordant questions expected (n·ψ)"""
COVERAGE_FLOOR: float = 0.94
"""the coverage the book's second interval was chosen to reach at every judged point of the grid
(the rule that replaced the first interval; :data:`SELECTION_RULE` replaced it)
"""
FAR_BELOW: float = 0.93
"""coverage two points or more below the nominal 95%: "far below" in the selection rule"""
MEAN_TOLERANCE: float = 0.01
"""how far below the nominal level an interval's mean coverage may lie in the selection rule"""
FAR_BELOW_SHARE: float = 0.10
"""the largest share of judged points an interval may cover far below the nominal level"""
SELECTION_RULE: str = (
    "the published criteria (Fagerland, Lydersen and Laake 2014: coverage close to the nominal "
    "level on average, rarely far below it, short intervals): among the intervals whose mean "
    f"coverage over the judged points is at most {MEAN_TOLERANCE:.0%} below the nominal level "
    f"and which cover below {FAR_BELOW:.0%} at no more than {FAR_BELOW_SHARE:.0%} of them, the "
    "one whose mean coverage lies closest to the nominal level (an interval that covers more "
    "often than it claims is wider than it needs to be); the mean widths are shown beside it"
)
"""how the book's interval of a paired difference of hit rates is chosen"""
#: the tail mass left out of each count's range when the law of (b, c) is enumerated
ENUMERATION_TAIL: float = 1e-12


def cell_probabilities(
    discordance: float, asymmetry: float, hit_rate_b: float = HIT_RATE_B
) -> np.ndarray:
    """The probabilities ``[both, a only, b only, neither]`` of a grid point.

    ``a only = ψ(1 + a)/2``, ``b only = ψ(1 - a)/2``, ``both = hit_rate_b - b only`` and
    ``neither = 1 - ψ - both``; ``ValueError`` when one is negative.

    >>> cell_probabilities(0.1, 0.5, 0.7).round(3).tolist()
    [0.675, 0.075, 0.025, 0.225]
    """
    check_value(DISCORDANCE, discordance, where="cell_probabilities", field="discordance")
    check_value(SHARE, asymmetry, where="cell_probabilities", field="asymmetry")
    a_only = discordance * (1.0 + asymmetry) / 2.0
    b_only = discordance * (1.0 - asymmetry) / 2.0
    both = hit_rate_b - b_only
    cells = np.array([both, a_only, b_only, 1.0 - discordance - both])
    if np.any(cells < -1e-12):
        raise ValueError(
            f"hit_rate_b: {hit_rate_b!r} cannot hold a discordance {discordance!r} with "
            f"asymmetry {asymmetry!r} (a cell probability would be negative: {cells.tolist()})"
        )
    return np.clip(cells, 0.0, 1.0)


# --- the intervals -----------------------------------------------------------------------------


def conditional_exact_interval(
    b: Any, c: Any, n: Any, *, confidence: float = CONFIDENCE
) -> tuple[np.ndarray, np.ndarray]:
    """The conditional exact interval of ``p_a - p_b`` (the book's first, replaced): the
    Clopper–Pearson interval ``[π_lo, π_hi]`` of ``b`` successes in ``m = b + c`` trials (scipy's
    ``binomtest(b, m).proportion_ci(method="exact")``, written with the beta quantiles so that it
    is vectorised) mapped to ``[(2π_lo - 1)·m/n, (2π_hi - 1)·m/n]``; ``[0, 0]`` when ``m = 0``.

    >>> [round(float(v), 4) for v in conditional_exact_interval(5, 0, 485)]
    [-0.0004, 0.0103]
    """
    b, c, n = (np.asarray(v, dtype=np.float64) for v in np.broadcast_arrays(b, c, n))
    m = b + c
    alpha = 1.0 - confidence
    # the beta quantiles are the cost: one per distinct (b, m)
    width = float(m.max(initial=0.0)) + 1.0
    keys, index = np.unique(b.ravel() * width + m.ravel(), return_inverse=True)
    ub, um = np.floor(keys / width), np.mod(keys, width)
    with np.errstate(invalid="ignore", divide="ignore"):
        u_lo = np.where(ub > 0, scipy_stats.beta.ppf(alpha / 2.0, ub, um - ub + 1.0), 0.0)
        u_hi = np.where(ub < um, scipy_stats.beta.ppf(1.0 - alpha / 2.0, ub + 1.0, um - ub), 1.0)
    pi_lo = u_lo[index.ravel()].reshape(b.shape)
    pi_hi = u_hi[index.ravel()].reshape(b.shape)
    lo = np.where(m > 0, (2.0 * pi_lo - 1.0) * m / n, 0.0)
    hi = np.where(m > 0, (2.0 * pi_hi - 1.0) * m / n, 0.0)
    return lo, hi


def bonett_price_interval(
    b: Any, c: Any, n: Any, *, confidence: float = CONFIDENCE
) -> tuple[np.ndarray, np.ndarray]:
    """Bonett and Price's adjusted Wald interval of ``p_a - p_b``: ``p̃12 = (b + 1)/(n + 2)``,
    ``p̃21 = (c + 1)/(n + 2)``, ``d = p̃12 - p̃21``, ``se = sqrt((p̃12 + p̃21 - d²)/(n + 2))``,
    ``d ± z·se``.

    >>> [round(float(v), 4) for v in bonett_price_interval(5, 0, 485)]
    [-0.0003, 0.0209]
    """
    b, c, n = (np.asarray(v, dtype=np.float64) for v in np.broadcast_arrays(b, c, n))
    z = critical_value(confidence)
    p12, p21 = (b + 1.0) / (n + 2.0), (c + 1.0) / (n + 2.0)
    d = p12 - p21
    se = np.sqrt((p12 + p21 - d * d) / (n + 2.0))
    return d - z * se, d + z * se


def _wilson(x: np.ndarray, n: np.ndarray, z: float) -> tuple[np.ndarray, np.ndarray]:
    p = x / n
    centre = (p + z * z / (2.0 * n)) / (1.0 + z * z / n)
    half = z * np.sqrt(p * (1.0 - p) / n + z * z / (4.0 * n * n)) / (1.0 + z * z / n)
    return np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)


def newcombe_interval(
    both: Any, b: Any, c: Any, neither: Any, *, confidence: float = CONFIDENCE
) -> tuple[np.ndarray, np.ndarray]:
    """Newcombe's (1998) hybrid score interval of ``p_a - p_b`` for paired binary outcomes,
    method 10 (no continuity correction).

    With ``r = both``, ``s = b``, ``t = c``, ``u = neither``, ``p_a = (r + s)/n``,
    ``p_b = (r + t)/n``, ``D = p_a - p_b``, ``[l_a, u_a]`` and ``[l_b, u_b]`` the Wilson intervals
    of the two hit rates and ``φ = C / sqrt((r+s)(t+u)(r+t)(s+u))`` with ``C = ru - st - n/2``
    when ``ru - st > n/2``, ``0`` when ``0 <= ru - st <= n/2`` and ``ru - st`` when it is
    negative (``φ = 0`` when a margin is empty):
    ``lo = D - sqrt((p_a - l_a)² - 2φ(p_a - l_a)(u_b - p_b) + (u_b - p_b)²)``,
    ``hi = D + sqrt((p_b - l_b)² - 2φ(p_b - l_b)(u_a - p_a) + (u_a - p_a)²)``.

    >>> [round(float(v), 4) for v in newcombe_interval(59, 6, 16, 80)]
    [-0.1186, -0.0046]
    """
    r, s, t, u = (np.asarray(v, dtype=np.float64) for v in np.broadcast_arrays(both, b, c, neither))
    z = critical_value(confidence)
    total = r + s + t + u
    p_a, p_b = (r + s) / total, (r + t) / total
    l_a, u_a = _wilson(r + s, total, z)
    l_b, u_b = _wilson(r + t, total, z)
    margins = (r + s) * (t + u) * (r + t) * (s + u)
    cross = r * u - s * t
    corrected = np.where(
        cross > total / 2.0, cross - total / 2.0, np.where(cross < 0.0, cross, 0.0)
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        phi = np.where(margins > 0.0, corrected / np.sqrt(margins), 0.0)
    below = (p_a - l_a) ** 2 - 2.0 * phi * (p_a - l_a) * (u_b - p_b) + (u_b - p_b) ** 2
    above = (p_b - l_b) ** 2 - 2.0 * phi * (p_b - l_b) * (u_a - p_a) + (u_a - p_a) ** 2
    diff = p_a - p_b
    lo = np.clip(diff - np.sqrt(np.maximum(below, 0.0)), -1.0, 1.0)
    hi = np.clip(diff + np.sqrt(np.maximum(above, 0.0)), -1.0, 1.0)
    return lo, hi


def interval(
    method: str,
    both: Any,
    b: Any,
    c: Any,
    neither: Any,
    *,
    confidence: float = CONFIDENCE,
) -> tuple[np.ndarray, np.ndarray]:
    """The interval of ``method`` (a key of :data:`METHODS`) for arrays of paired tables."""
    n = np.asarray(both) + np.asarray(b) + np.asarray(c) + np.asarray(neither)
    if method == "conditional_exact":
        return conditional_exact_interval(b, c, n, confidence=confidence)
    if method in ("score_cc", "score"):
        return score_interval(b, c, n, confidence=confidence, continuity=method == "score_cc")
    if method == "bonett_price":
        return bonett_price_interval(b, c, n, confidence=confidence)
    if method == "newcombe":
        return newcombe_interval(both, b, c, neither, confidence=confidence)
    raise ValueError(f"method: unknown interval {method!r}; choose one of {', '.join(METHODS)}")


def covers(
    method: str,
    delta: Any,
    both: Any,
    b: Any,
    c: Any,
    neither: Any,
    *,
    confidence: float = CONFIDENCE,
) -> np.ndarray:
    """Whether the interval of ``method`` holds ``delta``, per table. The score intervals are
    ``{Δ0 : |T(Δ0)| <= z}``, so they are read from :func:`~regime_core.stats.tango_statistic`
    without building the interval."""
    if method in ("score_cc", "score"):
        n = np.asarray(both) + np.asarray(b) + np.asarray(c) + np.asarray(neither)
        t = tango_statistic(delta, b, c, n, continuity=method == "score_cc")
        return np.asarray(np.abs(t) <= critical_value(confidence))
    lo, hi = interval(method, both, b, c, neither, confidence=confidence)
    return (lo <= delta) & (delta <= hi)


# --- exact coverage by enumeration of (b, c) ---------------------------------------------------


def trinomial_support(
    n: int, p_a_only: float, p_b_only: float, *, tail: float = ENUMERATION_TAIL
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pairs ``(b, c)`` with ``b + c <= n`` whose counts lie within the ``1 - tail``
    quantile of their binomial margins, and their trinomial probabilities
    ``n!/(b! c! (n-b-c)!) p12^b p21^c (1-p12-p21)^(n-b-c)`` (via ``gammaln``). The mass left out
    is at most ``2·tail``."""
    b_max = int(min(n, scipy_stats.binom.isf(tail, n, p_a_only) + 1)) if p_a_only > 0 else 0
    c_max = int(min(n, scipy_stats.binom.isf(tail, n, p_b_only) + 1)) if p_b_only > 0 else 0
    b, c = np.meshgrid(np.arange(b_max + 1), np.arange(c_max + 1), indexing="ij")
    keep = b + c <= n
    b, c = b[keep], c[keep]
    rest = n - b - c
    log_p = (
        special.gammaln(n + 1.0)
        - special.gammaln(b + 1.0)
        - special.gammaln(c + 1.0)
        - special.gammaln(rest + 1.0)
        + special.xlogy(b, p_a_only)
        + special.xlogy(c, p_b_only)
        + special.xlogy(rest, 1.0 - p_a_only - p_b_only)
    )
    return b, c, np.exp(log_p)


def point_columns(n: int, discordance: float, asymmetry: float) -> dict[str, Any]:
    """The columns naming a grid point in a coverage table (those of :func:`coverage_grid`, and
    of a simulation merged with it): ``n``, ``discordance`` ``ψ``, ``asymmetry`` ``a``,
    ``expected_discordant`` (``n·ψ``, what :func:`judged` reads) and ``delta`` (``Δ = a·ψ``).

    >>> point_columns(200, 0.02, 0.5)
    {'n': 200, 'discordance': 0.02, 'asymmetry': 0.5, 'expected_discordant': 4.0, 'delta': 0.01}
    """
    return {
        "n": n,
        "discordance": discordance,
        "asymmetry": asymmetry,
        "expected_discordant": n * discordance,
        "delta": asymmetry * discordance,
    }


def coverage_grid(
    ns: Sequence[int] = GRID_N,
    discordances: Sequence[float] = GRID_DISCORDANCE,
    asymmetries: Sequence[float] = GRID_ASYMMETRY,
    *,
    methods: Sequence[str] = EXACT_METHODS,
    confidence: float = CONFIDENCE,
    widths: bool = False,
) -> pd.DataFrame:
    """The exact coverage of ``Δ = a·ψ`` by each method (a key of :data:`EXACT_METHODS`) at every
    point of the grid, one row per point and method: ``n``, ``discordance``, ``asymmetry``,
    ``expected_discordant`` (``n·ψ``), ``delta`` (``a·ψ``), ``method``, ``coverage`` and
    ``mean_width`` (NaN unless ``widths``: the score intervals' ends take a bisection each).

    Each point's coverage is the sum of the probabilities of the ``(b, c)`` of
    :func:`trinomial_support` whose interval holds ``Δ``; the whole grid is one vectorised call
    per method.

    >>> grid = coverage_grid([200], [0.02], [1.0], methods=["score_cc", "score"])
    >>> grid["coverage"].round(3).tolist()
    [0.993, 0.933]
    """
    methods = check_value(Items(Choice(EXACT_METHODS)), tuple(methods), where="coverage_grid",
                          field="methods")  # fmt: skip
    points = [
        (int(n), float(psi), float(a)) for n in ns for psi in discordances for a in asymmetries
    ]
    parts = []
    for i, (n, psi, a) in enumerate(points):
        cells = cell_probabilities(psi, a, 0.5)  # the concordant split does not matter here
        b, c, pmf = trinomial_support(n, float(cells[1]), float(cells[2]))
        parts.append((np.full(b.size, i), b, c, np.full(b.size, n), np.full(b.size, a * psi), pmf))
    point, b, c, n_row, delta, pmf = (np.concatenate(column) for column in zip(*parts, strict=True))
    zeros = np.zeros_like(b)
    neither = n_row - b - c
    rows = []
    results: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for method in methods:
        hit = covers(method, delta, zeros, b, c, neither, confidence=confidence)
        coverage = np.bincount(point, weights=pmf * hit, minlength=len(points))
        width = np.full(len(points), np.nan)
        if widths:
            lo, hi = interval(method, zeros, b, c, neither, confidence=confidence)
            width = np.bincount(point, weights=pmf * (hi - lo), minlength=len(points))
        results[method] = (coverage, width)
    for i, (n, psi, a) in enumerate(points):
        for method in methods:
            coverage, width = results[method]
            rows.append(
                {
                    **point_columns(n, psi, a),
                    "method": method,
                    "coverage": float(coverage[i]),
                    "mean_width": float(width[i]),
                }
            )
    return pd.DataFrame(rows)


def judged(table: pd.DataFrame, min_expected: float = MIN_EXPECTED_DISCORDANT) -> pd.DataFrame:
    """The rows of a coverage table whose point expects at least ``min_expected`` discordant
    questions (``n·ψ``, with a relative tolerance of 1e-9 for the float product)."""
    return table[table["expected_discordant"] >= min_expected * (1.0 - 1e-9)]


def minimum_coverage(
    table: pd.DataFrame,
    *,
    column: str = "coverage",
    min_expected: float = MIN_EXPECTED_DISCORDANT,
    floor: float = COVERAGE_FLOOR,
) -> pd.DataFrame:
    """Per method, the smallest ``column`` over the judged points (:func:`judged`), the point
    where it is reached (``n``, ``discordance``, ``asymmetry``), and how many judged points lie
    below ``floor`` out of how many; methods in the table's order."""
    kept = judged(table, min_expected)
    rows = []
    for method, group in kept.groupby("method", sort=False):
        worst = group.loc[group[column].idxmin()]
        rows.append(
            {
                "method": method,
                "minimum": float(worst[column]),
                "n": int(worst["n"]),
                "discordance": float(worst["discordance"]),
                "asymmetry": float(worst["asymmetry"]),
                "below_floor": int((group[column] < floor).sum()),
                "points": len(group),
            }
        )
    return pd.DataFrame(rows)


def coverage_summary(
    table: pd.DataFrame,
    *,
    column: str = "coverage",
    width_column: str = "mean_width",
    min_expected: float = MIN_EXPECTED_DISCORDANT,
    far_below: float = FAR_BELOW,
) -> pd.DataFrame:
    """Per method (in the table's order) over the judged points (:func:`judged`): ``mean`` and
    ``minimum`` coverage, ``far_below`` (the share of points covering below ``far_below``),
    ``mean_width`` (the mean over points of the expected width; NaN without widths) and
    ``points``.

    >>> grid = coverage_grid([200], [0.02, 0.1], [0.0, 1.0], methods=["score"], widths=True)
    >>> row = coverage_summary(grid).iloc[0]
    >>> row["method"], round(float(row["minimum"]), 3), int(row["points"])
    ('score', 0.933, 4)
    """
    rows = []
    for method, group in judged(table, min_expected).groupby("method", sort=False):
        rows.append(
            {
                "method": method,
                "mean": float(group[column].mean()),
                "minimum": float(group[column].min()),
                "far_below": float((group[column] < far_below).mean()),
                "mean_width": float(group[width_column].mean()),
                "points": len(group),
            }
        )
    return pd.DataFrame(rows)


def select_interval(
    summary: pd.DataFrame,
    *,
    nominal: float = CONFIDENCE,
    tolerance: float = MEAN_TOLERANCE,
    far_share: float = FAR_BELOW_SHARE,
) -> str | None:
    """The method :data:`SELECTION_RULE` picks from a :func:`coverage_summary` (None: none
    qualifies).

    >>> select_interval(pd.DataFrame({"method": ["a", "b", "c", "d"],
    ...     "mean": [0.982, 0.962, 0.948, 0.93], "far_below": [0.0, 0.02, 0.2, 0.0]}))
    'b'
    """
    ok = summary[(summary["mean"] >= nominal - tolerance) & (summary["far_below"] <= far_share)]
    if ok.empty:
        return None
    return str(ok.loc[(ok["mean"] - nominal).abs().idxmin(), "method"])


# --- simulation --------------------------------------------------------------------------------


def simulate_point(
    n: int,
    discordance: float,
    asymmetry: float,
    replications: int,
    rng: np.random.Generator,
    *,
    methods: Sequence[str] = tuple(METHODS),
    hit_rate_b: float = HIT_RATE_B,
    confidence: float = CONFIDENCE,
) -> dict[str, tuple[float, float]]:
    """The simulated coverage of ``Δ = a·ψ`` and the mean width of each method at one grid
    point: ``replications`` paired tables drawn by ``rng.multinomial`` from
    :func:`cell_probabilities`. Each distinct table's interval is computed once."""
    methods = check_value(Items(Choice(tuple(METHODS))), tuple(methods), where="simulate_point",
                          field="methods")  # fmt: skip
    cells = cell_probabilities(discordance, asymmetry, hit_rate_b)
    delta = asymmetry * discordance
    draws = rng.multinomial(n, cells, size=replications)
    tables, index = np.unique(draws, axis=0, return_inverse=True)
    index = index.ravel()
    both, b, c, neither = tables.T
    out: dict[str, tuple[float, float]] = {}
    for method in methods:
        lo, hi = interval(method, both, b, c, neither, confidence=confidence)
        hit = covers(method, delta, both, b, c, neither, confidence=confidence)
        out[method] = (float(hit[index].mean()), float((hi - lo)[index].mean()))
    return out
