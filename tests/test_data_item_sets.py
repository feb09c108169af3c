"""The item sets (regime_core.data.item_sets): the strict rule's clauses at their edges, its
counts, and the sample drawn under it."""

from __future__ import annotations

import dataclasses

import pytest
from helpers import refused

from regime_core import config
from regime_core.data import toyworld
from regime_core.data.item_sets import (
    ITEM_SETS,
    STRICT_CLAUSES,
    filter_item_set,
    is_yes_no,
    mention_count,
    strict_failures,
    title_mentions,
)
from regime_core.experiments.common import RunConfig
from regime_core.experiments.context import Context
from regime_core.experiments.sampling import sample_examples, sample_numbers
from regime_core.schema import Passage
from tests.builders import two_hop_example


def _example(bridge_text: str, target_title: str, answer: str = "Paris", i: int = 0):
    bridge = Passage.make(f"Bridge {i}", [s for s in bridge_text.split("|")])
    target = Passage.make(target_title, [f"{target_title} is a place, number {i}."])
    other = Passage.make(f"Other {i}", ["Nothing here."])
    return two_hop_example(
        "Where?", bridge, target, other, hop2_entity=target_title, answer=answer,
        example_id=f"q{i}",
    )  # fmt: skip


@pytest.mark.parametrize(
    ("text", "title", "count"),
    [
        ("He moved to Paris.", "Paris", 1),
        ("He moved to PARIS, then to paris again.", "Paris", 2),  # case is ignored
        ("Paris's mayor met him.", "Paris", 1),  # the possessive is dropped
        ("A Parisian café.", "Paris", 0),  # whole tokens only
        ("Heat (1995 film) is long.", "Heat (1995 film)", 1),  # one mention, not two
        ("Heat is long. Heat is loud.", "Heat (1995 film)", 2),  # the title without its tail
        ("It was a heatwave.", "Heat (1995 film)", 0),
        ("Amélie won.", "Amelie", 1),  # accents are stripped
        ("He liked the who and what.", "The Who", 0),  # article-made one word: capitalised only
        ("He liked The Who.", "The Who", 1),
    ],
)
def test_mention_count_at_its_edges(text: str, title: str, count: int) -> None:
    assert mention_count(text, title) == count


def test_the_mention_is_counted_in_the_bridge_text_only() -> None:
    # the bridge's own title names the target; its text does not: no mention
    bridge = Passage.make("Paris", ["A city on a river."])
    target = Passage.make("Paris", ["The capital of France, number 1."])
    ex = two_hop_example(
        "Q?", bridge, target, Passage.make("X", ["x."]), hop2_entity="Paris",
        hop2_aliases=("City of Light",),
    )  # fmt: skip
    assert title_mentions(ex) == 0
    # an alias of the dataset never counts, only the title
    aliased = _example("The City of Light is old.", "Paris")
    assert title_mentions(dataclasses.replace(aliased, hop2_aliases=("City of Light",))) == 0


@pytest.mark.parametrize(
    ("answer", "yes_no"),
    [("yes", True), ("No", True), (" YES. ", True), ("yes, both", False), ("Norway", False)],
)
def test_a_yes_no_question_is_known_by_its_answer(answer: str, yes_no: bool) -> None:
    assert is_yes_no(_example("Paris.", "Paris", answer=answer)) is yes_no


def test_strict_failures_name_every_clause_failed_in_order() -> None:
    assert strict_failures(_example("He went to Paris.", "Paris")) == ()
    assert strict_failures(_example("Nowhere.", "Paris")) == ("title_not_mentioned",)
    assert strict_failures(_example("Paris. Paris.", "Paris")) == ("title_mentioned_repeatedly",)
    assert strict_failures(_example("Nowhere.", "Paris", answer="no")) == (
        "yes_no_answer",
        "title_not_mentioned",
    )
    assert list(STRICT_CLAUSES) == [
        "yes_no_answer",
        "title_not_mentioned",
        "title_mentioned_repeatedly",
    ]


def test_filter_counts_each_removed_item_once_and_every_clause_it_fails() -> None:
    examples = [
        _example("He went to Paris.", "Paris", i=0),  # kept
        _example("He went to Paris.", "Paris", answer="yes", i=1),  # yes/no only
        _example("Nowhere.", "Paris", answer="no", i=2),  # yes/no and no mention
        _example("Nowhere.", "Paris", i=3),  # no mention
        _example("Paris, Paris.", "Paris", i=4),  # repeated
        _example("To Paris.", "Paris", i=5),  # kept
    ]
    strict = filter_item_set(examples, "strict")
    assert [ex.id for ex in strict.kept] == ["q0", "q5"]
    assert strict.removed == {
        "yes_no_answer": 2,
        "title_not_mentioned": 1,
        "title_mentioned_repeatedly": 1,
    }
    assert strict.failing == {
        "yes_no_answer": 2,
        "title_not_mentioned": 2,
        "title_mentioned_repeatedly": 1,
    }
    assert strict.n == 6 and strict.n_kept == 2 and strict.n_removed == 4
    assert sum(strict.removed.values()) == strict.n_removed
    numbers = strict.to_numbers()
    assert numbers["kept"] == 2 and numbers["removed_by"]["yes_no_answer"] == 2
    every = filter_item_set(examples, "all")
    assert every.kept == tuple(examples) and every.n_removed == 0
    assert set(every.removed.values()) == {0}


def test_the_toy_world_under_the_strict_item_set() -> None:
    world = toyworld.load_examples(split="dev")
    strict = filter_item_set(world, "strict")
    assert 0 < strict.n_kept < len(world)
    assert strict.n_kept + sum(strict.removed.values()) == len(world)
    assert all(strict_failures(ex) == () for ex in strict.kept)
    assert strict.removed["yes_no_answer"] == sum(is_yes_no(ex) for ex in world)


def test_the_default_item_set_is_all_and_a_bad_one_is_refused() -> None:
    """The config is where an item set is checked (filter_item_set trusts it)."""
    assert config.ITEM_SET == "all" and ITEM_SETS == ("all", "strict")
    assert RunConfig().item_set == "all"
    with refused(ValueError, names=("item_set", "'loose'")):
        RunConfig(item_set="loose")


def test_the_sample_under_the_strict_item_set_is_counted() -> None:
    world = toyworld.load_examples(split="dev")
    dataset = world[0].dataset
    every = sample_examples(world, None, seed=0, dataset=dataset, split="dev")
    strict = sample_examples(world, None, seed=0, dataset=dataset, split="dev", item_set="strict")
    expected = filter_item_set(world, "strict")
    assert every.n == len(world) and "item_set" not in sample_numbers(every)  # default unchanged
    assert strict.n == expected.n_kept and strict.n_available == len(world)
    assert strict.item_set_removed == expected.removed
    assert strict.corpus == every.corpus  # an item set chooses questions, never passages
    numbers = sample_numbers(strict)
    assert numbers["item_set"] == "strict"
    assert numbers["n_item_set_removed"] == expected.n_removed == len(world) - strict.n
    # the tiny-pool rule applies to the item set's items, after it
    at_k5 = RunConfig(item_set="strict").retrieval  # tiny_pools="exclude": the toy world has none
    both = sample_examples(
        world, None, seed=0, dataset=dataset, split="dev", settings=at_k5, item_set="strict"
    )
    assert both.n == expected.n_kept and both.n_tiny_pool == 0
    # a config's item set reaches the sample through the context
    context = Context(examples={dataset: world})
    drawn = context.samples(RunConfig(item_set="strict", tiny_pools="keep"), [dataset])[dataset]
    assert {ex.id for ex in drawn.examples} == {ex.id for ex in expected.kept}
    with refused(ValueError, names=("'strict'", "'toyworld'", "item_set='all'")):
        sample_examples(
            [ex for ex in world if ex not in expected.kept], None, seed=0, dataset=dataset,
            split="dev", item_set="strict",
        )  # fmt: skip
