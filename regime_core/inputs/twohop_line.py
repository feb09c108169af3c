"""The ``regime-twohop/1`` line, declared: each field's kind, default and meaning.

:func:`regime_core.data.twohop.read_twohop` reads every line through :data:`LINE` and keeps
only what a declaration cannot say: a default that depends on ``parallel``, a passage's one body
(``sentences`` or ``text``), the references inside a line and across lines. The module
docstring of :mod:`regime_core.data.twohop` and the book's page "Your own data" describe the
format as a whole.
"""

from __future__ import annotations

from regime_core.inputs import (
    Choice,
    Field,
    Flag,
    Format,
    Id,
    Items,
    Nullable,
    Number,
    Record,
    Text,
)
from regime_core.schema import HOP_ORDER_RULES, RELATION_SOURCES, SPLITS
from regime_core.text import MAX_TEXT_CHARS

FORMAT = "regime-twohop/1"

PASSAGE = Format(
    f"a {FORMAT} passage",
    (
        Field("id", Id(), meaning="the passage's id, naming one title and text in the file"),
        Field("title", Text(), meaning="the passage's title"),
        Field(
            "sentences",
            Items(Text(), min_items=1),
            required=False,
            meaning="its sentences (or `text`, exactly one of the two)",
        ),
        Field(
            "text",
            Text(max_chars=MAX_TEXT_CHARS),
            required=False,
            meaning="its text, which the built-in splitter splits (or `sentences`)",
        ),
    ),
)

B_REL = Format(
    "b_rel",
    (
        Field(
            "sentence",
            Number(integer=True),
            meaning="the index (0-based) of the relation sentence among the bridge's sentences",
        ),
        Field(
            "source",
            Choice(tuple(s for s in RELATION_SOURCES if s != "none")),
            required=False,
            default="given",
            meaning="where the sentence came from",
        ),
    ),
)

LINE = Format(
    FORMAT,
    (
        Field("format", Choice((FORMAT,)), meaning="the format and its version"),
        Field("id", Id(), meaning="the question's id, unique in the file"),
        Field("split", Choice(SPLITS), False, SPLITS[0], "the split the question belongs to"),
        Field(
            "native_type",
            Text(),
            required=False,
            meaning="the dataset's own question type (default: comparison when parallel, "
            "else bridge)",
        ),
        Field("question", Text(), meaning="the question"),
        Field("answer", Text(blank=True), meaning="the answer"),
        Field("answer_aliases", Items(Text()), False, (), "other forms of the answer"),
        Field("pool", Items(Record(PASSAGE), min_items=2), meaning="the candidate passages"),
        Field("bridge_id", Id(), meaning="the id of the hop-1 (bridge) passage of the pool"),
        Field("target_id", Id(), meaning="the id of the hop-2 (target) passage of the pool"),
        Field(
            "gold_ids",
            Nullable(Items(Id())),
            required=False,
            meaning="the gold passages' ids, distinct, all in the pool (default: the bridge "
            "and the target)",
        ),
        Field(
            "parallel",
            Flag(),
            False,
            False,
            "a comparison: both entities are named, no hop order exists",
        ),
        Field(
            "hop_order_rule",
            Choice(tuple(HOP_ORDER_RULES)),
            required=False,
            meaning="how the hop order was decided (default: parallel when parallel, else given)",
        ),
        Field(
            "hop2_entity",
            Nullable(Text()),
            required=False,
            meaning="the linking entity as it is mentioned (default: the target's title)",
        ),
        Field("hop2_aliases", Items(Text()), False, (), "other names of the hop-2 entity"),
        Field(
            "b_rel",
            Nullable(Record(B_REL)),
            required=False,
            meaning="the gold relation sentence of the bridge, null for none",
        ),
    ),
)
