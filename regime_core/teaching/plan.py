"""The 90-minute lesson on the two regimes: its activities, and the measured times of what runs
in it.

The plan is data (:data:`LESSON_PLAN`); the teachers' page renders it
(``regime_book.teaching``). The machine times come from a measurement file
(:func:`load_timings`), written by timing the commands it names, never typed into the page.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from regime_core.inputs.lesson_timings import TIMINGS
from regime_core.strict_json import read_json_file

#: The lesson's length in minutes; the plan's activities fill it exactly.
LESSON_MINUTES = 90


@dataclass(frozen=True)
class Activity:
    """One block of the lesson: how long it lasts, what the class does, with what, and the
    measured steps (keys of the timings file) it waits on, if any."""

    minutes: int
    title: str
    what: str
    material: str
    timed_steps: tuple[str, ...] = ()


LESSON_PLAN: tuple[Activity, ...] = (
    Activity(
        10,
        "Two questions, two regimes",
        "The teacher reads one Q-dominant and one B-dominant question of the toy world aloud "
        "and asks where the name the second passage is about appears. Define P1 and P2 on the "
        "board.",
        "The toy-world page, its first section.",
    ),
    Activity(
        20,
        "The toy world, run live",
        "Pairs open the toy-world notebook, read the four queries' hit rates, then change one "
        "knob (alpha or the distractors' similarity) and rerun, predicting the change first. "
        "The first run is the slow one (it embeds the toy world): start it during the first "
        "block.",
        "`notebooks/00_toyworld.ipynb` (Binder, or a local install).",
        ("toyworld", "toyworld_rerun"),
    ),
    Activity(
        10,
        "Exercise 1 on paper",
        "Each student decides Q-dominant, B-dominant or neither for every question of the "
        "worksheet and writes one line of why.",
        "The printed worksheet below.",
    ),
    Activity(
        10,
        "Exercise 1 checked",
        "Students type their answers into `my_predictions` and rerun: the notebook shows a "
        "score, the reason for each wrong answer, and refuses answers that are not Q, B or "
        "neither. Discuss the questions most got wrong with the answer key.",
        "`notebooks/08_exercises.ipynb`; the answer key below.",
        ("exercises",),
    ),
    Activity(
        10,
        "Exercises 2 and 3",
        "Predict, then open the solutions: what alpha trades between the regimes, and what "
        "removing the relation sentence does.",
        "The same notebook (already run).",
    ),
    Activity(
        20,
        "Annotation in pairs",
        "The teacher prints a sheet of real questions; two students label P1 and P2 "
        "separately, then compare with each other and with the matcher by Cohen's kappa and "
        "discuss every disagreement.",
        "`regime annotate sample hotpotqa --n 10 --out sheet.csv`, then "
        "`regime annotate kappa alice.csv bob.csv`.",
        ("annotate_sample", "annotate_kappa"),
    ),
    Activity(
        10,
        "The router, and where it fails",
        "Students type a question of their own into the router page and explain its "
        "decision from the features; then they try the page's failure cases.",
        "Route your own question (the router chapter).",
    ),
)


@dataclass(frozen=True)
class StepTiming:
    """One measured step: the command, its wall seconds, and what was special about the run
    (``note``, e.g. a first run that fills the embedding store; empty when nothing)."""

    key: str
    command: str
    seconds: float
    note: str = ""


@dataclass(frozen=True)
class LessonTimings:
    """A timings file: when and where the steps were measured, and each step."""

    measured: str
    machine: str
    steps: dict[str, StepTiming]


def schedule(plan: Sequence[Activity] = LESSON_PLAN) -> list[tuple[int, int, Activity]]:
    """Each activity with its start and end minute (the plan fills :data:`LESSON_MINUTES`
    exactly: ``tests/test_teaching_plan.py``).

    >>> [(start, end) for start, end, _ in schedule()][:3]
    [(0, 10), (10, 30), (30, 40)]
    """
    out, start = [], 0
    for activity in plan:
        out.append((start, start + activity.minutes, activity))
        start += activity.minutes
    return out


def parse_timings(data: Mapping[str, Any], where: str) -> LessonTimings:
    """A timings file's content, read through :data:`~regime_core.inputs.lesson_timings.TIMINGS`
    (an :class:`~regime_core.inputs.InputError` naming ``where`` and the field)."""
    read = TIMINGS.read(data, where=where)
    steps = {
        key: StepTiming(key, step["command"], step["seconds"], step["note"])
        for key, step in read["steps"].items()
    }
    return LessonTimings(read["measured"], read["machine"], steps)


def load_timings(path: Path, plan: Sequence[Activity] = LESSON_PLAN) -> LessonTimings:
    """The timings file at ``path``, checked, and holding every step the plan waits on."""
    timings = parse_timings(read_json_file(path), str(path))
    missing = sorted({s for a in plan for s in a.timed_steps} - set(timings.steps))
    if missing:
        raise ValueError(
            f"{path}: no measurement for the plan's steps {missing}; time them and add them"
        )
    return timings


def duration_words(seconds: float) -> str:
    """Seconds as a reader reads them.

    >>> duration_words(4.2), duration_words(75), duration_words(600)
    ('4 s', '1 min 15 s', '10 min')
    """
    whole = round(seconds)
    if whole < 60:
        return f"{max(whole, 1)} s"
    minutes, rest = divmod(whole, 60)
    return f"{minutes} min" if rest == 0 else f"{minutes} min {rest} s"
