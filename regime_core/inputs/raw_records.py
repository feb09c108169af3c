"""The records of the three raw datasets, declared: HotpotQA (original and IRCoT-processed),
2WikiMultiHopQA and MuSiQue, one :class:`~regime_core.inputs.Format` per format of
:data:`regime_core.data.readers.FORMATS`.

The formats are open (the files carry fields the readers do not use: ``level``, MIGRES'
retrieval output, Wikidata ids). :mod:`regime_core.data.readers` reads each record through its
format and keeps only what a declaration cannot say: the references (a supporting title in the
pool, a sentence index in range, a decomposition step's paragraph) and an IRCoT record's one
answer span at least. The data README (``shared/data/README.md``) describes the files.
"""

from __future__ import annotations

from regime_core.inputs import Field, Flag, Format, Id, Items, Nested, Nullable, Number, Text, Tuple
from regime_core.limits import MAX_TEXT_CHARS

#: a question's id: a string or an integer (read as its decimal string), without control
#: characters, since it names the question in every output
QUESTION_ID = Id(spaces=True, integer=True)
#: every string of a raw record: possibly blank, within the sentence splitter's limit
#: (spaCy's ``max_length``; no real passage is near it)
RAW_TEXT = Text(blank=True, max_chars=MAX_TEXT_CHARS)
INDEX = Number(integer=True)

_SENTENCE_POOL = Items(Tuple((RAW_TEXT, Items(RAW_TEXT))))
_SUPPORTING_FACTS = Items(Tuple((RAW_TEXT, INDEX)))


def _original(name: str, *extra: Field, context_required: bool = True) -> Format:
    return Format(
        name,
        (
            Field("_id", QUESTION_ID, meaning="the question's id"),
            Field("question", RAW_TEXT, meaning="the question"),
            Field("answer", RAW_TEXT, meaning="the gold answer"),
            Field("type", RAW_TEXT, meaning="the dataset's question type"),
            Field(
                "context",
                _SENTENCE_POOL,
                required=context_required,
                meaning="the pool: [title, [sentence, ...]] per paragraph",
            ),
            Field(
                "supporting_facts",
                _SUPPORTING_FACTS,
                required=context_required,
                meaning="[title, sentence index] per supporting sentence",
            ),
            *extra,
        ),
        closed=False,
    )


HOTPOT_ORIGINAL = _original("a HotpotQA record")

TWOWIKI_ORIGINAL = _original(
    "a 2WikiMultiHopQA record",
    Field(
        "evidences",
        Items(Items(RAW_TEXT, length=3)),
        meaning="the reasoning triples [subject, relation, object], in chain order",
    ),
    # MIGRES rows carrying qa_pairs/explanation have no pool: read, then excluded by reason
    context_required=False,
)

_IRCOT_PARAGRAPH = Format(
    "an IRCoT paragraph",
    (
        Field("title", RAW_TEXT, meaning="the paragraph's title"),
        Field("paragraph_text", RAW_TEXT, meaning="its sentences joined by spaces"),
        Field("is_supporting", Flag(), meaning="whether it is a gold paragraph"),
    ),
    closed=False,
)

HOTPOT_IRCOT = Format(
    "an IRCoT HotpotQA record",
    (
        Field("question_id", QUESTION_ID, meaning="the HotpotQA _id"),
        Field("question_text", RAW_TEXT, meaning="the question"),
        Field(
            "answers_objects",
            Items(
                Nested(
                    Format(
                        "an IRCoT answer",
                        (Field("spans", Items(RAW_TEXT), meaning="the answer's spans"),),
                        closed=False,
                    )
                )
            ),
            meaning="the answers; the first span is the answer, the others its aliases",
        ),
        Field("contexts", Items(Nested(_IRCOT_PARAGRAPH)), meaning="the pool"),
    ),
    closed=False,
)

_MUSIQUE_PARAGRAPH = Format(
    "a MuSiQue paragraph",
    (
        Field("idx", INDEX, meaning="the paragraph's index, which decomposition steps name"),
        *_IRCOT_PARAGRAPH.fields,
    ),
    closed=False,
)

_MUSIQUE_STEP = Format(
    "a MuSiQue decomposition step",
    (
        Field("question", RAW_TEXT, meaning="the sub-question (#k: step k's answer)"),
        Field("answer", RAW_TEXT, meaning="its answer"),
        Field(
            "paragraph_support_idx",
            Nullable(INDEX),
            meaning="the idx of the paragraph that supports the step",
        ),
    ),
    closed=False,
)

MUSIQUE = Format(
    "a MuSiQue record",
    (
        Field("id", QUESTION_ID, meaning="the question's id (its prefix gives the hop count)"),
        Field("question", RAW_TEXT, meaning="the question"),
        Field("answer", RAW_TEXT, meaning="the answer"),
        Field("answer_aliases", Items(RAW_TEXT), False, (), "alternative answers"),
        Field("answerable", Flag(), False, True, "whether the question is answerable"),
        Field("paragraphs", Items(Nested(_MUSIQUE_PARAGRAPH)), meaning="the pool"),
        Field(
            "question_decomposition",
            Items(Nested(_MUSIQUE_STEP)),
            meaning="the steps, in hop order",
        ),
    ),
    closed=False,
)

#: each raw format (a key of :data:`regime_core.data.readers.FORMATS`) and its declaration
RAW_RECORDS: dict[str, Format] = {
    "hotpot_original": HOTPOT_ORIGINAL,
    "hotpot_ircot": HOTPOT_IRCOT,
    "2wiki_original": TWOWIKI_ORIGINAL,
    "musique": MUSIQUE,
}
