"""``expected_numbers.yml``, declared: the numbers of the ``quick`` profile frozen with their
tolerances (written by :func:`regime_core.runner.expected.dump_expected`, read back by
:func:`~regime_core.runner.expected.load_expected`, which reads each entry on its own so that a
refusal names its run and key)."""

from __future__ import annotations

from regime_core.inputs import (
    Choice,
    Either,
    Field,
    Flag,
    Format,
    Number,
    Object,
    Table,
    Text,
    Tuple,
)
from regime_core.inputs.run_declarations import PROFILES, RUN_ID

EXPECTED_SCHEMA = "regime-expected/1"
EXPECTED_PROFILE = "quick"
"""the profile whose numbers expected_numbers.yml freezes"""
#: a dotted record key
FROZEN_KEY = Text()
#: what a record's numbers hold at a leaf, finite (records hold finite numbers only)
FROZEN_VALUE = Either((Flag(), Number(integer=True), Number(), Text(blank=True)))
#: finite: an infinite tolerance would switch the check off
TOLERANCE = Number(low=0)
#: an entry written with its own tolerance (a bare value takes its rule's)
FROZEN_PAIR = Tuple((FROZEN_VALUE, TOLERANCE))

EXPECTED_NUMBERS = Format(
    "expected numbers",
    (
        Field("schema", Choice((EXPECTED_SCHEMA,)), meaning="the file format's name and version"),
        Field("profile", Choice(PROFILES), required=False, default=EXPECTED_PROFILE,
              meaning="the profile whose records were frozen"),
        Field("runs", Table(Object(), key=RUN_ID),
              meaning="per run id, per dotted record key, a value or [value, tolerance] (each "
                      "read on its own, its message naming its key)"),
    ),
)  # fmt: skip
