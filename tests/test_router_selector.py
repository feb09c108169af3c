"""The B_rel selector: hand-written bridges whose relation sentence is known by construction."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import refused

from regime_core.router import (
    RouterRules,
    SelectedSentence,
    select_b_rel,
    select_b_rel_batch,
    sentence_scores,
)

QUESTION = "Who is the mother of the director of the film Kestrel Bay?"
BRIDGE = (
    "Kestrel Bay is a 1931 drama film.",
    "The film was directed by Odile Marchetti.",
    "It was shot in black and white.",
)


def test_picks_the_sentence_that_introduces_a_new_entity_with_the_relation_word() -> None:
    sel = select_b_rel(QUESTION, BRIDGE, bridge_title="Kestrel Bay (film)")
    assert sel == SelectedSentence(1, BRIDGE[1], pytest.approx(1.0 + 0.5 * 2 + 0.25 / 2))


def test_scores_follow_the_documented_formula() -> None:
    rules = RouterRules()
    scores = sentence_scores(QUESTION, BRIDGE, bridge_title="Kestrel Bay (film)", rules=rules)
    # s0: relation stem "film"; s1: new entity + "film", "direc"; s2: nothing.
    expected = [0.5 * 1 + 0.25 / 1, 1.0 + 0.5 * 2 + 0.25 / 2, 0.25 / 3]
    np.testing.assert_allclose(scores, expected)


def test_the_bridge_subject_is_not_a_new_entity() -> None:
    # The question does not name the bridge's subject; without the title it is the first span.
    question = "Who directed the film that won the Corvin Prize?"
    bridge = ["Kestrel Bay won the Corvin Prize.", "Kestrel Bay was directed by Odile Marchetti."]
    assert select_b_rel(question, bridge).index == 1
    assert select_b_rel(question, bridge, bridge_title="Kestrel Bay").index == 1


def test_an_entity_named_by_the_question_is_not_new() -> None:
    question = "Where was Odile Marchetti born?"
    bridge = ["Kestrel Bay is a film.", "It was directed by Odile Marchetti."]
    scores = sentence_scores(question, bridge, bridge_title="Kestrel Bay")
    # Neither sentence introduces a new entity, so only position and overlap remain.
    assert scores.max() < 1.0


def test_ties_go_to_the_earliest_sentence() -> None:
    rules = RouterRules(position_weight=0.0)
    sel = select_b_rel("What is it?", ["Plain words here.", "More plain words."], rules=rules)
    assert sel.index == 0 and sel.score == 0.0


def test_weights_are_parameters() -> None:
    no_entities = RouterRules(new_entity_weight=0.0, overlap_weight=0.0)
    assert select_b_rel(QUESTION, BRIDGE, rules=no_entities).index == 0  # position prior only


def test_batch_equals_single_calls() -> None:
    questions = [QUESTION, "Did Odile Marchetti study in Lyon?"]
    bridges = [BRIDGE, ["Odile Marchetti is a director.", "She studied at the Lyon School."]]
    batch = select_b_rel_batch(questions, bridges, bridge_titles=["Kestrel Bay (film)", None])
    assert batch[0] == select_b_rel(QUESTION, BRIDGE, bridge_title="Kestrel Bay (film)")
    assert batch[1] == select_b_rel(questions[1], bridges[1])


@pytest.mark.parametrize(
    ("question", "bridge", "title", "field"),
    [
        ("", BRIDGE, None, "question"),
        (None, BRIDGE, None, "question"),
        (QUESTION, [], None, "bridge_sentences"),
        (QUESTION, "Kestrel Bay is a film.", None, "bridge_sentences"),
        (QUESTION, ["ok", 3], None, "bridge_sentences[1]"),
        (QUESTION, ["ok", "   "], None, "bridge_sentences[1]"),
        (QUESTION, BRIDGE, "", "bridge_title"),
    ],
)
def test_bad_inputs_raise(question: object, bridge: object, title: object, field: str) -> None:
    with refused(ValueError, names=("select_b_rel", field)):
        select_b_rel(question, bridge, bridge_title=title)  # type: ignore[arg-type]
