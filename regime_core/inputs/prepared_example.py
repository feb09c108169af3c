"""The prepared example, declared: one line of ``<work>/prepared/<dataset>.jsonl``.

``regime data prepare`` writes each canonical :class:`regime_core.schema.Example` as one JSON
object (``Example.to_dict``); :func:`regime_core.data.prepared.read_example` reads it back
through :data:`EXAMPLE` and keeps only what a declaration cannot say: the references into the
pool and the relation sentence's range.
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
from regime_core.schema import HOP_ORDER_RULES, RELATION_SOURCES, SPLITS

PASSAGE = Format(
    "a prepared passage",
    (
        Field("pid", Id(), meaning="the passage's id (content-addressed for the known datasets)"),
        Field("title", Text(blank=True), meaning="its title"),
        Field("sentences", Items(Text()), meaning="its sentences, stripped of edge whitespace"),
    ),
)

EXAMPLE = Format(
    "a prepared example",
    (
        # a question id is checked where it becomes a TREC column (retrieval.trec.check_trec_id)
        Field("id", Text(), meaning="the question's id in its dataset"),
        Field("dataset", Text(), meaning="the dataset the example belongs to"),
        Field("split", Choice(SPLITS), meaning="its split"),
        Field("native_type", Text(), meaning="the dataset's own question type"),
        Field("question", Text(), meaning="the question"),
        Field("answer", Text(blank=True), meaning="the answer"),
        Field("answer_aliases", Items(Text(blank=True)), meaning="other forms of the answer"),
        Field("pool", Items(Nested(PASSAGE)), meaning="the candidate passages"),
        Field("bridge_pid", Id(), meaning="the hop-1 (bridge) passage's pid"),
        Field("target_pid", Id(), meaning="the hop-2 (target) passage's pid"),
        Field("gold_pids", Items(Id()), meaning="the gold passages' pids"),
        Field("hop_order_rule", Choice(tuple(HOP_ORDER_RULES)), meaning="how hops were ordered"),
        Field("parallel", Flag(), meaning="a comparison: no hop order exists"),
        Field("hop2_entity", Text(blank=True), meaning="the linking entity as it is mentioned"),
        Field("hop2_aliases", Items(Text(blank=True)), meaning="other names of that entity"),
        Field(
            "relation_sentence",
            Nullable(Number(low=0, integer=True)),
            meaning="the index of the bridge's gold relation sentence B_rel, null for none",
        ),
        Field("relation_source", Choice(RELATION_SOURCES), meaning="where B_rel came from"),
        Field(
            "source_files",
            Items(Text()),
            required=False,
            default=(),
            meaning="the raw files the question was read from",
        ),
    ),
)
