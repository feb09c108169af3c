"""The teachers' page: the lesson plan fills its minutes, the measured timings file is read and
checked, the page holds the plan, the worksheet and the key; and the teaching notebooks hide their
hints and solutions in plain JupyterLab (its own cell metadata), not only in the book."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import refused

from regime_core import paths
from regime_core.inputs.lesson_timings import TIMINGS_FORMAT
from regime_core.teaching import plan

PAGE = paths.REPO_ROOT / "book" / "start" / "teaching.md"
TIMINGS = PAGE.parent / "lesson_timings.json"
NOTEBOOKS = paths.REPO_ROOT / "notebooks"


def _timings(**steps: Any) -> dict[str, Any]:
    return {
        "format": TIMINGS_FORMAT,
        "measured": "2026-12-07",
        "machine": "2 cores",
        "steps": steps,
    }


def test_the_plan_fills_the_lesson_exactly() -> None:
    slots = plan.schedule()
    assert slots[0][0] == 0 and slots[-1][1] == plan.LESSON_MINUTES
    for (_, end, _), (start, _, _) in itertools.pairwise(slots):
        assert end == start
    assert all(activity.minutes >= 1 for activity in plan.LESSON_PLAN)


def test_the_committed_timings_cover_every_step_the_plan_waits_on() -> None:
    timings = plan.load_timings(TIMINGS)
    waited = {s for a in plan.LESSON_PLAN for s in a.timed_steps}
    assert waited and waited <= set(timings.steps)
    for step in timings.steps.values():
        assert step.seconds > 0 and step.command.startswith("regime ")


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"format": "other"}, "'format'"),
        ({"machine": ""}, "'machine'"),
        ({"steps": {}}, "'steps'"),
        ({"steps": {"toyworld": {"command": "regime x", "seconds": 0}}}, "toyworld.seconds"),
        ({"steps": {"toyworld": {"command": "", "seconds": 3}}}, "toyworld.command"),
        (
            {"steps": {"toyworld": {"command": "regime x", "seconds": 3, "note": 1}}},
            "toyworld.note",
        ),
    ],
)
def test_a_damaged_timings_file_names_its_field(change: dict[str, Any], field: str) -> None:
    data = {**_timings(toyworld={"command": "regime x", "seconds": 3}), **change}
    with refused(ValueError, names=("t.json", field)):
        plan.parse_timings(data, "t.json")


def test_a_timings_file_without_a_planned_step_is_refused(tmp_path: Path) -> None:
    file = tmp_path / "t.json"
    file.write_text(json.dumps(_timings(toyworld={"command": "regime x", "seconds": 3})))
    with refused(ValueError, names=(str(file),)):
        plan.load_timings(file)


def test_the_page_holds_the_plan_worksheet_and_key_and_is_in_the_book() -> None:
    text = PAGE.read_text(encoding="utf-8")
    assert text.index("{regime-lesson-plan}") < text.index("{regime-worksheet}")
    assert text.index("{regime-worksheet}") < text.index("{regime-answer-key}")
    assert ":timings: lesson_timings.json" in text
    toc = yaml.safe_load((paths.REPO_ROOT / "_toc.yml").read_text(encoding="utf-8"))
    files = [c["file"] for part in toc["parts"] for c in part["chapters"]]
    assert "book/start/teaching" in files


def test_the_print_style_sheet_prints_the_key_on_its_own_page() -> None:
    from regime_book.site import STATIC_DIR
    from regime_book.teaching import TEACHING_CSS

    css = (STATIC_DIR / TEACHING_CSS).read_text(encoding="utf-8")
    printed = css[css.index("@media print") :]
    assert ".regime-answer-key" in printed and "break-before: page" in printed
    assert ".bd-sidebar-primary" in printed and "display: none" in printed


def _cells(name: str) -> list[dict[str, Any]]:
    return json.loads((NOTEBOOKS / name).read_text(encoding="utf-8"))["cells"]


def _tags(cell: dict[str, Any]) -> set[str]:
    return set(cell["metadata"].get("tags", []))


def _hidden(cell: dict[str, Any]) -> dict[str, Any]:
    return cell["metadata"].get("jupyter", {})


def test_exercise_hints_and_solutions_are_hidden_in_plain_jupyterlab() -> None:
    cells = _cells("08_exercises.ipynb")
    hints = [
        c
        for c in cells
        if c["cell_type"] == "markdown" and ":class: dropdown" in "".join(c["source"])
    ]
    solutions = [c for c in cells if "hide-output" in _tags(c)]
    assert len(hints) == 3 and len(solutions) == 4
    for cell in hints:
        assert _hidden(cell).get("source_hidden") is True
    for cell in solutions:
        assert _hidden(cell) == {"source_hidden": True, "outputs_hidden": True}
    # nothing else is collapsed: the questions and the refused answers' messages show
    hidden = [c for c in cells if _hidden(c)]
    assert len(hidden) == len(hints) + len(solutions)


def test_refused_answers_show_before_the_hidden_solution() -> None:
    cells = _cells("08_exercises.ipynb")
    sources = ["".join(c["source"]) for c in cells]
    check = next(i for i, s in enumerate(sources) if "lesson.check_predictions(" in s)
    solution = next(i for i, s in enumerate(sources) if "lesson.solution_table(" in s)
    assert check < solution and not _hidden(cells[check])
    assert "problems_markdown" in sources[check]
    assert "json.loads" not in "".join(sources)  # the text is read by check_predictions


def test_toy_world_code_hidden_in_the_book_is_hidden_in_jupyterlab() -> None:
    cells = _cells("00_toyworld.ipynb")
    folded = [c for c in cells if "hide-input" in _tags(c)]
    assert folded
    for cell in folded:
        assert _hidden(cell).get("source_hidden") is True


def _key() -> dict[str, dict[str, Any]]:
    from regime_core.data.toyworld import ToyWorldConfig, generate
    from regime_core.teaching import lesson

    toy = list(generate(ToyWorldConfig(n_questions=40)))
    questions = lesson.exercise_questions(toy, None, 5, seed=0)
    return lesson.answer_key_numbers(questions, lesson.solution_table(questions))


def test_the_worksheet_shows_every_question_and_never_its_answer() -> None:
    from regime_book.teaching import worksheet

    key = _key()
    box = worksheet(key)
    text = box.astext()
    items = [n for n in box.children if "regime-worksheet-item" in n.get("classes", [])]
    assert len(items) == len(key)
    for label, row in key.items():
        assert f"{label}. {row['question']}" in text and row["bridge"] in text
        assert row["reason"] not in text
    assert text.count("\u2610 Q-dominant") == len(key)


def test_the_answer_key_gives_each_regime_with_its_reason() -> None:
    from docutils import nodes

    from regime_book.teaching import answer_key

    key = _key()
    items = list(answer_key(key).findall(nodes.list_item))
    assert len(items) == len(key)
    for item, (label, expected) in zip(items, key.items(), strict=True):
        p1, p2 = ("yes" if expected[p] else "no" for p in ("p1", "p2"))
        assert item.astext() == (
            f"{label}: {expected['regime']} (P1 {p1}, P2 {p2}). {expected['reason']}"
        )
