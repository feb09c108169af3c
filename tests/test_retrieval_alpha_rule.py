"""The calibrated bridge weight (issue 26): the rule on constructed geometries with known answers,
the choice of the best grid α (ties), cross-fitting that never fits c on the questions it is
applied to, and the regret at its boundaries."""

from __future__ import annotations

import numpy as np
import pytest

from regime_core import config
from regime_core.retrieval.alpha_rule import (
    FINE_ALPHA_GRID,
    AlphaRuleProtocol,
    best_grid_index,
    cross_fit_scales,
    cross_fitted_best,
    fit_rule,
    fit_scale,
    grid_hits,
    in_sample_best,
    regret,
    rule_weights,
    union_hits,
)
from regime_core.retrieval.geometry import UnionGeometry
from regime_core.retrieval.spread import measure_spreads, median_ratio

# One pool of four candidates, target first. Question side s_q = x, bridge side s_B = y·s (s: the
# question's bridge scale). The target is top 1 exactly when 0.42 < α·s < 0.58: below, D1 wins
# (x higher, y lower); above, D2 wins (y highest).
X = np.array([0.5, 0.5525, 0.21, 0.0])
Y = np.array([0.5, 0.375, 1.0, 0.0])
LOW, HIGH = 0.42, 0.58


def constructed(scales: list[float] | np.ndarray) -> UnionGeometry:
    n = len(scales)
    documents = np.stack([X, Y, np.zeros(4)], axis=1).astype(np.float32)
    return UnionGeometry(
        query_ids=tuple(f"q{i}" for i in range(n)),
        question_vectors=np.tile(np.array([1.0, 0.0, 0.0], np.float32), (n, 1)),
        b_rel_vectors=np.array([[0.0, s, 0.0] for s in scales], np.float32),
        document_vectors=documents,
        candidates=np.tile(np.arange(4), (n, 1)),
        target_positions=np.zeros(n, dtype=np.int64),
        pool="question",
    )


def test_constructed_geometry_spreads_and_hits_are_the_known_ones() -> None:
    geometry = constructed([1.0, 2.0])
    spreads = measure_spreads(geometry)
    np.testing.assert_allclose(spreads.sigma_q, [X.std(), X.std()], rtol=1e-6)
    np.testing.assert_allclose(spreads.sigma_b, [Y.std(), 2 * Y.std()], rtol=1e-6)
    np.testing.assert_allclose(spreads.ratios(), [X.std() / Y.std(), X.std() / Y.std() / 2])
    grid = np.asarray(FINE_ALPHA_GRID)
    hits = grid_hits(geometry, grid, k=1)
    np.testing.assert_array_equal(hits[:, 0], (grid > LOW) & (grid < HIGH))
    np.testing.assert_array_equal(hits[:, 1], (2 * grid > LOW) & (2 * grid < HIGH))


def test_the_calibrated_weight_transfers_where_the_fixed_one_does_not() -> None:
    """Fitted where the bridge side spreads like x, applied where it spreads twice as wide: the
    ratio halves, so does α, and it lands in the new winning window; the fitted constant misses."""
    train, other = constructed([1.0] * 10), constructed([2.0] * 10)
    grid = np.asarray(FINE_ALPHA_GRID)
    r_train = measure_spreads(train).ratios()
    hits = grid_hits(train, grid, k=1)
    assert best_grid_index(hits) == 10  # 0.45, 0.50, 0.55 tie: the lower median, 0.50
    c = fit_scale(hits, grid, r_train)
    assert c == pytest.approx(0.5 / (X.std() / Y.std()))
    alpha_other = rule_weights("dataset", c, measure_spreads(other).ratios())
    np.testing.assert_allclose(alpha_other, 0.25, rtol=1e-6)
    assert union_hits(other, alpha_other, k=1).all()
    assert not union_hits(other, 0.5, k=1).any()


def test_the_per_question_rule_follows_each_questions_own_ratio() -> None:
    scales = np.array([0.8, 1.0, 1.5, 2.0, 3.0] * 4)
    geometry = constructed(scales)
    ratios = measure_spreads(geometry).ratios()
    folds = np.arange(scales.size) % 4
    fitted = fit_rule(geometry, ratios, folds, scope="question", k=1)
    # α_i·s_i = c·r_i·s_i is the same for every question: one c puts every question in its window
    assert fitted.hits.all()
    for fold, c in enumerate(fitted.fold_c):
        held = folds == fold
        product = fitted.weights[held] * scales[held]
        np.testing.assert_allclose(product, c * X.std() / Y.std(), rtol=1e-5)
    # one weight for all cannot: the windows (0.42/s, 0.58/s) of s = 0.8 and s = 3 are disjoint
    dataset = fit_rule(geometry, ratios, folds, scope="dataset", k=1)
    assert not dataset.hits.all()
    assert np.unique(dataset.weights[folds == 0]).size == 1


def test_rule_weights() -> None:
    ratios = np.array([1.0, 2.0, 4.0, np.nan])
    np.testing.assert_allclose(rule_weights("dataset", 0.5, ratios), [1.0] * 4)  # median 2
    np.testing.assert_allclose(rule_weights("question", 0.5, ratios), [0.5, 1.0, 2.0, 1.0])
    assert rule_weights("dataset", 0.0, ratios).tolist() == [0.0] * 4
    with pytest.raises(ValueError, match="both spreads positive"):
        rule_weights("dataset", 0.5, np.array([np.nan]))


def test_best_grid_index_ties_go_to_the_lower_median() -> None:
    h = np.array([[1, 0, 0], [1, 1, 0], [0, 1, 1], [1, 1, 0], [0, 0, 0]], dtype=bool)
    # counts 1, 2, 2, 2, 0: tied 1, 2, 3 -> 2
    assert best_grid_index(h) == 2
    assert best_grid_index(h[:3]) == 1  # tied 1, 2 -> the lower, 1
    assert best_grid_index(h, np.array([True, False, False])) == 1  # tied 0, 1, 3 -> 1
    assert best_grid_index(h, np.array([2])) == 2
    assert best_grid_index(np.zeros((3, 2), dtype=bool)) == 1  # all tie at zero hits


def test_in_sample_best() -> None:
    h = np.array([[1, 0, 0], [1, 1, 0], [0, 0, 1]], dtype=bool)
    alpha, hits = in_sample_best(h, np.array([0.0, 0.5, 1.0]))
    assert alpha == 0.5 and hits.tolist() == [True, True, False]


def random_case(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    grid = np.asarray(FINE_ALPHA_GRID)
    hits = rng.random((grid.size, 60)) < 0.5
    ratios = rng.uniform(0.5, 3.0, 60)
    folds = np.arange(60) % 5
    return grid, hits, ratios, folds


def test_cross_fitting_never_fits_on_the_questions_it_is_applied_to() -> None:
    grid, hits, ratios, folds = random_case()
    scales = cross_fit_scales(hits, grid, ratios, folds)
    alphas, cf_hits = cross_fitted_best(hits, grid, folds)
    for fold in range(5):
        held = folds == fold
        train = ~held
        assert scales[fold] == pytest.approx(fit_scale(hits, grid, ratios, train))
        assert alphas[fold] == grid[best_grid_index(hits, train)]
        # rewrite the held-out questions' hits and ratios: their fold's c and best α do not move
        h2, r2 = hits.copy(), ratios.copy()
        h2[:, held] = ~h2[:, held]
        r2[held] = 100.0
        assert cross_fit_scales(h2, grid, r2, folds)[fold] == scales[fold]
        assert cross_fitted_best(h2, grid, folds)[0][fold] == alphas[fold]
        # and the held-out questions are scored at the α chosen without them
        j = best_grid_index(hits, train)
        np.testing.assert_array_equal(cf_hits[held], hits[j, held])
    h3 = hits.copy()
    h3[0, folds != 0] = True  # the training questions do move it: α = 0 now wins every fold
    assert alphas.tolist() != [0.0] * 5
    assert cross_fitted_best(h3, grid, folds)[0].tolist() == [0.0] * 5


def test_fit_rule_weights_each_fold_from_the_other_folds() -> None:
    scales = np.array([0.8, 1.0, 1.2, 1.5] * 5)
    geometry = constructed(scales)
    ratios = measure_spreads(geometry).ratios()
    folds = np.arange(scales.size) % 5
    fitted = fit_rule(geometry, ratios, folds, scope="dataset", k=1)
    hits = grid_hits(geometry, FINE_ALPHA_GRID, k=1)
    assert fitted.c == pytest.approx(fit_scale(hits, FINE_ALPHA_GRID, ratios))
    for fold, c in enumerate(fitted.fold_c):
        held = folds == fold
        assert c == pytest.approx(fit_scale(hits, FINE_ALPHA_GRID, ratios, ~held))
        np.testing.assert_allclose(fitted.weights[held], c * median_ratio(ratios[held]))
    np.testing.assert_array_equal(fitted.hits, union_hits(geometry, fitted.weights, k=1))
    given = fit_rule(geometry, ratios, folds, scope="dataset", k=1, hits=hits)
    assert given.fold_c == fitted.fold_c and given.c == fitted.c
    # the held-out fold's bridges changed: its c stays, only its own weights move
    other = scales.copy()
    other[folds == 0] = 3.0
    moved = fit_rule(constructed(other), measure_spreads(constructed(other)).ratios(), folds, k=1)
    assert moved.fold_c[0] == fitted.fold_c[0]
    for scope in ("dataset", "question"):
        base = fit_rule(geometry, ratios, folds, scope=scope, k=1)
        changed = fit_rule(
            constructed(other),
            measure_spreads(constructed(other)).ratios(),
            folds,
            scope=scope,
            k=1,
        )
        assert changed.fold_c[0] == base.fold_c[0]


def test_regret_is_zero_when_the_rule_hits_the_grid_best() -> None:
    geometry = constructed([1.0, 1.0, 2.0, 2.0])
    hits = grid_hits(geometry, FINE_ALPHA_GRID, k=1)
    alpha, best = in_sample_best(hits, np.asarray(FINE_ALPHA_GRID))
    r = regret(
        best,
        union_hits(geometry, alpha, k=1),
        rule="calibrated",
        best="in_sample",
        alpha_rule=alpha,
        alpha_best=[alpha],
        resamples=200,
    )
    assert r.regret == 0.0
    c = r.comparison
    assert (c.diff, c.p_value, c.n_discordant) == (0.0, 1.0, 0)
    assert c.ci_lo == pytest.approx(-c.ci_hi) and c.ci_lo < 0  # no discordant pair: not a point
    assert r.alpha_best == (alpha,)


def test_regret_with_tied_grid_points_counts_the_same_whichever_is_best() -> None:
    # two grid points with two hits each on different questions; the rule hits one question
    hits = np.array([[1, 1, 0, 0], [0, 0, 1, 1]], dtype=bool)
    rule_hits = np.array([1, 0, 0, 0], dtype=bool)
    grid = np.array([0.2, 0.6])
    alpha, best = in_sample_best(hits, grid)
    assert alpha == 0.2 and best.tolist() == [True, True, False, False]  # the tie's lower median
    values = [
        regret(h, rule_hits, rule="r", best="in_sample", alpha_rule=1, alpha_best=[a], resamples=50)
        for h, a in zip(hits, grid, strict=True)
    ]
    assert values[0].regret == values[1].regret == 0.25
    # the discordance (hence McNemar's p) differs: the tie rule fixes which one is reported
    assert values[0].comparison.n_discordant == 1
    assert values[1].comparison.n_discordant == 3


def test_regret_at_alpha_zero_is_the_best_against_the_q_arm() -> None:
    geometry = constructed([1.0, 1.5, 2.0, 1.0])
    q_hits = geometry.target_ranks(0.0) <= 1
    assert not q_hits.any()  # D1 leads on the question side alone
    np.testing.assert_array_equal(union_hits(geometry, 0.0, k=1), q_hits)
    alpha, best = in_sample_best(grid_hits(geometry, FINE_ALPHA_GRID, k=1), FINE_ALPHA_GRID)
    r = regret(
        best,
        q_hits,
        rule="zero",
        best="in_sample",
        alpha_rule=0.0,
        alpha_best=[alpha],
        resamples=200,
    )
    assert r.regret == pytest.approx(best.mean()) and r.regret > 0
    assert r.comparison.n_a_better == int(best.sum()) and r.comparison.n_b_better == 0


def test_the_protocol_rejects_bad_input() -> None:
    protocol = AlphaRuleProtocol()
    assert protocol.grid == FINE_ALPHA_GRID and protocol.fixed_alpha == config.ALPHA
    assert set(config.ALPHA_GRID) <= set(protocol.grid)
    assert len(protocol.config_hash()) == 12
    with pytest.raises(ValueError, match="increasing"):
        AlphaRuleProtocol(grid=(0.0, 0.0))
