"""The selectors measured: the agreement and paired-comparison kernels on hand-made arrays; the
knob's choices, the routing data they make and the three levels on the toy world with a hashing
encoder (no download, no dataset text)."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest
from helpers import HashingEncoder, RecordingStore, hashing_context, refused

from regime_core import config
from regime_core.data.regimes import gold_b_rel
from regime_core.data.toyworld import ToyWorldConfig, generate
from regime_core.experiments import router_train as router
from regime_core.retrieval.geometry import build_geometry
from regime_core.router.evaluation import COMPARISON_FIELDS, Bootstrap, evaluate_routing
from regime_core.router.features import extract_features
from regime_core.router.learned_selector import (
    SELECTOR_VARIANTS,
    LearnedSelector,
    cross_fit_select,
    selector_folds,
)
from regime_core.router.selector_choices import choose, cross_fitted, reselected
from regime_core.router.selector_evaluation import (
    MEASURED,
    ROUTED_COMPARISONS,
    agreement_comparisons,
    check_selector,
    routed_comparisons,
    selector_agreement,
    union_comparisons,
)
from regime_core.router.training import apply_router, fit_routing, with_b_rel
from regime_core.schema import Example

BOOT = Bootstrap(resamples=200)
RESAMPLES = 200
#: What every comparison of the record's ``selection`` node carries (the claims' power reads the
#: last two).
COMPARISON_KEYS = {"n", *COMPARISON_FIELDS}


pytestmark = pytest.mark.usefixtures("one_blas_thread")


# --- kernels -----------------------------------------------------------------------------------


def test_agreement_per_selector_and_source_with_chance() -> None:
    table = selector_agreement(
        "d",
        {"rule": [0, 1, 2, 0, 1], "first": [0, 0, 0, 0, 0]},
        gold=[0, 1, 0, -1, 1],
        sizes=[2, 4, 3, 5, 2],
        sources=["x", "x", "y", "x", "y"],
    )
    rows = {(r.selector, r.relation_source): (r.n, r.agreement, r.chance)
            for r in table.itertuples()}  # fmt: skip
    # item 3 has no gold sentence and is left out everywhere
    assert rows[("rule", "all")] == (4, 0.75, pytest.approx((1 / 2 + 1 / 4 + 1 / 3 + 1 / 2) / 4))
    assert rows[("rule", "x")] == (2, 1.0, pytest.approx((1 / 2 + 1 / 4) / 2))
    assert rows[("rule", "y")] == (2, 0.5, pytest.approx((1 / 3 + 1 / 2) / 2))
    assert rows[("first", "all")][:2] == (4, 0.5)
    assert rows[("first", "y")][:2] == (2, 0.5)
    assert table["relation_source"].tolist()[:3] == ["all", "x", "y"]


def test_paired_comparisons_are_mcnemar_against_gold_and_against_the_rule() -> None:
    gold = np.array([1, 1, 0, 1, 0, 1, 1, 1], dtype=bool)
    hits = {"rule": gold.copy(), "first": np.array([0, 1, 0, 0, 0, 1, 0, 1], dtype=bool)}
    out = union_comparisons(hits, gold, bootstrap=BOOT)
    assert (out["rule"].diff, out["rule"].n_discordant, out["rule"].p_value) == (0.0, 0, 1.0)
    first = out["first"]
    assert (first.label_a, first.label_b) == ("union_first", "union_gold")
    assert first.test == "mcnemar_chi2"
    assert (first.n_a_better, first.n_b_better, first.diff) == (0, 3, -3 / 8)
    vs_rule = agreement_comparisons({"rule": gold, "first": hits["first"]}, "rule", bootstrap=BOOT)
    assert list(vs_rule) == ["first"] and vs_rule["first"].diff == -3 / 8


def _outcome(q: list[int], union: list[int], routed_union: list[int]) -> Any:
    return evaluate_routing(
        np.array(q, dtype=bool),
        np.array(union, dtype=bool),
        np.array(routed_union, dtype=bool),
        np.full(len(q), 0.5),
        dataset="d",
        bootstrap=BOOT,
    )


def test_routed_comparisons_pair_each_selector_with_the_reference() -> None:
    q = [1, 0, 0, 1, 0, 1]
    gold = _outcome(q, [1, 1, 1, 0, 1, 1], [1, 1, 1, 0, 1, 0])  # routed 1 1 1 1 1 1
    rule = _outcome(q, [1, 0, 1, 0, 0, 1], [1, 1, 1, 0, 0, 0])  # routed 1 0 1 1 0 1
    out = routed_comparisons({"rule": rule, "gold": gold}, bootstrap=BOOT)
    assert list(out) == ["rule"] and set(out["rule"]) == set(ROUTED_COMPARISONS)
    vs_q = out["rule"]["routed_vs_q"]
    # q cancels: routed hit@k with the rule's B_rel against routed hit@k with the gold one
    assert vs_q.diff == pytest.approx(rule.comparison("routed_vs_q").diff
                                      - gold.comparison("routed_vs_q").diff)  # fmt: skip
    assert (vs_q.n, vs_q.n_a_better, vs_q.n_b_better, vs_q.test) == (6, 0, 2, "mcnemar_chi2")
    gap = out["rule"]["oracle_vs_routed"]  # the oracle gap's change, binary per question
    assert gap.diff == pytest.approx(rule.comparison("oracle_vs_routed").diff
                                     - gold.comparison("oracle_vs_routed").diff)  # fmt: skip
    assert gap.test == "mcnemar_chi2"
    vs_union = out["rule"]["routed_vs_union"]  # -1, 0 or 1 per question: the sign test
    assert vs_union.diff == pytest.approx(rule.comparison("routed_vs_union").diff
                                          - gold.comparison("routed_vs_union").diff)  # fmt: skip
    assert vs_union.test == "sign" and vs_union.ci_method == "bootstrap_percentile"
    assert set(routed_comparisons({"rule": rule, "gold": gold}, reference="rule")) == {"gold"}


# --- the toy world -----------------------------------------------------------------------------


def _worlds() -> dict[str, list[Example]]:
    other = generate(ToyWorldConfig(n_questions=60, seed=1, relation_sentence_position="last"))
    return {
        "toyworld": generate(ToyWorldConfig(n_questions=100, seed=0)),
        "musique": [dataclasses.replace(ex, dataset="musique") for ex in other],
    }


@pytest.fixture(scope="module")
def world() -> dict[str, Any]:
    examples = _worlds()
    context = hashing_context(examples)
    cfg = router.RouterConfig(dataset="toyworld", bootstrap_resamples=RESAMPLES)
    data = router.load_routing_data(cfg, tuple(examples), cfg.encoder, "gold", context)
    inputs = router.selector_inputs(data, context)
    return {"cfg": cfg, "context": context, "data": data, "inputs": inputs}


def _knob(world: dict[str, Any], selector: str) -> dict[str, Any]:
    cfg = dataclasses.replace(world["cfg"], selector=selector)
    return router.with_selector(
        world["data"], cfg, world["context"], train_dataset="toyworld", inputs=world["inputs"]
    )


def test_the_knob_changes_exactly_which_sentence_is_b_rel(world: dict[str, Any]) -> None:
    data = world["data"]
    assert _knob(world, "rule") == data  # the rule's data as they are
    for dataset, d in data.items():
        golds = [gold_b_rel(ex).index for ex in d.examples]
        assert None not in golds  # the toy world knows every relation sentence
        gold = _knob(world, "gold")[dataset]
        assert gold.table["b_rel_index"].tolist() == golds  # gold: the gold sentence
        assert gold.table["b_rel_index"].tolist() == d.table["gold_relation_sentence"].tolist()
        first = _knob(world, "first")[dataset]
        assert set(first.table["b_rel_index"]) == {0}  # first: sentence 0
        for chosen in (gold, first):
            assert chosen.table["rank_q"].tolist() == d.table["rank_q"].tolist()  # q untouched
            assert chosen.table["qid"].tolist() == d.table["qid"].tolist()
            assert chosen.folds is None  # nothing was fitted on these questions
        assert (gold.selector, first.selector, d.selector) == ("gold", "first", "rule")
    learned = _knob(world, "learned")
    assert learned["toyworld"].folds is not None and learned["musique"].folds is None
    assert (learned["toyworld"].selector, learned["musique"].selector) == ("learned", "learned")


def test_a_new_b_rel_is_the_routing_data_built_with_it(world: dict[str, Any]) -> None:
    d = world["data"]["musique"]
    inputs = world["inputs"]["musique"]
    chosen = np.asarray([len(ex.bridge.sentences) - 1 for ex in d.examples])
    moved = with_b_rel(d, chosen, inputs.vectors_at(chosen), selector="first")
    texts = [ex.bridge.sentences[c] for ex, c in zip(d.examples, chosen, strict=True)]
    direct = build_geometry(
        list(d.examples), texts, d.settings, encoder=HashingEncoder(64), store=RecordingStore()
    )
    assert moved.table["rank_union"].tolist() == direct.target_ranks(d.settings.alpha).tolist()
    X = extract_features(
        [ex.question for ex in d.examples],
        [ex.bridge.sentences for ex in d.examples],
        texts,
        bridge_titles=[ex.bridge.title or None for ex in d.examples],
    )
    assert np.array_equal(moved.X, X)
    # the rule's own choice gives back the rule's data, exactly
    rule = d.table["b_rel_index"].to_numpy()
    same = with_b_rel(d, rule, inputs.vectors_at(rule), selector="rule")
    assert same.table.equals(d.table) and np.array_equal(same.X, d.X)


def test_learned_choices_are_cross_fitted_on_the_routers_folds(world: dict[str, Any]) -> None:
    data, inputs, cfg = world["data"], world["inputs"], world["cfg"]
    train = data["toyworld"]
    folds = router.recipe_folds(train, inputs["toyworld"], cfg)
    table = train.table
    expected = selector_folds(table["rank_q"], table["rank_union"], inputs["toyworld"].gold == 0)
    assert folds.tolist() == expected.tolist()
    rule = {d: x.table["b_rel_index"].to_numpy() for d, x in data.items()}
    choices = choose(inputs, rule, train_dataset="toyworld", folds=folds)
    assert set(choices.by_dataset["toyworld"]) == set(MEASURED)
    for variant in SELECTOR_VARIANTS:
        estimator = LearnedSelector(features=SELECTOR_VARIANTS[variant])
        out_of_fold = cross_fit_select(
            inputs["toyworld"].rows, inputs["toyworld"].gold, folds, estimator=estimator
        )
        assert choices.of("toyworld", variant).tolist() == out_of_fold.tolist()
        zero_shot = choices.fitted[variant].select(
            inputs["musique"].rows.X, inputs["musique"].rows.sizes
        )
        assert choices.of("musique", variant).tolist() == zero_shot.tolist()
    assert choices.cross_fitted("toyworld", "learned")
    assert not choices.cross_fitted("musique", "learned")
    assert not choices.cross_fitted("toyworld", "gold")
    # the zero-shot choices need no folds; cross-fitting adds the training dataset's
    fixed = choose(inputs, rule, train_dataset="toyworld", variants=("learned",))
    assert "learned" not in fixed.by_dataset["toyworld"]
    again = cross_fitted(fixed, inputs["toyworld"], folds)
    assert again.of("toyworld", "learned").tolist() == choices.of("toyworld", "learned").tolist()
    with pytest.raises(KeyError, match="learned"):  # the choice is made by cross_fitted only
        fixed.of("toyworld", "learned")


def test_the_router_of_a_cross_fitted_selection_keeps_its_folds(world: dict[str, Any]) -> None:
    data, inputs, cfg = world["data"], world["inputs"], world["cfg"]
    train = data["toyworld"]
    folds = router.recipe_folds(train, inputs["toyworld"], cfg)
    table = train.table
    kwargs = {"alpha": cfg.alpha, "tie_rule": cfg.tie_rule, "label_k": None, "n_splits": 5,
              "seed": cfg.seed}  # fmt: skip
    own = fit_routing(train.X, table["rank_q"], table["rank_union"], **kwargs)
    given = fit_routing(train.X, table["rank_q"], table["rank_union"], folds=folds, **kwargs)
    # the selector's folds are the router's own on its labelled items: nothing moves
    assert np.array_equal(own.probability, given.probability)
    learned = _knob(world, "learned")["toyworld"]
    assert np.array_equal(learned.folds, folds)
    result = router.train_on_data(learned, cfg)
    lt = learned.table
    expected = fit_routing(learned.X, lt["rank_q"], lt["rank_union"], folds=folds, **kwargs)
    assert np.array_equal(result.fitted.probability, expected.probability)
    # each labelled item is scored by a router fitted on the other folds only
    kept = result.fitted.labels != -1
    item = int(np.flatnonzero(kept)[0])
    others = kept & (folds != folds[item])
    from regime_core.router import RegimeRouter

    alone = RegimeRouter(alpha=cfg.alpha).fit(learned.X[others], result.fitted.labels[others])
    assert result.fitted.probability[item] == pytest.approx(
        alone.predict_proba(learned.X[[item]])[0, 1]
    )


def test_selector_data_subsets_match_their_items(world: dict[str, Any]) -> None:
    inputs = world["inputs"]["musique"]
    qids = inputs.qids[10:20][::-1]
    part = inputs.subset(qids, inputs.bridge_pids[10:20][::-1])
    assert part is not None and part.qids == qids
    for i, q in enumerate(qids):
        j = inputs.qids.index(q)
        lo, hi = inputs.rows.offsets[j], inputs.rows.offsets[j + 1]
        plo, phi = part.rows.offsets[i], part.rows.offsets[i + 1]
        assert np.array_equal(part.rows.X[plo:phi], inputs.rows.X[lo:hi])
        assert np.array_equal(part.sentence_vectors[plo:phi], inputs.sentence_vectors[lo:hi])
        assert part.gold[i] == inputs.gold[j] and part.gold_b_rel[i] == inputs.gold_b_rel[j]
    assert inputs.subset(("nowhere",), ("p",)) is None
    assert inputs.subset(qids[:1], ("another bridge",)) is None


def test_a_retrieved_distractor_bridge_has_no_gold_sentence() -> None:
    examples = _worlds()
    context = hashing_context(examples)
    cfg = router.RouterConfig(dataset="toyworld", bootstrap_resamples=RESAMPLES)
    data = router.load_routing_data(cfg, ("toyworld",), cfg.encoder, "retrieved", context)
    d = data["toyworld"]
    inputs = router.selector_inputs(data, context)["toyworld"]
    distractor = d.table["hop1"].to_numpy() == "distractor"
    assert distractor.any() and (~distractor).any()
    assert set(inputs.gold[distractor]) == {-1} and set(inputs.gold_b_rel[distractor]) == {-1}
    assert (inputs.gold[~distractor] >= 0).all()
    gold = router.with_selector(data, dataclasses.replace(cfg, selector="gold"), context,
                                train_dataset="toyworld", inputs={"toyworld": inputs})  # fmt: skip
    chosen = gold["toyworld"].table["b_rel_index"].to_numpy()
    # without a gold sentence the gold selector takes the rule's, and says how often
    assert chosen[distractor].tolist() == d.table["b_rel_index"].to_numpy()[distractor].tolist()


@pytest.fixture(scope="module")
def compared(world: dict[str, Any]) -> router.SelectorComparison:
    return router.compare_selectors(
        world["data"], world["cfg"], world["context"], train_dataset="toyworld"
    )


def _comparisons(node: Any, path: str = "") -> list[tuple[str, dict]]:
    """Every node of a record that is a comparison (it has a ``diff``)."""
    if not isinstance(node, dict):
        return []
    if "diff" in node:
        return [(path, node)]
    return [hit for key, value in node.items() for hit in _comparisons(value, f"{path}.{key}")]


def test_the_study_measures_every_selector_at_three_levels(
    world: dict[str, Any], compared: router.SelectorComparison
) -> None:
    data, cfg = world["data"], world["cfg"]
    rule = router.train_on_data(data["toyworld"], cfg)
    assert compared.trained["rule"].outcome.to_numbers() == rule.outcome.to_numbers()
    assert set(compared.trained) == set(config.SELECTORS)
    numbers = compared.study.to_numbers()
    assert numbers["selector"] == "rule" and numbers["train_dataset"] == "toyworld"
    for dataset in data:
        entry = numbers[dataset]
        assert entry["setting"] == ("cross-fitted" if dataset == "toyworld" else "zero-shot")
        assert set(entry["agreement"]["all"]) == {"n", "chance", *MEASURED}
        assert entry["agreement"]["all"]["gold"] == 1.0
        assert set(entry["union"]) == set(MEASURED) - {"gold"}
        assert set(entry["routed"]) == set(config.SELECTORS)
        assert "vs_gold" not in entry["routed"]["gold"]
        for selector in set(config.SELECTORS) - {"gold"}:
            assert set(entry["routed"][selector]["vs_gold"]) == set(ROUTED_COMPARISONS)
        for path, node in _comparisons(entry):
            assert set(node) >= COMPARISON_KEYS, (dataset, path)
        # the rule's zero-shot outcome is its trained router applied to the rule's data
        if dataset != "toyworld":
            applied = apply_router(compared.trained["rule"].router, data[dataset], bootstrap=BOOT)
            routed = entry["routed"]["rule"]
            assert routed["hit@5_routed"] == float(np.mean(applied.hits["routed"]))
    assert set(numbers["coefficients"]) == set(SELECTOR_VARIANTS)
    # the learned selector finds the toy world's relation sentences better than chance
    for dataset in data:
        cell = numbers[dataset]["agreement"]["all"]
        assert cell["learned"] > cell["chance"]


def test_the_study_is_deterministic(world: dict[str, Any]) -> None:
    def run() -> dict[str, Any]:
        return router.compare_selectors(
            world["data"], world["cfg"], world["context"], train_dataset="toyworld"
        ).study.to_numbers()

    assert run() == run()


def test_selector_knob_is_validated_and_named() -> None:
    assert router.RouterConfig().selector == "rule" == config.SELECTORS[0]


def test_recipe_folds_follow_the_label_rule(world: dict[str, Any]) -> None:
    train, inputs, cfg = world["data"]["toyworld"], world["inputs"]["toyworld"], world["cfg"]
    by_q = router.recipe_folds(train, inputs, dataclasses.replace(cfg, tie_rule="q"))
    by_exclude = router.recipe_folds(train, inputs, dataclasses.replace(cfg, tie_rule="exclude"))
    assert by_q.shape == by_exclude.shape == (train.n,)
    assert set(by_q) == set(by_exclude) == set(range(5))


def test_reselected_refuses_selector_data_of_other_questions(world: dict[str, Any]) -> None:
    data, inputs = world["data"], world["inputs"]
    rule = {d: x.table["b_rel_index"].to_numpy() for d, x in data.items()}
    choices = choose(inputs, rule, train_dataset="toyworld", variants=())
    with pytest.raises(ValueError, match="selector data of other questions"):
        reselected(data["toyworld"], inputs["musique"], choices, "gold")


def test_a_selector_outside_the_knob_is_refused_naming_the_field() -> None:
    assert check_selector("gold", "router.json, training.extra") == "gold"
    with refused(ValueError, names=("router.json", "'selector'", "bogus")):
        check_selector("bogus", "router.json, training.extra")
