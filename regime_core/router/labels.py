"""Self-supervised router labels from retrieval outcomes (no oracle regime label is read).

For each question, ``rank_q`` and ``rank_union`` are the 1-based ranks of the hop-2 target under
the ``q`` and ``union`` arms (``np.inf`` when it was not retrieved at all). The label says which
action should have been taken::

    without k:  union wins  ⇔  rank_union < rank_q            tie ⇔ rank_union == rank_q
    with k:     union wins  ⇔  rank_union ≤ k < rank_q        tie ⇔ both hit@k or both miss

``q`` wins the remaining items. Ties are resolved by ``tie_rule`` (default
``config.LABEL_TIE_RULE``):

- ``"q"``: a tie is labelled 0, the cheaper action (q needs no bridge sentence);
- ``"union"``: a tie is labelled 1;
- ``"exclude"``: a tie is labelled :data:`EXCLUDED` (-1); the caller keeps ``labels != EXCLUDED``,
  and must count and report the excluded items (:func:`tie_mask` gives them directly).
  :class:`~regime_core.router.estimator.RegimeRouter` refuses -1 labels.

>>> outcome_labels([3, 1, 2, np.inf], [1, 1, 5, 4])
array([1, 0, 0, 1])
>>> outcome_labels([3, 1, 2, np.inf], [1, 1, 5, 4], tie_rule="exclude")
array([ 1, -1,  0,  1])
>>> outcome_labels([3, 1, 2, np.inf], [1, 1, 5, 4], k=2)
array([1, 0, 0, 0])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from regime_core import config

TIE_RULES: tuple[str, ...] = ("q", "union", "exclude")
"""what a tie between q and union may be labelled

- q: labelled q, the cheaper action
- union: labelled union
- exclude: no label: the question is left out of training, and counted
"""
Q, UNION, EXCLUDED = 0, 1, -1
ACTIONS: tuple[str, str] = ("q", "union")  # label 0 and label 1


def _ranks(values: Any, name: str) -> np.ndarray:
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric ranks: {exc}") from None
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if np.isnan(arr).any():
        raise ValueError(f"{name} has NaN at index {int(np.flatnonzero(np.isnan(arr))[0])}")
    bad = ~(arr >= 1) | ((arr != np.floor(arr)) & np.isfinite(arr)) | (arr == -np.inf)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{name}[{i}] is {arr[i]}: ranks are integers >= 1 (1 = top), or inf when the "
            "target was not retrieved"
        )
    return arr


def _outcomes(rank_q: Any, rank_union: Any, k: int | None) -> tuple[np.ndarray, np.ndarray]:
    """(union strictly better, tie) boolean arrays."""
    rq, ru = _ranks(rank_q, "rank_q"), _ranks(rank_union, "rank_union")
    if rq.shape != ru.shape:
        raise ValueError(f"rank_q has {rq.size} items but rank_union has {ru.size}")
    if k is None:
        return ru < rq, ru == rq
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise ValueError(f"k must be None or an integer >= 1, got {k!r}")
    hit_q, hit_u = rq <= k, ru <= k
    return hit_u & ~hit_q, hit_u == hit_q


def tie_mask(rank_q: Any, rank_union: Any, *, k: int | None = None) -> np.ndarray:
    """Boolean mask of the items on which q and union tie (under the same ``k`` rule)."""
    return _outcomes(rank_q, rank_union, k)[1]


def outcome_labels(
    rank_q: Any,
    rank_union: Any,
    *,
    tie_rule: str = config.LABEL_TIE_RULE,
    k: int | None = None,
) -> np.ndarray:
    """Label 1 (union) where union places the hop-2 target strictly better, 0 (q) where q does,
    ties by ``tie_rule``; int64 array. See the module docstring for the rules."""
    if tie_rule not in TIE_RULES:
        raise ValueError(f"tie_rule is {tie_rule!r}, not one of {TIE_RULES}")
    union_wins, tie = _outcomes(rank_q, rank_union, k)
    labels = union_wins.astype(np.int64)
    if tie_rule == "union":
        labels[tie] = UNION
    elif tie_rule == "exclude":
        labels[tie] = EXCLUDED
    return labels


def describe_label_rule(*, tie_rule: str = config.LABEL_TIE_RULE, k: int | None = None) -> str:
    """A canonical name for a label rule, recorded with a saved router.

    >>> describe_label_rule()
    'rank(union)<rank(q); ties->q'
    >>> describe_label_rule(tie_rule="exclude", k=5)
    'hit@5(union) and miss@5(q); ties->exclude'
    """
    if tie_rule not in TIE_RULES:
        raise ValueError(f"tie_rule is {tie_rule!r}, not one of {TIE_RULES}")
    if k is None:
        return f"rank(union)<rank(q); ties->{tie_rule}"
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be None or an integer >= 1, got {k!r}")
    return f"hit@{k}(union) and miss@{k}(q); ties->{tie_rule}"
