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


def _outcomes(rank_q: Any, rank_union: Any, k: int | None) -> tuple[np.ndarray, np.ndarray]:
    """(union strictly better, tie) boolean arrays."""
    # Ranks from our own rankers (integers >= 1, inf when not retrieved); the label rule's
    # tie_rule and k come from a validated config.
    rq, ru = np.asarray(rank_q, dtype=np.float64), np.asarray(rank_union, dtype=np.float64)
    if k is None:
        return ru < rq, ru == rq
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
    if k is None:
        return f"rank(union)<rank(q); ties->{tie_rule}"
    return f"hit@{k}(union) and miss@{k}(q); ties->{tie_rule}"
