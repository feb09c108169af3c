"""The α rule knob on routing data: ``calibrated`` changes the bridge weight and nothing else
(a constructed world: the toy world, a hashing encoder)."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest
from helpers import hashing_context, refused

from regime_core.data.toyworld import ToyWorldConfig, generate
from regime_core.experiments import router_train as router
from regime_core.retrieval.alpha_rule import AlphaRuleProtocol, fit_scale, grid_hits
from regime_core.retrieval.spread import measure_spreads, median_ratio
from regime_core.router.bridge_weight import alpha_weights, rule_folds

RESAMPLES = 200


pytestmark = pytest.mark.usefixtures("one_blas_thread")


@pytest.fixture(scope="module")
def data() -> dict[str, Any]:
    toy = generate(ToyWorldConfig(n_questions=120, seed=0))
    other = [
        dataclasses.replace(ex, dataset="musique")
        for ex in generate(ToyWorldConfig(n_questions=80, seed=1, b_dominant_share=0.3))
    ]
    context = hashing_context({"toyworld": toy, "musique": other})
    cfg = router.RouterConfig(dataset="toyworld", bootstrap_resamples=RESAMPLES)
    loaded = router.load_routing_data(cfg, ("toyworld", "musique"), "hashing", "gold", context)
    return {"cfg": cfg, "context": context, "data": loaded}


def test_fixed_leaves_the_routing_data_as_built(data: dict[str, Any]) -> None:
    w = alpha_weights(data["data"], "fixed", alpha=0.25, train_dataset="toyworld")
    assert w.apply(data["data"]) == data["data"]
    assert all(np.all(x == 0.25) for x in w.weights.values()) and w.c is None


def test_calibrated_is_cross_fitted_on_the_training_set_and_label_free_elsewhere(
    data: dict[str, Any],
) -> None:
    loaded = data["data"]
    protocol = AlphaRuleProtocol(train_dataset="toyworld")
    w = alpha_weights(loaded, "calibrated", alpha=0.25, train_dataset="toyworld")
    train = loaded["toyworld"]
    ratios = measure_spreads(train.geometry).ratios()
    folds = rule_folds(train, protocol)
    hits = grid_hits(train.geometry, protocol.grid, protocol.k)
    # each fold's questions: c fitted on the other folds only, times the fold's own ratio
    for fold, c in zip(np.unique(folds), w.fold_c, strict=True):
        held = folds == fold
        assert c == pytest.approx(fit_scale(hits, protocol.grid, ratios, ~held), abs=1e-12)
        assert np.allclose(w.weights["toyworld"][held], c * median_ratio(ratios[held]))
    assert w.c == pytest.approx(fit_scale(hits, protocol.grid, ratios), abs=1e-12)
    # elsewhere: the deployment c times that dataset's own ratio, one weight for all
    r_other = median_ratio(measure_spreads(loaded["musique"].geometry).ratios())
    assert np.allclose(w.weights["musique"], w.c * r_other)
    assert w.alpha["musique"] == pytest.approx(w.c * r_other)
    assert w.alpha["toyworld"] == pytest.approx(w.c * median_ratio(ratios))
    # a scale given: nothing is fitted, the training set too gets c·R
    given = alpha_weights(loaded, "calibrated", alpha=0.25, train_dataset="toyworld", scale=2.0)
    assert np.allclose(given.weights["toyworld"], 2.0 * median_ratio(ratios))
    assert not given.cross_fitted and given.fold_c == ()


def test_the_knob_changes_exactly_the_bridge_weight(data: dict[str, Any]) -> None:
    loaded, cfg = data["data"], data["cfg"]
    w = router.recipe_weights(loaded, dataclasses.replace(cfg, alpha_rule="calibrated"),
                              train_dataset="toyworld")  # fmt: skip
    weighted = w.apply(loaded)
    for name, before in loaded.items():
        after = weighted[name]
        assert after.weights is not None and after.alpha_rule == "calibrated"
        assert after.settings.alpha == pytest.approx(w.alpha[name])
        assert dataclasses.replace(after.settings, alpha=before.settings.alpha) == before.settings
        same = [c for c in before.table.columns if c != "rank_union"]
        assert before.table[same].equals(after.table[same])
        assert np.array_equal(before.X, after.X) and after.geometry is before.geometry
        assert np.array_equal(
            after.table["rank_union"], before.geometry.target_ranks(w.weights[name])
        )
        assert np.array_equal(after.union_weights, w.weights[name])
    # the routers: trained on each, every record key α does not move is identical
    fixed = router.train_on_data(loaded["toyworld"], cfg)
    calibrated = router.train_on_data(
        weighted["toyworld"], dataclasses.replace(cfg, alpha_rule="calibrated")
    )
    a, b = fixed.to_numbers(), calibrated.to_numbers()
    for key in ("dataset", "n", "n_available", "n_tiny_pool", "n_parallel", "label_rule",
                "bridge_source"):  # fmt: skip
        assert a[key] == b[key], key
    assert a["alpha_rule"] == "fixed" and b["alpha_rule"] == "calibrated"
    assert a["alpha"] == 0.25 and b["alpha"] == pytest.approx(w.alpha["toyworld"])
    assert abs(b["alpha"] - 0.25) > 0.05  # the world is one where the rule moves α
    assert a["outcome"]["hit@5_q"] == b["outcome"]["hit@5_q"]
    assert a["outcome"]["n"] == b["outcome"]["n"]


def test_the_config_checks_the_alpha_rule() -> None:
    # the config is where an α rule is checked (with_weights and alpha_weights trust it)
    with refused(ValueError, names=("RouterConfig", "alpha_rule")):
        router.RouterConfig(alpha_rule="tuned")


def test_a_calibrated_router_file_records_its_rule_and_routes_at_its_alpha(
    data: dict[str, Any], tmp_path: Any
) -> None:
    from regime_core.router import load_router
    from regime_core.router.model import decision_dict, route_text

    cfg = dataclasses.replace(data["cfg"], alpha_rule="calibrated")
    result = router.train_router(cfg, data["context"])
    w = result.alpha_weights
    assert w is not None and w.c is not None
    record = result.alpha_rule_record()
    assert record == {"rule": "calibrated", "scale": w.c, "training_ratio": w.ratio["toyworld"]}
    assert result.router.alpha == record["scale"] * record["training_ratio"]
    path = router.save_trained_router(result, tmp_path / "calibrated.json")
    loaded = load_router(path)
    assert loaded.alpha_rule_ == record and loaded.alpha == result.router.alpha
    out = decision_dict(route_text("Who directed the film?", "It was directed by A.", model=path))
    assert out["alpha_rule"] == "calibrated" and out["alpha"] == result.router.alpha
    fixed = router.train_router(data["cfg"], data["context"])
    path = router.save_trained_router(fixed, tmp_path / "fixed.json")
    assert load_router(path).alpha_rule_ == {"rule": "fixed"}
    out = decision_dict(route_text("Who directed the film?", "It was directed by A.", model=path))
    assert out["alpha_rule"] == "fixed" and out["alpha"] == 0.25


def test_the_transfer_applies_a_calibrated_router_files_rule(
    data: dict[str, Any], tmp_path: Any
) -> None:
    from regime_core.experiments import zero_shot_transfer as transfer

    cfg = dataclasses.replace(data["cfg"], alpha_rule="calibrated")
    result = router.train_router(cfg, data["context"])
    path = router.save_trained_router(result, tmp_path / "calibrated.json")
    tcfg = transfer.TransferConfig(datasets=("musique",), bootstrap_resamples=RESAMPLES)
    applied = transfer.transfer_router(tcfg, data["context"], model=path)
    scale = result.alpha_rule_record()["scale"]
    r = median_ratio(measure_spreads(data["data"]["musique"].geometry).ratios())
    musique = applied.data["musique"]
    assert applied.alpha_rule == "calibrated"
    assert musique.settings.alpha == pytest.approx(scale * r)
    assert np.array_equal(musique.table["rank_union"], musique.geometry.target_ranks(scale * r))
    numbers = applied.to_numbers()
    assert numbers["alpha_rule"] == "calibrated"
    assert numbers["musique"]["alpha"] == pytest.approx(scale * r)
    # an α given by the config overrides the rule: the fixed weight, as before
    fixed = transfer.transfer_router(dataclasses.replace(tcfg, alpha=0.5), data["context"],
                                     model=path)  # fmt: skip
    assert fixed.alpha_rule == "fixed" and fixed.data["musique"].settings.alpha == 0.5
