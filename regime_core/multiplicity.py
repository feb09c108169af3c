"""Multiple testing: Holm's step-down adjustment and the score intervals at the level Holm judged
each comparison, so that an adjusted p sits beside an interval that agrees with it.

A Holm-level interval is not a simultaneous interval: it is the interval at the level Holm tested
its own hypothesis (:func:`holm_levels`), and a page shows its level beside it
(:func:`regime_core.vocabulary.interval_label`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from regime_core.config import CONFIDENCE
from regime_core.inputs import check_value
from regime_core.inputs.configs import LEVEL
from regime_core.stats import ArrayLike, _vector, score_interval


def _pvalues(pvalues: Any) -> np.ndarray:
    p = _vector(pvalues, "pvalues")
    if np.any((p < 0) | (p > 1)):
        raise ValueError("pvalues: every p-value must lie in [0, 1]")
    return p


def holm(pvalues: ArrayLike) -> np.ndarray:
    """Holm step-down adjusted p-values, in the input order.

    Sorted ascending, ``p_(i)`` becomes ``max_{j <= i} min(1, (m - j + 1) p_(j))``: statsmodels'
    ``multipletests(method="holm")`` step for step (tested bit for bit) without its
    ``gc.collect()`` per call, seconds in a run of thousands of families.

    >>> holm([0.01, 0.04, 0.03]).round(4).tolist()
    [0.03, 0.06, 0.06]
    """
    p = _pvalues(pvalues)
    order = np.argsort(p, kind="stable")  # tied p get the same adjusted value in any order
    adjusted = np.maximum.accumulate(p[order] * np.arange(p.size, 0, -1))
    adjusted[adjusted > 1] = 1.0
    out = np.empty_like(adjusted)
    out[order] = adjusted
    return out


def holm_levels(pvalues: ArrayLike, alpha: float = 1.0 - CONFIDENCE) -> np.ndarray:
    """Per hypothesis, the test level at which Holm judged it: the level of its *adjusted*
    interval, so that the interval excludes zero exactly when its Holm-adjusted p is below
    ``alpha``.

    Sorted ascending, Holm tests ``p_(i)`` at ``alpha / (m - i + 1)`` and stops at the first
    ``i*`` it cannot reject. Hypothesis ``i`` gets ``alpha / (m - min(i, i*) + 1)``: the level it
    was rejected at (``i < i*``), or the level Holm stopped at (``i >= i*``, where every p is at
    least ``p_(i*)`` and so above that level). An interval that inverts the same test at
    ``1 - level`` (:func:`score_interval`) then agrees with the Holm decision for every
    hypothesis. Ties keep the input order.

    >>> holm_levels([0.001, 0.04, 0.03], alpha=0.05).round(4).tolist()
    [0.0167, 0.025, 0.025]
    """
    p, alpha = _pvalues(pvalues), check_value(LEVEL, alpha, where="holm_levels", field="alpha")
    m = p.size
    order = np.argsort(p, kind="stable")
    step = alpha / (m - np.arange(m))  # the level of the i-th smallest p
    failed = np.flatnonzero(p[order] >= step)
    stop = int(failed[0]) if failed.size else m
    levels = np.empty(m)
    levels[order] = step[np.minimum(np.arange(m), stop)]
    return levels


def holm_intervals(
    n_a_better: ArrayLike,
    n_b_better: ArrayLike,
    n: ArrayLike,
    pvalues: ArrayLike,
    alpha: float = 1.0 - CONFIDENCE,
) -> tuple[np.ndarray, np.ndarray]:
    """The score interval (:func:`score_interval`, the same method as every unadjusted one) of
    each comparison of a Holm family at the level Holm judged it (:func:`holm_levels`): with the
    p-values of :func:`score_test` it excludes zero exactly when the comparison's Holm-adjusted
    p is below ``alpha``, so an adjusted p sits beside an adjusted interval. The four arrays
    are columns of one table of comparisons (T2's and T3's), one row each. Returns ``(lo, hi)``.

    >>> lo, hi = holm_intervals([30, 6], [5, 4], [200, 200], [2.1e-5, 0.75])
    >>> bool(lo[0] > 0), bool(lo[1] <= 0 <= hi[1])
    (True, True)
    """
    a = np.asarray(n_a_better, dtype=np.int64)
    b = np.asarray(n_b_better, dtype=np.int64)
    total = np.asarray(n, dtype=np.int64)
    levels = holm_levels(pvalues, alpha)
    lo, hi = np.empty(levels.shape), np.empty(levels.shape)
    for level in np.unique(levels):  # one vectorised call per distinct Holm level
        at = levels == level
        lo[at], hi[at] = score_interval(a[at], b[at], total[at], confidence=1.0 - float(level))
    return lo, hi


def family_confidences(
    family: Mapping[str, Any], alpha: float = 1.0 - CONFIDENCE
) -> dict[str, float]:
    """The confidence of each Holm-level interval of a record's Holm family: every node under
    ``family`` holding ``p_holm`` and its unadjusted p (``p``, else ``p_value``), by its dotted
    path there, gets one minus the level Holm tested it at (:func:`holm_levels`).

    >>> family_confidences({"a": {"p": 0.001, "p_holm": 0.002}, "b": {"p": 0.3, "p_holm": 0.3}})
    {'a': 0.975, 'b': 0.95}
    """
    found: list[tuple[str, float]] = []

    def walk(node: Mapping[str, Any], path: str) -> None:
        if "p_holm" in node:
            p = node.get("p", node.get("p_value"))
            if p is not None:  # without its unadjusted p the level cannot be known
                found.append((path, float(p)))
            return
        for key, value in node.items():
            if isinstance(value, Mapping):
                walk(value, f"{path}.{key}" if path else str(key))

    walk(family, "")
    if not found:
        return {}
    levels = holm_levels([p for _, p in found], alpha)
    return {path: 1.0 - float(level) for (path, _), level in zip(found, levels, strict=True)}
