"""The spreads of the question-side and bridge-side scores (issue 26): the kernels on constructed
score matrices with known answers, and measure_spreads on a synthetic world against the retrieval
module's own candidate scores."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import HashingEncoder, RecordingStore, settings

from regime_core.data.toyworld import ToyWorldConfig, generate
from regime_core.retrieval import retrieve_arms
from regime_core.retrieval.geometry import build_geometry
from regime_core.retrieval.spread import (
    measure_spreads,
    median_ratio,
    row_spread,
    spread_ratio,
    spread_ratios,
    spread_table,
    summarise_spreads,
)

ENCODER = HashingEncoder(64)
STORE = RecordingStore()


def test_row_spread_is_the_population_sd_of_the_included_entries() -> None:
    scores = np.array(
        [
            [1.0, 3.0, 5.0, 7.0],  # all four: mean 4, deviations ±1, ±3 -> sqrt(5)
            [2.0, 2.0, 2.0, 100.0],  # the outlier left out: spread 0
            [0.5, -np.inf, -np.inf, -np.inf],  # one entry: 0
            [1.0, 2.0, 3.0, 4.0],  # nothing included: NaN
        ]
    )
    include = np.array(
        [
            [True, True, True, True],
            [True, True, True, False],
            [True, False, False, False],
            [False, False, False, False],
        ]
    )
    out = row_spread(scores, include)
    assert out[:3] == pytest.approx([np.sqrt(5.0), 0.0, 0.0], abs=1e-12)
    assert np.isnan(out[3])
    # population (ddof = 0), as numpy's default
    rng = np.random.default_rng(0)
    x = rng.normal(size=(5, 9))
    assert row_spread(x, np.ones_like(x, dtype=bool)) == pytest.approx(x.std(axis=1), rel=1e-12)


def test_spread_ratio_is_nan_where_either_spread_is_zero() -> None:
    ratio = spread_ratio(np.array([0.3, 0.3, 0.0, 0.0, np.nan]), np.array([0.1, 0.0, 0.2, 0.0, 1]))
    assert ratio[0] == pytest.approx(3.0)
    assert np.isnan(ratio[1:]).all()


def test_summary_counts_every_question_left_out_of_the_median() -> None:
    sq = np.array([0.2, 0.4, 0.6, 0.0, 0.5])
    sb = np.array([0.1, 0.1, 0.1, 0.1, 0.0])
    s = summarise_spreads(sq, sb)
    assert (s.n, s.n_ratio, s.n_zero_q, s.n_zero_b) == (5, 3, 1, 1)
    assert s.median_ratio == pytest.approx(4.0)  # ratios 2, 4, 6
    assert (s.ratio_q1, s.ratio_q3) == pytest.approx((3.0, 5.0))
    assert s.median_sigma_q == pytest.approx(0.4)
    assert s.median_sigma_b == pytest.approx(0.1)
    assert median_ratio(spread_ratio(sq, sb)) == pytest.approx(4.0)
    with pytest.raises(ValueError, match="both spreads positive"):
        median_ratio(np.array([np.nan, np.nan]))
    empty = summarise_spreads(np.zeros(2), np.zeros(2))
    assert empty.n_ratio == 0 and np.isnan(empty.median_ratio)


@pytest.fixture(scope="module")
def toy():  # type: ignore[no-untyped-def]
    examples = generate(ToyWorldConfig(n_questions=40, seed=0))
    b_rel = [ex.bridge.sentences[0] for ex in examples]
    return examples, b_rel


def test_measure_spreads_equals_the_sd_of_the_q_arms_candidate_scores(toy) -> None:  # type: ignore[no-untyped-def]
    examples, b_rel = toy
    geometry = build_geometry(examples, b_rel, settings(), encoder=ENCODER, store=STORE)
    spreads = measure_spreads(geometry)
    ranking = retrieve_arms(
        examples, ("q",), settings(), encoder=ENCODER, store=STORE, b_rel=b_rel, depth=None
    )["q"]
    expected = np.array([np.std(np.asarray(s, dtype=np.float64)) for s in ranking.candidate_scores])
    # the q arm's query is normalise(f(q)); the hashing encoder's vectors are unit already
    np.testing.assert_allclose(spreads.sigma_q, expected, rtol=1e-5)
    assert spreads.n_candidates.tolist() == [len(s) for s in ranking.candidate_scores]
    # distractors: the same scores without the target's
    targets = geometry.target_positions
    expected_d = np.array(
        [
            np.std(np.delete(np.asarray(s, np.float64), t))
            for s, t in zip(ranking.candidate_scores, targets, strict=True)
        ]
    )
    np.testing.assert_allclose(spreads.sigma_q_distractors, expected_d, rtol=1e-5)
    assert np.all(spreads.sigma_b > 0)


def test_corpus_mode_spreads_equal_a_dense_computation(toy) -> None:  # type: ignore[no-untyped-def]
    examples, b_rel = toy
    geometry = build_geometry(
        examples, b_rel, settings(pool="corpus"), encoder=ENCODER, store=STORE
    )
    spreads = measure_spreads(geometry)
    docs = np.asarray(geometry.document_vectors, dtype=np.float64)
    for side, vectors in (("q", geometry.question_vectors), ("b", geometry.b_rel_vectors)):
        scores = np.asarray(vectors, dtype=np.float64) @ docs.T
        want, want_d = [], []
        for i in range(geometry.n):
            row = np.delete(scores[i], geometry.excluded_rows[i])
            want.append(row.std())
            want_d.append(np.delete(row, geometry.target_positions[i]).std())
        got, got_d = spreads.columns("ranked"), spreads.columns("distractors")
        j = 0 if side == "q" else 1
        np.testing.assert_allclose(got[j], want, rtol=1e-5)
        np.testing.assert_allclose(got_d[j], want_d, rtol=1e-5)


@pytest.mark.parametrize("pool", ["question", "corpus"])
def test_spread_ratios_equal_the_full_measurements_bit_for_bit(toy, pool: str) -> None:  # type: ignore[no-untyped-def]
    examples, b_rel = toy
    geometry = build_geometry(examples, b_rel, settings(pool=pool), encoder=ENCODER, store=STORE)
    spreads = measure_spreads(geometry)
    for candidates in ("ranked", "distractors"):
        np.testing.assert_array_equal(
            spread_ratios(geometry, candidates), spreads.ratios(candidates)
        )


def test_spread_table_groups_and_counts(toy) -> None:  # type: ignore[no-untyped-def]
    examples, b_rel = toy
    spreads = measure_spreads(
        build_geometry(examples, b_rel, settings(), encoder=ENCODER, store=STORE)
    )
    half = np.where(np.arange(spreads.n) < 10, "a", "b")
    table = spread_table(spreads, {"group": half})
    assert table["group"].tolist() == ["a", "a", "b", "b"]
    assert table["candidates"].tolist() == ["ranked", "distractors"] * 2
    assert table["n"].tolist() == [10, 10, spreads.n - 10, spreads.n - 10]
    whole = spread_table(spreads, candidates=("ranked",))
    assert len(whole) == 1
    assert whole["median_ratio"].iloc[0] == pytest.approx(median_ratio(spreads.ratios()))
