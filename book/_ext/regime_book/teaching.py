"""The teachers' page: the lesson plan with measured times, a printable worksheet and an answer
key with the reason for each answer.

Directive ``regime-lesson-plan`` (option ``timings``: the measurement file, relative to the
page): :data:`regime_core.teaching.plan.LESSON_PLAN`, one block per activity with its minutes
and, where it waits on a command, the command's measured time.

Directives ``regime-worksheet`` and ``regime-answer-key``: exercise 1's questions as the
exercises run recorded them (``answer_key`` in its record), the first with blanks to fill in, the
second with the regime, P1, P2 and the reason, both as lists (whole on a phone). A page that
holds either links the print style sheet ``regime-teaching.css``, which prints the page without
the book's navigation, and the key on a page of its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

from regime_book.records import RECORD_PROBLEMS, page_record, warn_problem
from regime_book.tables import code_spans
from regime_core.teaching.lesson import ANSWERS

#: The run whose record holds exercise 1's answer key.
EXERCISES_RUN = "exercises"
TEACHING_CSS = "regime-teaching.css"  # in static/ beside this module
_PRINT_CLASSES = ("regime-worksheet", "regime-answer-key")


def _answer_key(directive: SphinxDirective) -> dict[str, Any] | None:
    try:
        key = page_record(directive.env, EXERCISES_RUN).node("answer_key")
    except RECORD_PROBLEMS as err:
        warn_problem(directive.env, "the exercises' answer key", err, directive.get_location())
        return None
    return dict(key)


class LessonPlanDirective(SphinxDirective):
    """The lesson plan, with the measured time of each step a block waits on."""

    option_spec: ClassVar[dict[str, Any]] = {"timings": directives.unchanged_required}

    def run(self) -> list[nodes.Node]:
        from regime_core.teaching.plan import (
            LESSON_MINUTES,
            duration_words,
            load_timings,
            schedule,
        )

        relative = self.options.get("timings")
        if not relative:
            raise self.error("regime-lesson-plan needs the option :timings: (a JSON file)")
        path = Path(self.env.srcdir) / Path(self.env.docname).parent / relative
        self.env.note_dependency(str(path))
        try:
            timings = load_timings(path)
            blocks = []
            for start, end, activity in schedule():
                steps = [timings.steps[key] for key in activity.timed_steps]
                block = nodes.container(classes=["regime-lesson-block"])
                head = nodes.paragraph()
                head += nodes.strong(text=f"Minutes {start} to {end}: {activity.title}. ")
                head.extend(code_spans(activity.what))
                block += head
                block += nodes.paragraph(
                    "", "", nodes.emphasis(text="Material: "), *code_spans(activity.material)
                )
                if steps:
                    ran = "; ".join(
                        f"`{s.command}`"
                        + (f" ({s.note})" if s.note else "")
                        + f": {duration_words(s.seconds)}"
                        for s in steps
                    )
                    block += nodes.paragraph(
                        "", "", nodes.emphasis(text="Measured: "), *code_spans(f"{ran}.")
                    )
                blocks.append(block)
        except ValueError as err:
            warn_problem(self.env, "the lesson plan", err, self.get_location())
            return []
        note = nodes.paragraph(
            text=f"The lesson lasts {LESSON_MINUTES} minutes. Runs measured {timings.measured} "
            f"on {timings.machine}; a room of laptops runs them side by side, so start the "
            "notebooks before the block that uses them."
        )
        box = nodes.container(classes=["regime-lesson-plan"])
        box.extend(blocks)
        return [box, note]


def worksheet(key: Mapping[str, Mapping[str, Any]]) -> nodes.container:
    """The worksheet: per question of the answer key its label, the question, the hop-2 entity
    and the bridge, with boxes to tick and a line for why (never the answer)."""
    box = nodes.container(classes=["regime-worksheet"])
    box += nodes.paragraph(text="Name: ____________________    Date: ____________")
    for label, row in key.items():
        item = nodes.container(classes=["regime-worksheet-item"])
        para = nodes.paragraph()
        para += nodes.strong(text=f"{label}. ")
        para += nodes.emphasis(text=str(row["question"]))
        item += para
        item += nodes.paragraph(text=f"Hop-2 entity: {row['hop2_entity']}")
        item += nodes.paragraph(text=f"Bridge ({row['bridge_title']}): {row['bridge']}")
        ticks = " \u00a0\u00a0 ".join(f"\u2610 {regime}" for regime in ANSWERS)
        item += nodes.paragraph(text=ticks, classes=["regime-worksheet-answer"])
        item += nodes.paragraph(
            text="Why: ____________________________",
            classes=["regime-worksheet-answer"],
        )
        box += item
    return box


def answer_key(key: Mapping[str, Mapping[str, Any]]) -> nodes.container:
    """The answer key: per question the regime, P1, P2 and the reason, as recorded; one item
    per question (a list, not a table, so that a phone shows it whole)."""
    box = nodes.container(classes=["regime-answer-key"])
    items = nodes.bullet_list()
    for label, row in key.items():
        para = nodes.paragraph()
        para += nodes.strong(text=f"{label}: {row['regime']}")
        p1 = "yes" if row["p1"] else "no"
        p2 = "yes" if row["p2"] else "no"
        para += nodes.Text(f" (P1 {p1}, P2 {p2}). {row['reason']}")
        items += nodes.list_item("", para)
    box += items
    return box


class WorksheetDirective(SphinxDirective):
    """Exercise 1's questions with blanks for the regime and the reason (:func:`worksheet`)."""

    def run(self) -> list[nodes.Node]:
        key = _answer_key(self)
        return [] if key is None else [worksheet(key)]


class AnswerKeyDirective(SphinxDirective):
    """Exercise 1's key with the reason for each answer (:func:`answer_key`)."""

    def run(self) -> list[nodes.Node]:
        key = _answer_key(self)
        return [] if key is None else [answer_key(key)]


def teaching_assets(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """Link the print style sheet only on pages that hold a worksheet or an answer key."""
    body = context.get("body", "")
    if any(f'class="{name}' in body for name in _PRINT_CLASSES):
        app.add_css_file(TEACHING_CSS)
