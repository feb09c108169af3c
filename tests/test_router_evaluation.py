"""Scoring a routing policy against always-q, always-union and the oracle; pure functions."""

from __future__ import annotations

import numpy as np
import pytest

from regime_core.router.evaluation import (
    COMPARISON_FIELDS,
    Bootstrap,
    comparison_numbers,
    evaluate_routing,
    subset_outcome,
)

FEW = Bootstrap(resamples=300)


def test_evaluate_routing_policies_and_oracle() -> None:
    hit_q = np.array([1, 0, 0, 1, 0, 1], dtype=bool)
    hit_u = np.array([1, 1, 0, 0, 1, 1], dtype=bool)
    routed = np.array([0, 1, 1, 1, 0, 0], dtype=bool)
    out = evaluate_routing(hit_q, hit_u, routed, np.full(6, 0.5), dataset="x", bootstrap=FEW)
    assert out.hits["routed"].tolist() == [True, True, False, False, False, True]
    assert out.hits["oracle"].tolist() == [True, True, False, True, True, True]
    c = out.comparison("routed_vs_q")
    assert c.diff == pytest.approx(0.0)
    assert (c.n_a_better, c.n_b_better) == (1, 1)
    gap = out.comparison("oracle_vs_routed")
    assert gap.diff == pytest.approx(2 / 6)
    numbers = out.to_numbers()
    assert numbers["hit@5_oracle"] == pytest.approx(5 / 6)
    assert numbers["share_union"] == pytest.approx(0.5)
    # the exact conditional p and the mid-p stand beside the p a verdict reads
    assert list(numbers["routed_vs_q"]) == [*COMPARISON_FIELDS, "p_exact", "p_mid"]
    assert numbers["routed_vs_q"]["p_mid"] <= numbers["routed_vs_q"]["p_exact"]
    assert numbers["routed_vs_q"] == comparison_numbers(c)


def test_subset_outcome_scores_the_kept_questions_only() -> None:
    hit_q = np.array([1, 0, 0, 1], dtype=bool)
    hit_u = np.array([1, 1, 0, 0], dtype=bool)
    out = evaluate_routing(hit_q, hit_u, [1, 1, 0, 0], np.full(4, 0.5), dataset="x", bootstrap=FEW)
    part = subset_outcome(out, [True, True, False, False], bootstrap=FEW)
    assert part is not None and part.n == 2
    assert part.hits["routed"].tolist() == [True, True]
    # binary outcomes: the score interval, the same procedure as the test (no resampling)
    kept = part.comparison("routed_vs_q")
    assert kept.ci_method == "score" and kept.bootstrap_resamples is None
    assert (kept.n, kept.n_a_better, kept.n_b_better) == (2, 1, 0)
    assert subset_outcome(out, [False] * 4) is None
