"""The five router features, one hand-written question at a time."""

from __future__ import annotations

import numpy as np
import pytest

from regime_core.router import (
    FEATURE_DOCS,
    FEATURE_NAMES,
    FEATURE_SPEC,
    FEATURE_SPEC_VERSION,
    RouterRules,
    extract_features,
    feature_spec,
    featurize,
    select_b_rel_batch,
)

BRIDGE = ["Kestrel Bay is a 1931 film.", "It was directed by Odile Marchetti."]


def features(question: str, b_rel: str = BRIDGE[1], title: str | None = "Kestrel Bay") -> dict:
    X = extract_features([question], [BRIDGE], [b_rel], bridge_titles=[title])
    assert X.shape == (1, 5) and X.dtype == np.float64
    return dict(zip(FEATURE_NAMES, X[0].tolist(), strict=True))


def test_names_and_docs_are_canonical() -> None:
    assert len(FEATURE_NAMES) == 5 == len(set(FEATURE_NAMES))
    assert set(FEATURE_DOCS) == set(FEATURE_NAMES)
    assert all(len(doc) > 40 for doc in FEATURE_DOCS.values())


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Which film came out first, Kestrel Bay or Amber Gate?", 2),  # first, or
        ("Are both Kestrel Bay and Amber Gate from the same country?", 2),  # both, same
        ("Who is older, Odile Marchetti or Ida Brenn?", 2),  # older, or
        ("Who directed Kestrel Bay?", 0),
        ("Who wrote Thomas More's biography?", 0),  # "More" inside a name is no cue
    ],
)
def test_comparison_cues(question: str, expected: int) -> None:
    assert features(question)["comparison_cues"] == expected


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Is Kestrel Bay a film?", 1),
        ("did Odile Marchetti direct Kestrel Bay?", 1),
        ("Were both films made in Oslo?", 1),
        ("Could Ida Brenn sing?", 1),
        ("Who directed Kestrel Bay?", 0),
        ("Kestrel Bay is directed by whom?", 0),
        ("In which year was it made, and is it long?", 0),  # "is" later does not count
    ],
)
def test_yes_no_opener(question: str, expected: int) -> None:
    assert features(question)["yes_no_opener"] == expected


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Who directed Kestrel Bay?", 1),  # sentence-initial "Who" is no name
        ("Did the University of Oslo hire Ida Brenn?", 2),  # "Did" dropped, "of" joins
        ("Are both Kestrel Bay and Amber Gate from the same country?", 2),  # "and" separates
        ("Odile Marchetti directed which film?", 1),  # a sentence-initial name counts
        ("what year was it?", 0),
    ],
)
def test_question_entities(question: str, expected: int) -> None:
    assert features(question)["question_entities"] == expected


def test_p1_and_p2_proxies() -> None:
    # B-dominant: the bridge introduces Odile Marchetti, the question does not name her.
    f = features("Who is the mother of the director of Kestrel Bay?")
    assert (f["question_names_b_rel_entity"], f["b_rel_has_new_entity"]) == (0.0, 1.0)
    # Q-dominant: the question already names her (half of her name suffices).
    f = features("Did Marchetti direct Kestrel Bay?")
    assert (f["question_names_b_rel_entity"], f["b_rel_has_new_entity"]) == (1.0, 0.0)
    # The bridge's own subject is neither: B_rel naming only the subject gives (0, 0).
    f = features("Who directed Kestrel Bay?", b_rel=BRIDGE[0])
    assert (f["question_names_b_rel_entity"], f["b_rel_has_new_entity"]) == (0.0, 0.0)
    # Without a title the subject is the first span of the first sentence: same answer.
    f = features("Who directed Kestrel Bay?", b_rel=BRIDGE[0], title=None)
    assert (f["question_names_b_rel_entity"], f["b_rel_has_new_entity"]) == (0.0, 0.0)
    # One named, one new: both proxies fire.
    f = features("Did Marchetti work in Oslo?", b_rel="Odile Marchetti met Ida Brenn.")
    assert (f["question_names_b_rel_entity"], f["b_rel_has_new_entity"]) == (1.0, 1.0)


def test_accents_and_case_do_not_matter_for_naming() -> None:
    f = features("Did Beyonce direct Kestrel Bay?", b_rel="It was directed by Beyoncé.")
    assert f["question_names_b_rel_entity"] == 1.0


def test_entity_match_threshold_is_a_parameter() -> None:
    strict = RouterRules(entity_match_threshold=1.0)
    X = extract_features(
        ["Did Marchetti direct it?"],
        [BRIDGE],
        [BRIDGE[1]],
        bridge_titles=["Kestrel Bay"],
        rules=strict,
    )
    assert X[0, 3] == 0.0 and X[0, 4] == 1.0


def test_featurize_equals_select_then_extract() -> None:
    questions = ["Who is the mother of the director of Kestrel Bay?", "Is Amber Gate older?"]
    bridges = [BRIDGE, ["Amber Gate is a novel.", "It was written by Ida Brenn in Oslo."]]
    out = featurize(questions, bridges)
    selections = select_b_rel_batch(questions, bridges)
    assert out.selections == selections
    np.testing.assert_array_equal(
        out.X, extract_features(questions, bridges, [s.text for s in selections])
    )


def test_feature_spec_tracks_the_rules() -> None:
    assert FEATURE_SPEC.startswith(FEATURE_SPEC_VERSION + "+")
    assert feature_spec() == FEATURE_SPEC
    assert feature_spec(RouterRules(comparison_cues=("both",))) != FEATURE_SPEC
