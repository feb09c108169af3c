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
    marked = lesson.solution_table(questions, {**right, "T1": "neither"})
    assert marked["right"].tolist()[1:] == [True] * 3
    with pytest.raises(ValueError, match="not shown"):
        lesson.solution_table(questions, {"T99": "B"})


def test_question_markdown_uses_display_names(toy: list) -> None:
    text = lesson.question_markdown("T1", toy[0])
    assert text.startswith("**T1** (toy world).")


def test_encoder_note_names_the_encoder() -> None:
    note = lesson.encoder_note("tfidf", other_page="The toy-world page")
    assert "**TF-IDF**" in note and "same encoder" in note
