"""The lesson's timings file (``regime-lesson-timings/1``, ``book/start/lesson_timings.json``),
declared.

:func:`regime_core.teaching.plan.load_timings` reads it through :data:`TIMINGS` and keeps only
what a declaration cannot say: a measurement for every step the lesson plan waits on. Both
objects are open: ``benchmarks/bench_lesson.py`` also writes the load average around each step
and the setup it timed, which the teachers' page does not show.
"""

from __future__ import annotations

from regime_core.inputs import Choice, Field, Format, Nested, Number, Table, Text

TIMINGS_FORMAT = "regime-lesson-timings/1"

STEP = Format(
    "a measured step",
    (
        Field("command", Text(), meaning="the command, as the teachers' page shows it"),
        Field("seconds", Number(low=0.0, low_open=True), meaning="its wall seconds"),
        Field(
            "note",
            Text(blank=True),
            required=False,
            default="",
            meaning="what was special about the run (a first run that fills the embedding store)",
        ),
    ),
    closed=False,
)

TIMINGS = Format(
    TIMINGS_FORMAT,
    (
        Field("format", Choice((TIMINGS_FORMAT,)), meaning="the format and its version"),
        Field("measured", Text(), meaning="when the steps were measured"),
        Field("machine", Text(), meaning="where: the cores, the load, the profile"),
        Field(
            "steps",
            Table(Nested(STEP), min_items=1),
            meaning="each measured step by its key (the keys the lesson plan names)",
        ),
    ),
    closed=False,
)
