"""The alpha_transfer run on a constructed world (three toy worlds posing as the datasets, a
hashing encoder): its record, and the regret and grid-edge flags on constructed hits."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest
from helpers import hashing_context, refused

from regime_core.data.toyworld import ToyWorldConfig, generate
from regime_core.experiments import alpha_transfer as at
from regime_core.retrieval.alpha_rule import RULE_VARIANTS
from regime_core.runner.records import Record

RESAMPLES = 200
DATASETS = ("2wikimultihopqa", "musique", "hotpotqa")


@pytest.fixture(scope="module", autouse=True)
def _one_blas_thread() -> Any:
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        yield


@pytest.fixture(scope="module")
def result() -> at.AlphaTransferResult:
    worlds = {
        d: [
            dataclasses.replace(ex, dataset=d)
            for ex in generate(ToyWorldConfig(n_questions=80, seed=i))
        ]
        for i, d in enumerate(DATASETS)
    }
    cfg = at.AlphaTransferConfig(bootstrap_resamples=RESAMPLES)
    return at.run_alpha_transfer(cfg, hashing_context(worlds))


def test_the_record_holds_every_pair_and_every_rule(result: at.AlphaTransferResult) -> None:
    numbers = result.to_numbers()
    assert set(numbers["pairs"]) == {"minilm", "tfidf"}
    for encoder, by in numbers["pairs"].items():
        assert set(by) == set(DATASETS)
        for dataset, pair in by.items():
            assert pair["fitting_pair"] == (encoder == "minilm" and dataset == "2wikimultihopqa")
            assert set(pair["rules"]) == set(RULE_VARIANTS)
            assert set(pair["regret"]) == set(RULE_VARIANTS)
            for by_best in pair["regret"].values():
                assert set(by_best) == {"cross_fitted", "in_sample"}
                for c in by_best.values():
                    assert {"n", "diff", "ci_lo", "ci_hi", "p_value", "n_a_better",
                            "n_b_better"} <= set(c)  # fmt: skip
            assert set(pair["routing"]) == {"fixed", "calibrated"}
            assert pair["rules"]["fixed"]["alpha"] == 0.25
            assert len(pair["curve"]) == 41 and pair["spreads"]["all"]["all"]["n"] == 80
            # regret(fixed) − regret(calibrated) is calibrated − fixed, per question
            r = pair["regret"]
            diff = r["fixed"]["in_sample"]["diff"] - r["calibrated"]["in_sample"]["diff"]
            assert pair["calibrated_vs_fixed"]["diff"] == pytest.approx(diff, abs=1e-12)
    fit = numbers["fit"]
    assert fit["dataset"] == "2wikimultihopqa" and fit["encoder"] == "minilm"
    # the fixed router is trained at 0.25, the calibrated one at the rule's α of each dataset
    for encoder, by in numbers["pairs"].items():
        for dataset, pair in by.items():
            assert pair["routing"]["fixed"]["alpha"] == 0.25
            expected = (
                fit["deployed_alpha"]
                if dataset == "2wikimultihopqa"
                else pair["rules"]["calibrated"]["alpha"]
            )
            if encoder == "minilm":
                assert pair["routing"]["calibrated"]["alpha"] == pytest.approx(expected)
            else:  # nothing fitted on another encoder: c·R on every dataset
                assert pair["routing"]["calibrated"]["alpha"] == pytest.approx(
                    pair["rules"]["calibrated"]["alpha"]
                )


def test_the_fitting_pair_is_cross_fitted(result: at.AlphaTransferResult) -> None:
    pair = result.pairs["minilm"]["2wikimultihopqa"]
    # tuned_fixed there is the cross-fitted best itself: no regret by construction
    c = pair.regrets["tuned_fixed"]["cross_fitted"]
    assert c.diff == 0 and c.n_a_better == 0 and c.n_b_better == 0
    fitted = result.fit.fitted["dataset"]
    assert np.array_equal(pair.rules["calibrated"][1], fitted.hits)
    assert np.array_equal(
        result.weights["minilm"]["calibrated"].weights["2wikimultihopqa"], fitted.weights
    )


def _pair_with_hits(result: at.AlphaTransferResult, hits: np.ndarray, **fit: Any) -> Any:
    m = result.pairs["tfidf"]["musique"].measured
    constructed = dataclasses.replace(m, hits=hits)
    return at.measure_pair(
        constructed,
        dataclasses.replace(result.fit, **fit),
        fitting=False,
        protocol=result.config.protocol,
        routing={},
        routing_alpha={},
        cfg=result.config,
    )


def test_regret_is_zero_when_the_rules_alpha_is_the_grids_best(
    result: at.AlphaTransferResult,
) -> None:
    m = result.pairs["tfidf"]["musique"].measured
    hits = np.zeros_like(m.hits)
    at_fixed = int(np.flatnonzero(m.grid == 0.25)[0])
    hits[at_fixed, : m.data.n // 2] = True  # 0.25 alone hits anything
    pair = _pair_with_hits(result, hits)
    for choice in ("in_sample", "cross_fitted"):
        c = pair.regrets["fixed"][choice]
        assert c.diff == 0 and c.n_a_better == 0 and c.n_b_better == 0
    assert float(pair.best["in_sample"][0][0]) == 0.25
    # a rule elsewhere on the grid misses all those questions
    tuned = pair.regrets["tuned_fixed"]["in_sample"]
    assert tuned.diff == pytest.approx(0.5) and tuned.n_a_better == m.data.n // 2


def test_a_best_and_a_rule_on_the_grid_edge_are_flagged(result: at.AlphaTransferResult) -> None:
    m = result.pairs["tfidf"]["musique"].measured
    hits = np.zeros_like(m.hits)
    hits[-1] = True  # only the largest α, 2.0, hits
    pair = _pair_with_hits(result, hits, tuned_alpha=float(m.grid[-1]))
    numbers = pair.to_numbers()
    assert numbers["best"]["in_sample"] == 2.0 and numbers["best"]["in_sample_at_grid_edge"]
    assert numbers["rules"]["tuned_fixed"]["at_grid_edge"]
    assert numbers["rules"]["tuned_fixed"]["hit"] == 1.0
    assert not numbers["rules"]["fixed"]["at_grid_edge"]
    assert numbers["regret"]["tuned_fixed"]["in_sample"]["diff"] == 0
    assert numbers["regret"]["fixed"]["in_sample"]["diff"] == 1.0


def test_config_validation() -> None:
    with pytest.raises(ValueError, match="measures every rule"):
        at.AlphaTransferConfig(alpha_rule="calibrated")
    with refused(ValueError, names=["AlphaTransferConfig", "encoders"]):
        at.AlphaTransferConfig(encoders=("minilm", "minilm"))
    assert at.AlphaTransferConfig().protocol.train_encoder == "minilm"


def test_the_other_item_set_is_measured_on_every_pair_but_the_fitting_one(
    result: at.AlphaTransferResult,
) -> None:
    from regime_core.data.item_sets import filter_item_set
    from regime_core.paper import load_claims
    from regime_core.runner.diagnosis import node_keys

    numbers = result.to_numbers()
    strict = numbers["item_sets"]["strict"]
    assert set(strict["pairs"]["minilm"]) == {d for d in DATASETS if d != "2wikimultihopqa"}
    assert set(strict["pairs"]["tfidf"]) == set(DATASETS)  # a transfer pair like any other
    for encoder, by in strict["pairs"].items():
        for dataset, pair in by.items():
            n_strict = strict["samples"][encoder][dataset]["n"]
            assert pair["n"] == n_strict < numbers["pairs"][encoder][dataset]["n"]
            assert pair["routing"] == {} and not pair["fitting_pair"]
            assert pair["calibrated_vs_fixed"]["n"] == n_strict
    # the same c, on fewer questions; the counts are those of the filter
    hotpot = [ex for ex in result.pairs["minilm"]["hotpotqa"].measured.data.examples]
    expected = filter_item_set(hotpot, "strict")
    removed = strict["samples"]["minilm"]["hotpotqa"]["item_set_removed"]
    assert sum(removed.values()) == expected.n_removed
    # the diagnosis of calibrated_alpha reads a node the record holds
    claim = next(c for c in load_claims() if c.id == "calibrated_alpha")
    nodes = [e["node"] for e in claim.diagnosis if "item_sets" in str(e.get("node"))]
    assert nodes and all(node_keys(Record({"numbers": numbers}), n) for n in nodes)


def test_the_other_item_set_is_cut_from_the_measurements_of_its_questions(
    result: at.AlphaTransferResult,
) -> None:
    """A strict pair's spreads, ratios and grid hits, cut from the whole item set, equal its own
    measurement; a whole set that reads another ``B_rel`` is not cut from."""
    protocol = result.config.protocol
    cut = result.item_set_pairs["strict"]["tfidf"]["hotpotqa"].measured
    whole = result.pairs["tfidf"]["hotpotqa"].measured
    own = at.measure(cut.data, protocol)
    assert cut.data.n < whole.data.n
    assert np.array_equal(cut.hits, own.hits) and np.array_equal(cut.folds, own.folds)
    np.testing.assert_allclose(cut.ratios, own.ratios, rtol=1e-12)
    np.testing.assert_allclose(cut.spreads.sigma_b, own.spreads.sigma_b, rtol=1e-12)
    negated = at.measure(cut.data, protocol, dataclasses.replace(whole, hits=~whole.hits))
    assert np.array_equal(negated.hits, ~own.hits)  # read from the whole set, not recomputed
    table = whole.data.table.assign(b_rel_index=whole.data.table["b_rel_index"] + 1)
    other = dataclasses.replace(whole, data=dataclasses.replace(whole.data, table=table))
    fresh = at.measure(cut.data, protocol, dataclasses.replace(other, hits=~whole.hits))
    assert np.array_equal(fresh.hits, own.hits)
