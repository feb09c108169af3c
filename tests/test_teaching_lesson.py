"""The teaching notebooks' helpers: exercise 1 always has a *neither* question, solutions are
computed, and the encoder note names the encoder."""

from __future__ import annotations

import pytest

from regime_core.data.regimes import p1, p2
from regime_core.data.toyworld import ToyWorldConfig, generate
from regime_core.teaching import lesson


@pytest.fixture(scope="module")
def toy() -> list:
    return list(generate(ToyWorldConfig(n_questions=40)))


def test_a_toy_question_without_its_relation_sentence_is_neither(toy: list) -> None:
    b_dominant = next(ex for ex in toy if not p1(ex) and p2(ex))
    changed = lesson.without_relation_sentences(b_dominant)
    assert changed.question == b_dominant.question
    assert not p1(changed) and not p2(changed)
    assert len(changed.bridge.sentences) < len(b_dominant.bridge.sentences)


def test_exercise_one_has_a_neither_question_without_real_data(toy: list) -> None:
    questions = lesson.exercise_questions(toy, None, 10, seed=0)
    assert len(questions) == 11 and set(questions) == {f"T{i}" for i in range(1, 12)}
    solution = lesson.solution_table(questions)
    assert "neither" in set(solution["regime"])
    counts = lesson.solution_counts(solution)
    assert counts["toyworld"]["neither"] == 1


def test_the_toy_draw_is_the_same_with_or_without_the_neither_question(toy: list) -> None:
    drawn = lesson.draw_questions(toy, 10, "T", seed=0)
    with_neither = lesson.exercise_questions(toy, None, 10, seed=0)
    original = {ex.id for ex in drawn.values()}
    assert original <= {ex.id for ex in with_neither.values()}


def test_solution_marks_the_readers_answers(toy: list) -> None:
    questions = lesson.draw_questions(toy, 4, "T", seed=0)
    solution = lesson.solution_table(questions)
    right = {
        label: regime[0]
        for label, regime in zip(solution["label"], solution["regime"], strict=True)
    }
    checked = lesson.check_predictions({**right, "T1": "neither"}, list(questions))
    assert checked.problems == ()
    marked = lesson.solution_table(questions, checked.answers)
    assert marked["right"].tolist()[1:] == [True] * 3


def test_question_markdown_uses_display_names(toy: list) -> None:
    text = lesson.question_markdown("T1", toy[0])
    assert text.startswith("**T1** (toy world).")


def test_encoder_note_names_the_encoder() -> None:
    note = lesson.encoder_note("tfidf", other_page="The toy-world page")
    assert "**TF-IDF**" in note and "same encoder" in note


def test_an_invalid_answer_is_refused_with_a_message_not_marked_wrong() -> None:
    checked = lesson.check_predictions(
        {"T1": "X", "T2": " b ", "T3": "Neither"}, ["T1", "T2", "T3"]
    )
    assert checked.answers == {"T2": "B-dominant", "T3": "neither"}
    assert len(checked.problems) == 1
    assert "T1" in checked.problems[0] and "'X'" in checked.problems[0]
    assert lesson.ANSWER_WORDS in checked.problems[0]


def test_an_unknown_question_is_refused_with_a_message_not_an_error() -> None:
    checked = lesson.check_predictions({"T1": "Q", "R7": "B"}, ["T1", "T2"])
    assert checked.answers == {"T1": "Q-dominant"}
    assert checked.problems == ("R7 is not a question shown here (they are T1, T2). Not scored.",)


@pytest.mark.parametrize(
    ("typed", "said"),
    [('{"T1": "B"', "not valid JSON"), (["T1", "B"], "must map"), (3, "must map")],
)
def test_predictions_that_are_not_a_mapping_score_nothing_and_say_why(
    typed: object, said: str
) -> None:
    checked = lesson.check_predictions(typed, ["T1"])
    assert checked.answers == {} and len(checked.problems) == 1 and said in checked.problems[0]


def test_predictions_as_json_text_are_read() -> None:
    checked = lesson.check_predictions('{"T1": "q", "T2": "n"}', ["T1", "T2"])
    assert checked.answers == {"T1": "Q-dominant", "T2": "neither"} and checked.problems == ()


def test_each_regime_has_a_reason_that_cites_the_text(toy: list) -> None:
    questions = lesson.exercise_questions(toy, None, 10, seed=0)
    solution = lesson.solution_table(questions)
    seen = set()
    for (label, ex), regime, reason in zip(
        questions.items(), solution["regime"], solution["reason"], strict=True
    ):
        assert reason.endswith(f"{regime}."), label
        seen.add(regime)
        if regime == "Q-dominant":
            named = reason.split("(")[1].split(")")[0]
            assert named in ex.question
        elif regime == "B-dominant":
            quoted = reason.split('"')[1]
            assert quoted in ex.bridge.sentences
            assert ex.target.title in quoted
        else:
            assert ex.target.title in reason
    assert seen == {"Q-dominant", "B-dominant", "neither"}


def test_a_wrong_answer_gets_its_reason_and_the_score_counts_answers(toy: list) -> None:
    questions = lesson.exercise_questions(toy, None, 10, seed=0)
    key = lesson.solution_table(questions)
    wrong_for = {"Q-dominant": "B", "B-dominant": "Q", "neither": "Q"}
    first, second = key["label"][0], key["label"][1]
    typed = {first: key["regime"][0], second: wrong_for[key["regime"][1]]}
    solution = lesson.solution_table(
        questions, lesson.check_predictions(typed, list(questions)).answers
    )
    assert solution["right"].tolist()[:2] == [True, False]
    assert solution["feedback"][0] == ""
    assert solution["feedback"][1].startswith("You said ")
    assert solution["feedback"][1].endswith(key["reason"][1])
    score = lesson.score_markdown(solution)
    assert f"1 right of 2 answered** ({len(questions)} questions shown)" in score
    assert f"**{second}**" in score and f"**{first}**" not in score


def test_no_answers_no_score(toy: list) -> None:
    questions = lesson.draw_questions(toy, 3, "T", seed=0)
    assert lesson.score_markdown(lesson.solution_table(questions)) == ""
    assert lesson.problems_markdown(lesson.check_predictions(None, list(questions))) == ""


def test_the_answer_key_holds_every_question_with_its_reason(toy: list) -> None:
    questions = lesson.exercise_questions(toy, None, 5, seed=0)
    solution = lesson.solution_table(questions)
    key = lesson.answer_key_numbers(questions, solution)
    assert list(key) == list(questions)
    for label, row in key.items():
        ex = questions[label]
        assert row["question"] == ex.question and row["bridge"] == ex.bridge.text
        assert row["reason"] == lesson.regime_reason(ex)
        assert row["reason"].endswith(f"{row['regime']}.")
        assert isinstance(row["p1"], bool) and isinstance(row["p2"], bool)
