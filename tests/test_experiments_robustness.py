"""The robustness multiverse: readings, filters, the summary rules, and a whole run on three
synthetic worlds posing as the three datasets (hashing encoder, no dataset text)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from helpers import hashing_context, refused

from regime_core import config
from regime_core.data.toyworld import ToyWorldConfig, generate
from regime_core.experiments import robustness, robustness_grid
from regime_core.experiments.common import ExperimentConfig
from regime_core.experiments.robustness import reading_table, run_robustness, summarise_claim
from regime_core.experiments.robustness_grid import (
    DEGENERATE,
    NOT_JUDGED,
    ROUTING,
    SELECTION,
    RobustnessConfig,
    claim_reading,
    primary_reading,
    readings,
)
from regime_core.paper import load_claims
from regime_core.runner.judge import VERDICTS
from regime_core.runner.ours import Comparison, Parts
from regime_core.runner.records import load_record, write_record
from regime_core.schema import Example


def test_readings_are_the_full_product_in_a_stable_order() -> None:
    got = readings({"a": ("x", "y"), "b": ("u", "v", "w")})
    assert len(got) == 6
    assert got[0] == {"a": "x", "b": "u"} and got[-1] == {"a": "y", "b": "w"}
    assert readings({"a": ("x", "y"), "b": ("u", "v", "w")}) == got


def _rows(verdicts: dict[tuple[str, str], str]) -> pd.DataFrame:
    rows = [
        {"a": a, "b": b, "verdict": v, "holds": v == "reproduced", "primary": (a, b) == ("x", "u")}
        for (a, b), v in verdicts.items()
    ]
    return pd.DataFrame(rows)


def test_summary_names_the_knob_that_flips_the_verdict() -> None:
    # a decides everything, b nothing
    rows = _rows(
        {
            ("x", "u"): "reproduced",
            ("x", "v"): "reproduced",
            ("y", "u"): "not reproduced",
            ("y", "v"): "not reproduced",
        }
    )
    s = summarise_claim(rows, ["a", "b"])
    assert s["readings"] == 4 and s["holding"] == 2 and s["share"] == 0.5
    assert s["flip_rates"] == {"a": 1.0, "b": 0.0}
    assert s["most_sensitive_knob"] == "a"
    assert s["primary_verdict"] == "reproduced"
    assert s["verdicts"] == {"reproduced": 2, "not reproduced": 2}


def test_a_claim_without_readings_summarises_to_none_judged() -> None:
    """Issue 33: on a dataset of one's own alone, the router claims have no readings (their
    training set is not in the run), so the table holds none of their knob columns."""
    rows = pd.DataFrame(columns=["claim", "verdict", "holds", "primary"])
    s = summarise_claim(rows, ["bridge_source", "pool"])
    assert (s["readings"], s["holding"], s["share"]) == (0, 0, 0.0)
    assert s["flip_rates"] == {"bridge_source": 0.0, "pool": 0.0}
    assert (s["most_sensitive_knob"], s["primary_verdict"]) == ("none", "none")


def test_summary_leaves_degenerate_and_unjudged_readings_out_of_the_share() -> None:
    rows = _rows(
        {
            ("x", "u"): "reproduced",
            ("x", "v"): DEGENERATE,
            ("y", "u"): NOT_JUDGED,
            ("y", "v"): "reproduced",
        }
    )
    s = summarise_claim(rows, ["a", "b"])
    assert s["readings"] == 2 and s["share"] == 1.0
    assert s["degenerate_readings"] == 1 and s["not_judged_readings"] == 1
    assert s["most_sensitive_knob"] == "none"  # no pair of judged readings differs in one knob


def _outcomes() -> pd.DataFrame:
    rows = []
    for i in range(8):
        for arm in ("q", "union", "knockout"):
            rows.append(
                {
                    "qid": f"q{i}",
                    "dataset": "d1" if i < 4 else "d2",
                    "arm": arm,
                    "tiny": i == 0,
                    "single_sentence": i == 1,
                    "p1@title": i % 2 == 0,
                    "p2@title": True,
                    "p1@title+linking": i % 2 == 0,
                    "p2@title+linking": i != 2,
                }
            )
    return pd.DataFrame(rows)


def test_each_knob_filters_exactly_what_it_says() -> None:
    table = _outcomes()
    base = {"predicate_names": "title", "tiny_pools": "keep", "knockout_single": "title"}
    everything = reading_table(table, {**base, "level": "pooled"})
    assert len(everything) == len(table)
    no_tiny = reading_table(table, {**base, "tiny_pools": "exclude", "level": "pooled"})
    assert set(table["qid"]) - set(no_tiny["qid"]) == {"q0"} and len(no_tiny) == len(table) - 3
    dropped = reading_table(table, {**base, "knockout_single": "exclude", "level": "pooled"})
    gone = table.merge(dropped, how="left", indicator=True).query("_merge == 'left_only'")
    assert gone[["qid", "arm"]].values.tolist() == [["q1", "knockout"]]
    linking = reading_table(table, {**base, "predicate_names": "title+linking", "level": "pooled"})
    assert not linking.loc[linking["qid"] == "q2", "p2"].any()
    assert everything.loc[everything["qid"] == "q2", "p2"].all()
    one = reading_table(table, {**base, "level": "d2"})
    assert set(one["dataset"]) == {"d2"}


def _world(name: str, seed: int, n: int) -> list[Example]:
    return [
        dataclasses.replace(ex, dataset=name)
        for ex in generate(ToyWorldConfig(n_questions=n, seed=seed, b_dominant_share=0.5))
    ]


@pytest.fixture(scope="module")
def worlds() -> dict[str, list[Example]]:
    return {
        "hotpotqa": _world("hotpotqa", 3, 60),
        "2wikimultihopqa": _world("2wikimultihopqa", 4, 120),
        "musique": _world("musique", 5, 60),
    }


#: The default tier's grid: one value (the primary) for each knob no test below varies, every
#: value of those they do (selector, α rule, item set, oracle dataset) and of the tiny-pool rule
#: (T1's primary reading keeps tiny pools, the others' exclude them). The full grid runs in the
#: slow tier, through the same tests.
REDUCED_GRID: dict[str, tuple[str, ...]] = {
    "pools": ("question",),
    "knockout_single_rules": ("title",),
    "predicate_name_rules": ("title",),
    "margins": ("std_margin",),
    "tie_rules": ("exclude",),
    "bridge_sources": ("gold",),
}


@pytest.fixture(scope="module", params=["reduced", pytest.param("full", marks=pytest.mark.slow)])
def result(
    request: pytest.FixtureRequest, worlds: dict[str, list[Example]]
) -> robustness.RobustnessResult:
    cfg = RobustnessConfig(
        encoders=("test/hash",),
        primary_encoder="test/hash",
        bootstrap_resamples=100,
        t2_resamples=50,
        t1_min_cell_n=10,
        t2_min_cell_n=10,
        **(REDUCED_GRID if request.param == "reduced" else {}),
    )
    return run_robustness(cfg, hashing_context(worlds))


#: The claims read from one routing, and the one read from two (the rule's B_rel and the gold).
ROUTER_CLAIMS = [c.id for c in load_claims() if claim_reading(c) == ROUTING]
(NEAR_ORACLE,) = [c.id for c in load_claims() if claim_reading(c) == SELECTION]


def test_a_run_judges_every_claim_under_every_reading(result: Any) -> None:
    table = result.table
    knobs = robustness_grid.claim_knobs(result.config)
    assert set(table["claim"]) == set(knobs)
    for claim_id, claim_knobs in knobs.items():
        rows = table[table["claim"] == claim_id]
        assert len(rows) == int(np.prod([len(v) for v in claim_knobs.values()])), claim_id
        assert rows["primary"].sum() == 1, claim_id
    assert set(table["verdict"]) <= {*VERDICTS, DEGENERATE, NOT_JUDGED}
    assert (table["holds"] == (table["verdict"] == "reproduced")).all()


def test_the_primary_reading_is_the_configured_defaults(result: Any) -> None:
    primary = robustness_grid.primary_reading(result.config)
    rows = result.table[result.table["primary"] & (result.table["claim"] == "t3_knockout")]
    row = rows.iloc[0]
    for knob in ("predicate_names", "knockout_single", "pool", "tiny_pools", "level"):
        assert row[knob] == primary[knob]


def test_the_record_round_trips(result: Any, tmp_path: Path) -> None:
    path = write_record(
        tmp_path, name="robustness", config=result.config, numbers=result.to_numbers()
    )
    numbers = load_record(path)["numbers"]
    summary = numbers["claims"]["router_vs_union_2wiki"]
    assert set(summary) >= {"readings", "holding", "share", "most_sensitive_knob"}
    assert 0.0 <= summary["share"] <= 1.0
    assert numbers["readings_total"] == len(result.table)


def test_config_refuses_a_repeated_value_and_a_primary_encoder_outside_the_grid() -> None:
    # a value outside a knob's values is refused as every declared kind is (test_inputs_configs)
    with refused(ValueError, names=["RobustnessConfig", "pools", "question"]):
        RobustnessConfig(pools=("question", "question"))
    with refused(ValueError, names=["RobustnessConfig", "primary_encoder", "tfidf"]):
        RobustnessConfig(encoders=("tfidf",))


def test_config_is_an_experiment_config_whose_own_values_are_the_primary_reading() -> None:
    cfg = RobustnessConfig(datasets=["musique"], encoders=["minilm"], sample_size=20)
    assert isinstance(cfg, ExperimentConfig) and cfg.datasets == ("musique",)
    per_pool = cfg.experiment_config("corpus")
    assert type(per_pool) is ExperimentConfig
    assert (per_pool.pool, per_pool.tiny_pools, per_pool.sample_size) == ("corpus", "keep", 20)
    primary = primary_reading(RobustnessConfig(pool="corpus", tiny_pools="keep"))
    assert (primary["pool"], primary["tiny_pools"]) == ("corpus", "keep")
    assert primary_reading()["tiny_pools"] == ExperimentConfig().tiny_pools


def test_router_readings_take_the_selector_and_the_oracle_gap_its_dataset() -> None:
    cfg = RobustnessConfig()
    knobs = robustness_grid.claim_knobs(cfg)
    assert ROUTER_CLAIMS == [
        "router_2wiki", "router_musique", "router_hotpotqa", "oracle_gap",
        "router_vs_union_2wiki", "router_vs_union_musique", "router_vs_union_hotpotqa",
    ]  # fmt: skip
    assert NEAR_ORACLE == "selector_near_oracle"
    for claim_id in ROUTER_CLAIMS:
        assert knobs[claim_id]["selector"] == config.SELECTORS, claim_id
    assert knobs["oracle_gap"]["oracle_dataset"] == config.ORACLE_DATASETS
    assert "oracle_dataset" not in knobs["router_2wiki"]
    # rule against gold by definition: every routing knob but the selector
    assert set(knobs[NEAR_ORACLE]) == {"tie_rule", "pool", "tiny_pools",
                                                  "bridge_source", "alpha_rule",
                                                  "item_set"}  # fmt: skip
    primary = primary_reading(cfg)
    assert (primary["selector"], primary["oracle_dataset"]) == ("rule", "2wikimultihopqa")
    assert robustness_grid.KNOB_MEANINGS["selector"].startswith("the sentence of the bridge")
    assert "oracle gap" in robustness_grid.KNOB_MEANINGS["oracle_dataset"]


def test_the_selector_readings_route_with_each_selector(result: Any) -> None:
    table = result.table
    gap = table[table["claim"] == "oracle_gap"]
    assert set(gap["oracle_dataset"]) == set(config.ORACLE_DATASETS)
    assert set(gap["selector"]) == set(config.SELECTORS)
    primary = gap[gap["primary"]].iloc[0]
    assert (primary["oracle_dataset"], primary["selector"]) == ("2wikimultihopqa", "rule")
    # each dataset's oracle gap is its own: the readings differ only in oracle_dataset there
    base = gap[(gap["selector"] == "rule") & (gap["tie_rule"] == "exclude")
               & (gap["pool"] == "question") & (gap["tiny_pools"] == "exclude")
               & (gap["bridge_source"] == "gold") & (gap["alpha_rule"] == "fixed")
               & (gap["item_set"] == "all")]  # fmt: skip
    assert len(base) == 3
    # the strict item set's readings route fewer questions (its items only)
    strict = gap[(gap["item_set"] == "strict") & gap["n"].notna()]
    assert len(strict) and (strict["n"] < base["n"].max()).all()
    n = dict(zip(base["oracle_dataset"], base["n"], strict=True))
    for claim_id, dataset in (("router_2wiki", "2wikimultihopqa"), ("router_musique", "musique"),
                              ("router_hotpotqa", "hotpotqa")):  # fmt: skip
        rows = table[(table["claim"] == claim_id) & table["primary"]]
        assert n[dataset] == rows["n"].iloc[0], dataset
    # the primary readings are the rule's, so they equal the runs without the knob
    near = table[table["claim"] == NEAR_ORACLE]
    assert len(near) == np.prod([len(v) for v in robustness_grid.claim_knobs(result.config)
                                 [NEAR_ORACLE].values()])  # fmt: skip
    judged = near[~near["verdict"].isin((DEGENERATE, NOT_JUDGED))]
    assert judged["estimate"].notna().all() and (judged["ci_lo"] <= judged["ci_hi"]).all()


def test_a_part_by_part_reading_shows_its_part_nearest_a_loss() -> None:
    a, b = Comparison(0.0, -0.01, 0.01), Comparison(-0.02, -0.04, 0.0, p=0.04, n=300)
    reading = robustness.Reading.of(Parts({"a": a, "b": b}))
    assert reading.shown == b.summary() == {
        "estimate": -0.02, "ci_lo": -0.04, "ci_hi": 0.0, "p": 0.04, "n": 300,
    }  # fmt: skip
    assert robustness.Reading.of(a).shown == a.summary()


def test_every_claim_is_in_the_multiverse_or_says_why_not() -> None:
    """A new claim must choose: a reading of the multiverse (knobs in claim_knobs, and its curve's
    title in the claims file), a reason in the claims file (multiverse.outside), or a rule that
    no reading changes (untestable, bound)."""
    from regime_core.runner.verdicts import robustness_absence

    knobs = robustness_grid.claim_knobs(robustness_grid.RobustnessConfig())
    outside = {c.id: c.multiverse["outside"] for c in load_claims() if "outside" in c.multiverse}
    assert not set(knobs) & set(outside)
    assert list(knobs)[:3] == ["t1_r2", "t2_split", "t3_knockout"]
    assert all(c.multiverse.get("title") for c in load_claims() if c.id in knobs)
    for claim in load_claims():
        by_rule = claim.rule in ("untestable", "bound")
        assert (claim.id in knobs) + (claim.id in outside) + by_rule == 1, claim.id
        if claim.id not in knobs:
            reason = robustness_absence(claim)
            assert reason == ("no reading changes it" if by_rule else outside[claim.id])


def test_the_alpha_rule_readings_retrain_the_router_at_the_rules_weight(result: Any) -> None:
    cfg = RobustnessConfig()
    for claim_id in (*ROUTER_CLAIMS, NEAR_ORACLE):
        assert robustness_grid.claim_knobs(cfg)[claim_id]["alpha_rule"] == config.ALPHA_RULES
    assert primary_reading(cfg)["alpha_rule"] == "fixed"
    assert robustness_grid.KNOB_MEANINGS["alpha_rule"].startswith("how the bridge weight")
    table = result.table
    rows = table[table["claim"] == "router_musique"]
    assert set(rows["alpha_rule"]) == set(config.ALPHA_RULES)
    # the primary reading is the fixed rule's; the calibrated one routes at another weight
    key = ["tie_rule", "pool", "tiny_pools", "bridge_source", "selector"]
    fixed = rows[rows["alpha_rule"] == "fixed"].set_index(key)["estimate"]
    calibrated = rows[rows["alpha_rule"] == "calibrated"].set_index(key)["estimate"]
    assert rows[rows["primary"]]["alpha_rule"].tolist() == ["fixed"]
    assert not fixed.sort_index().equals(calibrated.sort_index())


def test_the_item_set_is_a_knob_of_the_router_claims() -> None:
    from regime_core.experiments.robustness_grid import (
        KNOB_MEANINGS,
        RobustnessConfig,
        claim_knobs,
        primary_reading,
    )

    cfg = RobustnessConfig()
    knobs = claim_knobs(cfg)
    for claim_id in (*ROUTER_CLAIMS, NEAR_ORACLE):
        assert knobs[claim_id]["item_set"] == ("all", "strict"), claim_id
    assert primary_reading(cfg)["item_set"] == "all"  # the default: every claim page's
    assert "exactly once" in KNOB_MEANINGS["item_set"]


def test_a_reading_reads_the_alpha_rule_inputs_of_an_earlier_one(
    worlds: dict[str, list[Example]],
) -> None:
    """The calibrated rule's ratios and grid hits of a smaller sample come from the reading that
    held its questions, equal to their own; a different ``B_rel`` is computed afresh."""
    from regime_core.experiments.robustness_routing import shared_alpha_inputs
    from regime_core.experiments.router_train import RouterConfig, load_routing_data

    context = hashing_context(worlds)
    datasets = ["2wikimultihopqa", "musique"]
    whole = RouterConfig(encoder="test/hash")
    part = dataclasses.replace(whole, sample_size=40)
    data = {
        cfg: load_routing_data(cfg, datasets, "test/hash", "gold", context) for cfg in (whole, part)
    }
    assert data[part]["musique"].n < data[whole]["musique"].n
    own_ratios, own_hits = shared_alpha_inputs({}, data[part], ("r",), part)
    memo: dict = {}
    shared_alpha_inputs(memo, data[whole], ("r",), whole)
    ratios, hits = shared_alpha_inputs(memo, data[part], ("r",), part)
    assert hits is not None and np.array_equal(hits, own_hits)
    for dataset in datasets:
        np.testing.assert_allclose(ratios[dataset], own_ratios[dataset], rtol=1e-12)
    # what the memo holds is what is read; a question with another B_rel is not read from it
    qid, b_rel = data[part]["musique"].table[["qid", "b_rel_index"]].iloc[0]
    key = ("r", "musique", qid, b_rel)
    memo[key] = (memo[key][0] + 1.0, memo[key][1])
    read, _ = shared_alpha_inputs(memo, data[part], ("r",), part)
    np.testing.assert_allclose(read["musique"][0], own_ratios["musique"][0] + 1.0, rtol=1e-12)
    memo[("r", "musique", qid, b_rel + 1)] = memo.pop(key)
    read, _ = shared_alpha_inputs(memo, data[part], ("r",), part)
    np.testing.assert_allclose(read["musique"], own_ratios["musique"], rtol=1e-12)
