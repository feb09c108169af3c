"""Outcome labels: which of q and union ranked the hop-2 target better."""

from __future__ import annotations

import numpy as np

from regime_core import config
from regime_core.router import EXCLUDED, describe_label_rule, outcome_labels, tie_mask

RANK_Q = [3, 1, 2, np.inf, 7, 1]
RANK_U = [1, 1, 5, 4, 7, 2]


def test_strict_rank_rule_with_each_tie_rule() -> None:
    assert outcome_labels(RANK_Q, RANK_U, tie_rule="q").tolist() == [1, 0, 0, 1, 0, 0]
    assert outcome_labels(RANK_Q, RANK_U, tie_rule="union").tolist() == [1, 1, 0, 1, 1, 0]
    excluded = outcome_labels(RANK_Q, RANK_U, tie_rule="exclude")
    assert excluded.tolist() == [1, EXCLUDED, 0, 1, EXCLUDED, 0]
    np.testing.assert_array_equal(excluded == EXCLUDED, tie_mask(RANK_Q, RANK_U))


def test_default_tie_rule_comes_from_config() -> None:
    expected = outcome_labels(RANK_Q, RANK_U, tie_rule=config.LABEL_TIE_RULE)
    np.testing.assert_array_equal(outcome_labels(RANK_Q, RANK_U), expected)


def test_hits_at_k_rule() -> None:
    # k=2: union hits and q misses only for item 0 (3 -> 1); item 3 (inf -> 4) misses both.
    assert outcome_labels(RANK_Q, RANK_U, k=2).tolist() == [1, 0, 0, 0, 0, 0]
    assert outcome_labels(RANK_Q, RANK_U, k=5).tolist() == [0, 0, 0, 1, 0, 0]
    ties = tie_mask(RANK_Q, RANK_U, k=2)
    assert ties.tolist() == [False, True, False, True, True, True]
    assert outcome_labels(RANK_Q, RANK_U, k=2, tie_rule="union").tolist() == [1, 1, 0, 1, 1, 1]


def test_output_is_int_and_pure() -> None:
    rq = np.array(RANK_Q, dtype=float)
    before = rq.copy()
    labels = outcome_labels(rq, RANK_U)
    assert labels.dtype == np.int64
    np.testing.assert_array_equal(rq, before)


def test_describe_label_rule() -> None:
    assert describe_label_rule() == f"rank(union)<rank(q); ties->{config.LABEL_TIE_RULE}"
    assert "hit@5" in describe_label_rule(k=5)
