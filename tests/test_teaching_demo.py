"""The teaching kit: the demo's direction of effect, the knob sweeps, toyworld through the data
layer. Unit tests use TF-IDF on small toy worlds (seconds); one MiniLM run is marked slow."""

from __future__ import annotations

import json
import math
from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest
from helpers import refused

from regime_core.cli import main
from regime_core.data import corpus_passages, dataset_stats, load_examples
from regime_core.data.toyworld import ToyWorldConfig, generate, true_regime
from regime_core.encoders import EmbeddingStore
from regime_core.experiments.context import Context, default_encoder_factory
from regime_core.teaching.demo import ROUTER_POLICY, DemoConfig, DemoResult, hit_summary, run_demo
from regime_core.teaching.lesson import regime_arm_summary, table_numbers
from regime_core.teaching.sweeps import knockout_table, sweep_alpha, sweep_distractor_similarity

SMALL = 40  # questions in the unit-test worlds (20 per regime)
TFIDF = DemoConfig(encoder="tfidf")  # the demo's settings, with TF-IDF (seconds)


@pytest.fixture(scope="module")
def store_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("teaching-work"))


@pytest.fixture(scope="module")
def demo(store_dir: str) -> DemoResult:
    return run_demo(DemoConfig(encoder="tfidf"), context=Context(work=store_dir))


def _cell(table: pd.DataFrame, regime: str, policy: str, column: str, key: str = "policy") -> float:
    rows = table[(table["regime"] == regime) & (table[key] == policy)]
    assert len(rows) == 1, rows
    return float(rows[column].iloc[0])


# --- kernels -----------------------------------------------------------------------------------


def test_hit_summary_counts_ranks_within_cutoffs() -> None:
    ranks = pd.DataFrame(
        {"regime": ["B", "B", "B", "Q"], "arm": ["q", "q", "q", "q"], "rank": [1, 3, 6, 5]}
    )
    out = hit_summary(ranks, ["regime", "arm"]).set_index("regime")
    assert out.loc["B", "n"] == 3
    assert out.loc["B", "hit@1"] == pytest.approx(1 / 3)
    assert out.loc["B", "hit@5"] == pytest.approx(2 / 3)
    assert out.loc["Q", "hit@5"] == 1.0 and out.loc["Q", "hit@1"] == 0.0


def test_table_numbers_nests_and_escapes_dots() -> None:
    table = pd.DataFrame(
        {"alpha": [0.25], "regime": ["B-dominant"], "arm": ["union"], "n": [3],
         "hit@1": [0.5], "hit@5": [1.0]}
    )  # fmt: skip
    numbers = table_numbers(table, ["alpha", "regime", "arm"])
    assert numbers == {"0p25": {"B-dominant": {"union": {"n": 3, "hit@1": 0.5, "hit@5": 1.0}}}}


# --- the demo ------------------------------------------------------------------------------------


def test_demo_union_helps_b_dominant_only(demo: DemoResult) -> None:
    table = demo.table
    assert set(table["regime"]) == {"B-dominant", "Q-dominant"}
    assert {"q", "union", "knockout", "bridge"} <= set(table["policy"])
    half = demo.config.n_questions // 2
    assert set(table["n"]) == {half}
    b_gain = _cell(table, "B-dominant", "union", "hit@1") - _cell(table, "B-dominant", "q", "hit@1")
    q_gain = _cell(table, "Q-dominant", "union", "hit@1") - _cell(table, "Q-dominant", "q", "hit@1")
    assert b_gain > 0.2
    assert q_gain <= 0.05
    # knocking the relation sentence out of the bridge loses union's gain
    b_knock = _cell(table, "B-dominant", "knockout", "hit@1")
    assert b_knock < _cell(table, "B-dominant", "union", "hit@1") - 0.2
    assert demo.effect["B-dominant"]["hit@1"] == pytest.approx(b_gain)


def test_demo_is_deterministic_and_reuses_the_store(demo: DemoResult, store_dir: str) -> None:
    again = run_demo(
        DemoConfig(encoder="tfidf"), context=Context(work=store_dir), with_router=False
    )
    assert again.n_encoded == 0 and again.n_cached > 0
    arms = demo.table[demo.table["policy"] != ROUTER_POLICY].reset_index(drop=True)
    pd.testing.assert_frame_equal(arms, again.table)


def test_demo_output_is_json_and_text(demo: DemoResult) -> None:
    payload = json.loads(json.dumps(demo.to_dict()))
    assert payload["config"]["encoder"] == "tfidf"
    assert payload["router"] == demo.router_source and payload["router"]
    assert {row["policy"] for row in payload["table"]} >= {"q", "union"}
    text = demo.to_text()
    assert "B-dominant" in text and "union - q" in text and "router:" in text


def test_demo_router_cross_fitted_on_the_toy_world(store_dir: str) -> None:
    result = run_demo(DemoConfig(encoder="tfidf", router="toy"), context=Context(work=store_dir))
    assert result.router_source.startswith("cross-fitted on this toy world")
    routed = result.table[result.table["policy"] == ROUTER_POLICY]
    assert set(routed["regime"]) == {"B-dominant", "Q-dominant"}
    # routed hits lie between the worse and the better of q and union's selected-B_rel ranks
    assert set(result.share_union) == {"B-dominant", "Q-dominant"}
    assert all(0.0 <= v <= 1.0 for v in result.share_union.values())


def test_demo_config_validation() -> None:
    with refused(ValueError, names=("arms", "q", "union")):
        DemoConfig(arms=("q", "bridge"))


# --- knob sweeps ---------------------------------------------------------------------------------


def test_alpha_sweep_starts_at_q_and_moves_only_union(store_dir: str) -> None:
    examples = generate(ToyWorldConfig(n_questions=SMALL))
    table = sweep_alpha((0.0, 0.5, 1.0), examples, TFIDF, context=Context(work=store_dir))
    assert list(table.columns) == ["alpha", "regime", "arm", "n", "hit@1", "hit@5"]
    assert len(table) == 3 * 2 * 2
    at_zero = table[table["alpha"] == 0.0]
    for regime in ("B-dominant", "Q-dominant"):
        assert _cell(at_zero, regime, "union", "hit@1", "arm") == _cell(
            at_zero, regime, "q", "hit@1", "arm"
        )
    q_rows = table[table["arm"] == "q"]
    assert q_rows.groupby("regime")["hit@1"].nunique().eq(1).all()  # q ignores alpha
    b_union = table[(table["regime"] == "B-dominant") & (table["arm"] == "union")]
    assert (
        b_union.set_index("alpha").loc[0.5, "hit@1"] > b_union.set_index("alpha").loc[0.0, "hit@1"]
    )


def test_knockout_removes_union_gain_for_b_dominant(store_dir: str) -> None:
    examples = generate(ToyWorldConfig(n_questions=SMALL))
    table = knockout_table(examples, TFIDF, context=Context(work=store_dir))
    assert set(table["relation_sentence"]) == {"kept", "removed"}
    kept = table[table["relation_sentence"] == "kept"]
    removed = table[table["relation_sentence"] == "removed"]
    for regime in ("B-dominant", "Q-dominant"):
        assert _cell(kept, regime, "q", "hit@1", "arm") == _cell(
            removed, regime, "q", "hit@1", "arm"
        )
    assert _cell(kept, "B-dominant", "union", "hit@1", "arm") > _cell(
        removed, "B-dominant", "union", "hit@1", "arm"
    )


def test_similar_distractors_hurt_q_on_b_dominant(store_dir: str) -> None:
    small = DemoConfig(n_questions=SMALL, encoder="tfidf")
    table = sweep_distractor_similarity((0.0, 1.0), small, context=Context(work=store_dir))
    assert len(table) == 2 * 2 * 2
    easy = _cell(table[table["distractor_similarity"] == 0.0], "B-dominant", "q", "hit@1", "arm")
    hard = _cell(table[table["distractor_similarity"] == 1.0], "B-dominant", "q", "hit@1", "arm")
    assert easy > hard
    union_hard = _cell(
        table[table["distractor_similarity"] == 1.0], "B-dominant", "union", "hit@1", "arm"
    )
    assert union_hard > hard


# --- every function takes its seams through one Context ---------------------------------------

#: Each public function that reads vectors and encoders, on a small world with TF-IDF, returning
#: its table.
HOOKED: dict[str, Callable[..., pd.DataFrame]] = {
    "run_demo": lambda **kw: (
        run_demo(DemoConfig(n_questions=SMALL, encoder="tfidf"), with_router=False, **kw).table
    ),
    "sweep_distractor_similarity": lambda **kw: sweep_distractor_similarity(
        (0.0, 1.0), DemoConfig(n_questions=SMALL, encoder="tfidf"), **kw
    ),
    "knockout_table": lambda **kw: knockout_table(
        generate(ToyWorldConfig(n_questions=SMALL)), TFIDF, **kw
    ),
    "sweep_alpha": lambda **kw: sweep_alpha(
        (0.0, 0.5), generate(ToyWorldConfig(n_questions=SMALL)), TFIDF, **kw
    ),
    "regime_arm_summary": lambda **kw: regime_arm_summary(
        generate(ToyWorldConfig(n_questions=SMALL)), TFIDF, **kw
    ),
}


@pytest.mark.parametrize("name", list(HOOKED))
def test_the_context_store_and_factory_are_used(name: str, store_dir: str) -> None:
    names: list[str] = []

    def factory(encoder: str, texts):
        names.append(encoder)
        return default_encoder_factory(encoder, texts)

    store = EmbeddingStore(store_dir + "/embeddings")
    hooked = HOOKED[name](context=Context(store=store, encoder_factory=factory))
    assert names and set(names) == {"tfidf"}
    table = HOOKED[name](context=Context(work=store_dir))
    pd.testing.assert_frame_equal(hooked, table)


@pytest.mark.parametrize("name", list(HOOKED))
def test_the_removed_keywords_are_type_errors(name: str, store_dir: str) -> None:
    with refused(TypeError, names=("'work'",)):
        HOOKED[name](work=store_dir)


# --- toyworld through the data layer ----------------------------------------------------------


def test_toyworld_through_load_examples_and_stats(tmp_path) -> None:
    dev = load_examples("toyworld", split="dev", work=tmp_path)  # no prepared data needed
    train = load_examples("toyworld", split="train", work=tmp_path)
    both = load_examples("toyworld", work=tmp_path)
    assert [ex.id for ex in both] == [ex.id for ex in dev] + [ex.id for ex in train]
    assert {ex.split for ex in dev} == {"dev"} and {ex.split for ex in train} == {"train"}
    stats = dataset_stats({}, "toyworld")
    assert stats["questions"] == {"dev": len(dev), "train": len(train)}
    assert stats["two_hop"] == stats["questions"]
    assert stats["parallel"] == sum(ex.parallel for ex in both)
    assert sum(stats["by_type"].values()) == len(both)
    assert stats["excluded"] == {}
    assert stats["corpus_passages"] == len(corpus_passages(both))
    regimes = {true_regime(ex) for ex in dev}
    assert regimes == {"B-dominant", "Q-dominant"}


def test_data_stats_cli_accepts_toyworld(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("REGIME_WORK_DIR", str(tmp_path))  # no manifest here
    assert main(["data", "stats", "toyworld", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["dataset"] == "toyworld"
    assert stats["questions"]["dev"] > 0


@pytest.mark.slow
def test_demo_with_minilm_shows_the_regimes(tmp_path) -> None:
    result = run_demo(DemoConfig(), context=Context(work=tmp_path))
    table = result.table
    for column in ("hit@1", "hit@5"):
        b_gain = _cell(table, "B-dominant", "union", column) - _cell(
            table, "B-dominant", "q", column
        )
        q_gain = _cell(table, "Q-dominant", "union", column) - _cell(
            table, "Q-dominant", "q", column
        )
        assert b_gain > 0, column
        assert q_gain <= 0.05, column
    assert not math.isnan(result.seconds) and np.isfinite(result.seconds)
