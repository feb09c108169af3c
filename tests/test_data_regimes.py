from __future__ import annotations

import dataclasses
import doctest
from typing import Any

import numpy as np
import pandas as pd
import pytest
from builders import two_hop_example
from helpers import refused

import regime_core.data.regimes as regimes_module
from regime_core.data.regimes import (
    REGIMES,
    TABLE_COLUMNS,
    GoldBRel,
    RegimeRules,
    degenerate_predicates,
    gold_b_rel,
    hop2_names,
    p1,
    p2,
    predicate_names,
    regime,
    regime_label,
    regime_labels,
    regime_shares,
    regime_table,
    relation_sentences,
)
from regime_core.schema import Example, Passage
from regime_core.text import NormalizationRules

# Fictional fixtures (no dataset text): the bridge is about a film, the target about its director.
BRIDGE = Passage.make(
    "Moonlit Harbour",
    [
        "Moonlit Harbour is a 1998 drama film.",
        "It was directed by Élodie Marchetti (director).",
        "The film premiered in Lisbon.",
    ],
)
TARGET = Passage.make(
    "Élodie Marchetti (director)",
    ["Élodie Marchetti is a French director.", "She was born in Lyon."],
)
DISTRACTOR = Passage.make("Lyon", ["Lyon is a city in France."])


def make_example(
    question: str,
    *,
    hop2_entity: str = "Élodie Marchetti",
    bridge: Passage = BRIDGE,
    target: Passage = TARGET,
    **fields: Any,
) -> Example:
    return two_hop_example(
        question, bridge, target, DISTRACTOR, hop2_entity=hop2_entity, answer="Lyon", **fields
    )


Q_NAMES_ENTITY = "Where was elodie marchetti born?"  # P1 true (accents, case ignored)
Q_INDIRECT = "Where was the director of Moonlit Harbour born?"  # P1 false
BRIDGE_WITHOUT_ENTITY = Passage.make(
    "Moonlit Harbour", ["Moonlit Harbour is a 1998 drama film.", "It premiered in Lisbon."]
)

# The four cells of the truth table: (question, bridge) -> (P1, P2, regime).
CELLS = [
    (Q_NAMES_ENTITY, BRIDGE, True, True, "Q-dominant"),
    (Q_NAMES_ENTITY, BRIDGE_WITHOUT_ENTITY, True, False, "Q-dominant"),
    (Q_INDIRECT, BRIDGE, False, True, "B-dominant"),
    (Q_INDIRECT, BRIDGE_WITHOUT_ENTITY, False, False, "neither"),
]


def test_doctests_pass() -> None:
    result = doctest.testmod(regimes_module)
    assert result.attempted >= 2
    assert result.failed == 0


@pytest.mark.parametrize(("question", "bridge", "want_p1", "want_p2", "want_regime"), CELLS)
def test_truth_table_cells(
    question: str, bridge: Passage, want_p1: bool, want_p2: bool, want_regime: str
) -> None:
    example = make_example(question, bridge=bridge)
    assert p1(example) is want_p1
    assert p2(example) is want_p2
    assert regime(example) == want_regime
    assert regime_label(want_p1, want_p2) == want_regime


def test_regime_labels_vectorised_matches_scalar() -> None:
    p1s = np.array([True, True, False, False])
    p2s = np.array([True, False, True, False])
    got = regime_labels(p1s, p2s)
    assert got.tolist() == ["Q-dominant", "Q-dominant", "B-dominant", "neither"]
    assert got.tolist() == [regime_label(a, b) for a, b in zip(p1s, p2s, strict=True)]
    assert regime_labels([], []).tolist() == []
    with refused(ValueError, names=("shape",)):
        regime_labels([True], [True, False])


def test_relation_sentences_are_the_bridge_sentences_mentioning_the_entity() -> None:
    example = make_example(Q_INDIRECT)
    assert relation_sentences(example) == [1]
    both = Passage.make(
        "Moonlit Harbour",
        ["Marchetti's debut.", "Directed by Elodie Marchetti.", "Élodie MARCHETTI's film."],
    )
    ex2 = make_example(Q_INDIRECT, bridge=both)
    # the possessive in sentence 2 still matches; the bare surname in sentence 0 does not
    assert relation_sentences(ex2) == [1, 2]


def test_disambiguated_title_matches_via_its_plain_form() -> None:
    # the mention itself is unusable here, so only the title "Élodie Marchetti (director)" can
    # match, through its form without the disambiguator
    example = make_example(Q_NAMES_ENTITY, hop2_entity="E. M.")
    assert p1(example)
    no_title = RegimeRules(use_title=False, predicate_names="title+linking")
    assert not p1(example, no_title)
    assert not p2(example, no_title)
    # under the default predicate names only the title and aliases count: none is left
    with refused(ValueError, names=("P1/P2",)):
        p1(example, RegimeRules(use_title=False))
    with refused(ValueError, names=("use_title", "use_aliases")):
        RegimeRules(use_title=False, use_aliases=False)


def test_predicate_names_knob_separates_title_from_linking_entity() -> None:
    # MuSiQue-like: the bridge names the linking entity, the hop-2 passage is titled otherwise
    target = Passage.make("Lyon Film Festival", ["The Lyon Film Festival is held in Lyon."])
    example = make_example(Q_INDIRECT, target=target, hop2_aliases=())
    title_only = RegimeRules(predicate_names="title")
    linking = RegimeRules(predicate_names="title+linking")
    assert predicate_names(example, title_only) == ("Lyon Film Festival",)
    assert predicate_names(example, linking) == ("Élodie Marchetti", "Lyon Film Festival")
    assert not p2(example, title_only)  # the bridge never names the festival
    assert p2(example, linking)  # the bridge names the linking entity by construction
    assert regime(example, title_only) == "neither"
    assert regime(example, linking) == "B-dominant"
    # B_rel is found with every name, whatever the predicate names
    assert gold_b_rel(example, title_only) == gold_b_rel(example, linking)
    assert gold_b_rel(example, title_only).index is not None
    table = regime_table([example], title_only)
    assert not table.loc[0, "p2"] and table.loc[0, "n_relation_sentences"] >= 1


def test_degenerate_predicates_at_the_threshold() -> None:
    def table(n_true: int, n: int = 100) -> pd.DataFrame:
        return pd.DataFrame(
            {"dataset": "d", "p1": [i < n_true for i in range(n)], "p2": [i < 50 for i in range(n)]}
        )

    assert degenerate_predicates(table(95)).set_index("predicate").loc["p1", "degenerate"]
    assert not degenerate_predicates(table(94)).set_index("predicate").loc["p1", "degenerate"]
    assert degenerate_predicates(table(5)).set_index("predicate").loc["p1", "degenerate"]  # false
    assert not degenerate_predicates(table(6)).set_index("predicate").loc["p1", "degenerate"]
    assert not degenerate_predicates(table(50)).set_index("predicate").loc["p2", "degenerate"]


def test_aliases_count_only_when_the_rules_say_so() -> None:
    question = "Where was the director known as La Marquise born?"
    example = make_example(question, hop2_aliases=("La Marquise",))
    assert p1(example)
    assert not p1(example, RegimeRules(use_aliases=False))
    assert hop2_names(example) == ("Élodie Marchetti", "Élodie Marchetti (director)", "La Marquise")
    only_mention = RegimeRules(use_aliases=False, use_title=False, predicate_names="title+linking")
    assert hop2_names(example, only_mention) == ("Élodie Marchetti",)


def test_normalisation_rules_are_parameters() -> None:
    example = make_example("Where was ELODIE MARCHETTI born?")
    assert p1(example)
    case_sensitive = RegimeRules(normalization=NormalizationRules(lowercase=False))
    assert not p1(example, case_sensitive)
    accent_sensitive = RegimeRules(normalization=NormalizationRules(strip_accents=False))
    assert not p1(make_example(Q_NAMES_ENTITY), accent_sensitive)


def test_token_boundaries_prevent_partial_matches() -> None:
    example = make_example("Which Marchettian style did the director of Moonlit Harbour use?")
    assert not p1(example)


def test_parallel_items_are_not_special_cased() -> None:
    question = "Who is older, Élodie Marchetti or the director of Moonlit Harbour?"
    example = make_example(question, parallel=True, native_type="comparison")
    assert regime(example) == "Q-dominant"
    indirect = make_example(Q_INDIRECT, parallel=True, native_type="comparison")
    assert regime(indirect) == "B-dominant"  # measured, not assumed


def test_gold_b_rel_prefers_the_example_then_falls_back() -> None:
    given = make_example(Q_INDIRECT, relation_sentence=2, relation_source="supporting_facts")
    assert gold_b_rel(given) == GoldBRel("The film premiered in Lisbon.", 2, "example")
    fallback = make_example(Q_INDIRECT)
    assert gold_b_rel(fallback) == GoldBRel(
        "It was directed by Élodie Marchetti (director).", 1, "entity_mention"
    )
    nothing = make_example(Q_INDIRECT, bridge=BRIDGE_WITHOUT_ENTITY)
    assert gold_b_rel(nothing) == GoldBRel(None, None, "none")


def test_unusable_hop2_entity_raises_with_the_record_named() -> None:
    target = Passage.make("The", ["A passage."])
    example = make_example(Q_INDIRECT, hop2_entity="The", target=target, example_id="bad-1")
    with refused(ValueError, names=("bad-1", "hop2_entity")):
        p1(example, RegimeRules(predicate_names="title+linking"))
    with refused(ValueError, names=("bad-1", "title 'The'")):
        p1(example)


def test_bad_rules_raise() -> None:
    with refused(ValueError, names=("relation_sentence",)):
        RegimeRules(relation_sentence="any_sentence")
    with refused(ValueError, names=("normalization",)):
        RegimeRules(normalization={"lowercase": True})  # type: ignore[arg-type]


def test_rules_hash_is_stable_and_sensitive() -> None:
    assert RegimeRules().config_hash() == RegimeRules().config_hash()
    changed = RegimeRules(normalization=NormalizationRules(strip_articles=False))
    assert changed.config_hash() != RegimeRules().config_hash()
    assert RegimeRules().to_dict()["normalization"]["articles"] == ["a", "an", "the"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        RegimeRules().use_title = False  # type: ignore[misc]


@pytest.fixture()
def examples() -> list[Example]:
    out = []
    for i, (question, bridge, *_rest) in enumerate(CELLS):
        out.append(
            make_example(
                question,
                bridge=bridge,
                example_id=f"b{i}",
                dataset="hotpotqa" if i < 2 else "musique",
                relation_sentence=0 if i == 0 else None,
                relation_source="supporting_facts" if i == 0 else "none",
            )
        )
    comparison = "Is Élodie Marchetti older than the director of Moonlit Harbour?"
    out.append(
        make_example(
            comparison, example_id="c0", dataset="hotpotqa", parallel=True, native_type="comparison"
        )
    )
    return out


def test_regime_table_rows_agree_with_the_scalar_functions(examples: list[Example]) -> None:
    table = regime_table(examples)
    assert list(table.columns) == list(TABLE_COLUMNS)
    assert table["id"].tolist() == ["b0", "b1", "b2", "b3", "c0"]
    assert table["regime"].tolist() == [regime(e) for e in examples]
    assert table["p1"].tolist() == [p1(e) for e in examples]
    assert table["p2"].tolist() == [p2(e) for e in examples]
    assert table["n_relation_sentences"].tolist() == [len(relation_sentences(e)) for e in examples]
    golds = [gold_b_rel(e) for e in examples]
    assert table["b_rel_source"].tolist() == [g.source for g in golds]
    assert table["b_rel_index"].tolist() == [pd.NA if g.index is None else g.index for g in golds]
    assert str(table["b_rel_index"].dtype) == "Int64"
    assert table["p1"].dtype == bool and table["parallel"].dtype == bool
    assert table.attrs["regime_rules_hash"] == RegimeRules().config_hash()


def test_regime_table_of_nothing_is_empty_with_columns() -> None:
    table = regime_table([])
    assert table.empty and list(table.columns) == list(TABLE_COLUMNS)


def test_regime_shares_counts_every_cell(examples: list[Example]) -> None:
    table = regime_table(examples)
    shares = regime_shares(table)
    assert list(shares.columns) == ["dataset", "native_type", "regime", "count", "n", "share"]
    # 3 groups present (hotpotqa/bridge, hotpotqa/comparison, musique/bridge) x 3 regimes
    assert len(shares) == 9
    hb = shares[(shares.dataset == "hotpotqa") & (shares.native_type == "bridge")]
    assert hb["regime"].tolist() == list(REGIMES)
    assert hb["count"].tolist() == [2, 0, 0]
    assert hb["share"].tolist() == [1.0, 0.0, 0.0]
    mb = shares[(shares.dataset == "musique")]
    assert mb["count"].tolist() == [0, 1, 1]
    assert mb["share"].tolist() == [0.0, 0.5, 0.5]
    assert (shares.groupby(["dataset", "native_type"])["share"].sum() == 1.0).all()
    assert shares["count"].sum() == len(table)

    overall = regime_shares(table, by=())
    assert overall["regime"].tolist() == list(REGIMES)
    assert overall["count"].tolist() == [3, 1, 1]
    assert overall["n"].tolist() == [5, 5, 5]

    by_parallel = regime_shares(table, by="parallel")
    comparison = by_parallel[by_parallel["parallel"]]
    assert comparison["count"].tolist() == [1, 0, 0]


def test_regime_shares_rejects_unknown_labels(examples: list[Example]) -> None:
    """A label outside REGIMES would fall out of the categorical counts unseen: refused."""
    table = regime_table(examples)
    broken = table.assign(regime=["Q-dominant", "X", "neither", "neither", "neither"])
    with refused(ValueError, names=("'X'",)):
        regime_shares(broken)
