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
    Nested,
    Nullable,
    Number,
    Text,
)
from regime_core.limits import MAX_TEXT_CHARS
from regime_core.schema import HOP_ORDER_RULES, RELATION_SOURCES, SPLITS

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
        Field(
            "id",
            Id(),
            meaning="the question's id, unique in the file (it becomes a column of TREC run files)",
        ),
        Field("split", Choice(SPLITS), False, SPLITS[0], "its split (the notebooks read `dev`)"),
        Field(
            "native_type",
            Text(),
            required=False,
            meaning="your dataset's own question type (default: `comparison` when `parallel`, "
            "else `bridge`)",
        ),
        Field("question", Text(), meaning="the question"),
        Field("answer", Text(blank=True), meaning="the answer"),
        Field("answer_aliases", Items(Text()), False, (), "other forms of the answer"),
        Field(
            "pool",
            Items(Nested(PASSAGE), min_items=2),
            meaning="the candidate passages, at least two (below)",
        ),
        Field("bridge_id", Id(), meaning="the `id` of the hop-1 passage, the bridge, in `pool`"),
        Field(
            "target_id",
            Id(),
            meaning="the `id` of the hop-2 passage, the target, in `pool`; not the bridge",
        ),
        Field(
            "gold_ids",
            Nullable(Items(Id())),
            required=False,
            meaning="the ids of the gold passages, distinct, all in `pool` (default: "
            "`[bridge_id, target_id]`)",
        ),
        Field(
            "parallel", Flag(), False, False, "a comparison: both entities are named, no hop order"
        ),
        Field(
            "hop_order_rule",
            Choice(tuple(HOP_ORDER_RULES)),
            required=False,
            meaning="how the hop order was decided, a rule of the page 'Our reading of the "
            "paper' (default: `parallel` when `parallel`, else `given`)",
        ),
        Field(
            "hop2_entity",
            Nullable(Text()),
            required=False,
            meaning="the linking entity as it is mentioned, when you know it (default: the "
            "target's title)",
        ),
        Field("hop2_aliases", Items(Text()), False, (), "other names of the hop-2 entity"),
        Field(
            "b_rel",
            Nullable(Nested(B_REL)),
            required=False,
            meaning="the gold relation sentence of the bridge, `null` for none (default: "
            "`null`; with `--fill-b-rel`, the built-in rule's)",
        ),
    ),
)
