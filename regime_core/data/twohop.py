"""``regime-twohop/1``: two-hop examples of one's own, one JSON object per line.

``regime data prepare --jsonl FILE --name NAME`` reads a file in this format into the prepared
store beside the three known datasets (:func:`regime_core.data.custom.prepare_jsonl`), after
which every command and notebook accepts ``NAME`` as a dataset; ``regime data export DATASET
--jsonl FILE`` writes any prepared dataset, the toy world included, in it
(:func:`regime_core.data.custom.export_jsonl`). The book's page "Your own data" shows it with
an example; ``tests/fixtures/twohop/small.jsonl`` is a small file of invented text.

**The format, version 1.** A UTF-8 text file (optionally gzip, bzip2 or xz compressed), one JSON
object per line; lines holding only whitespace are skipped and counted (``blank_lines``). Every
line states the format itself, ``"format": "regime-twohop/1"`` (there is no header line), so
lines can be concatenated, shuffled or filtered with ``grep`` and stay readable. A line's fields
are those of the canonical example (:class:`regime_core.schema.Example`), except that passages
carry an ``id`` (the canonical ``pid``), references to them end in ``_id``/``_ids``, and the
gold relation sentence is one object ``b_rel``. The dataset is the ``NAME`` given to
``prepare``, not a field.

======================  ========  ======================================================  ========
field                   required  value                                                   default
======================  ========  ======================================================  ========
``format``              yes       ``"regime-twohop/1"``
``id``                  yes       the question's id: unique in the file, a non-empty
                                  string without whitespace or control characters
``question``            yes       the question (a non-blank string)
``answer``              yes       the answer (a string)
``pool``                yes       the candidate passages, at least two: objects
                                  ``{"id", "title", "sentences"}`` (below)
``bridge_id``           yes       the ``id`` of the hop-1 (bridge) passage of ``pool``
``target_id``           yes       the ``id`` of the hop-2 (target) passage of ``pool``,
                                  not the bridge
``split``               no        ``"dev"`` or ``"train"``                                ``dev``
``native_type``         no        the dataset's own question type (non-blank)             note 1
``answer_aliases``      no        other forms of the answer (non-blank strings)           ``[]``
``gold_ids``            no        the gold passages' ids, distinct, all in ``pool``       note 2
``parallel``            no        ``true`` for a comparison: both entities are named,     ``false``
                                  no hop order exists
``hop_order_rule``      no        how the hop order was decided, a key of                 note 3
                                  ``schema.HOP_ORDER_RULES``
``hop2_entity``         no        the linking entity as it is mentioned, when known       note 4
``hop2_aliases``        no        other names of the hop-2 entity (non-blank strings)     ``[]``
``b_rel``               no        the gold relation sentence of the bridge, ``null`` or   ``null``
                                  ``{"sentence": INDEX, "source": SOURCE}`` (below)
======================  ========  ======================================================  ========

Notes: (1) ``"comparison"`` when ``parallel``, else ``"bridge"``; (2) ``[bridge_id,
target_id]``; (3) ``"parallel"`` when ``parallel``, else ``"given"``; (4) the target passage's
title.

A passage is ``{"id": ID, "title": TITLE, "sentences": [S, ...]}`` or ``{"id": ID, "title":
TITLE, "text": TEXT}``, whose text the built-in splitter splits into sentences
(:func:`regime_core.data.canonical.spacy_sentences`, MuSiQue's; it does not cut at an initial
or a known abbreviation, "Michael J. Fox", "St. Louis"); exactly one of the two. ``id`` follows
the rule of
question ids and is *stable*: wherever it appears in the file it names the same title and the
same text, its sentences joined by spaces with runs of whitespace collapsed (a second passage
under one id is an error, since retrieval keeps one passage per id); only the split into
sentences may differ from line to line, as it does in the known datasets, since ``b_rel``
counts the line's own sentences. ``title`` is a non-blank string; ``sentences`` is a
non-empty list of non-blank strings; ``text`` a non-blank string.
Titles, sentences, the question, the answer and every name are stripped of edge whitespace, as
the readers of the known datasets strip them.

In ``b_rel``, ``sentence`` is an index (0-based, an integer) into the bridge's ``sentences``
and ``source`` says where it came from, a value of ``schema.RELATION_SOURCES`` other than
``"none"`` (default ``"given"``: the file marks it). Without ``b_rel`` an example has no gold
``B_rel`` (the arms that need one leave the question out, counted; the regime predicates find
the relation sentence by the hop-2 entity's mention), unless it is read with ``fill_b_rel``
(``prepare --jsonl ... --fill-b-rel``): a line that leaves ``b_rel`` out then gets the built-in
rule's sentence (:func:`fill_relation`: the first bridge sentence that mentions
``hop2_entity``, the target's title, the title without a trailing parenthetical or a
``hop2_aliases`` name; source ``"entity_mention"``), and a line that gives ``b_rel``, ``null``
included, keeps it. What was filled is counted (:data:`FILL_COUNTS`, the manifest's
``filled``).

**Reading rules.** JSON is read strictly (:func:`regime_core.strict_json.parse_json`): a duplicate
key, ``NaN`` or ``Infinity``, a lone surrogate or deep nesting is an error. So is a field the
format does not define (a misspelt optional field would otherwise be dropped silently), a
missing required field, a wrongly typed value (``"parallel": "yes"``, ``"sentence": 1.0``; no
value is converted), and an unknown ``format``. Every error names the file, the line and the
field, e.g. ``mine.jsonl, line 7 (id 'q7'): field 'pool[2].sentences[0]': must be a non-blank
string``.

Broken references are errors too, or, with ``lenient`` (``prepare --jsonl ... --lenient``), an
exclusion of the line, counted by reason (:data:`EXCLUSION_REASONS`) and listed with its line
in the manifest: a ``bridge_id``, ``target_id`` or gold id absent from the pool, the same
passage as bridge and target, an id used twice in one pool, a ``b_rel.sentence`` out of
range, a question id used by an earlier line, and a passage id an earlier line gave another
title or text. Each line ends in exactly one of the two: ``records == two_hop + excluded``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from regime_core.data.canonical import mention_relation, relation_names, spacy_sentences
from regime_core.data.containers import decompress
from regime_core.inputs import json_kind
from regime_core.schema import (
    HOP_ORDER_RULES,
    RELATION_SOURCES,
    SPLITS,
    Example,
    Passage,
    dataset_name_problem,
    id_problem,
)
from regime_core.strict_json import JSONProblem, json_path, parse_json
from regime_core.text import MAX_TEXT_CHARS

FORMAT = "regime-twohop/1"

#: The fields of a line, in the order :func:`regime_core.data.custom.example_line` writes them,
#: with whether each is required (the module docstring says what each holds and its default).
FIELDS: dict[str, bool] = {
    "format": True,
    "id": True,
    "split": False,
    "native_type": False,
    "question": True,
    "answer": True,
    "answer_aliases": False,
    "pool": True,
    "bridge_id": True,
    "target_id": True,
    "gold_ids": False,
    "parallel": False,
    "hop_order_rule": False,
    "hop2_entity": False,
    "hop2_aliases": False,
    "b_rel": False,
}
PASSAGE_FIELDS: tuple[str, ...] = ("id", "title", "sentences", "text")
#: a passage gives exactly one of these: its sentences, or its text, which the built-in
#: splitter splits (:func:`regime_core.data.canonical.spacy_sentences`)
PASSAGE_BODIES: tuple[str, ...] = ("sentences", "text")
#: What :func:`read_twohop` filled with the built-in rules, counted (the manifest's ``filled``):
FILL_COUNTS: dict[str, str] = {
    "passages_split": "passages given as text, split into sentences by the built-in splitter",
    "b_rel_filled": "lines without b_rel given the built-in B_rel (fill_b_rel)",
    "b_rel_not_found": "lines without b_rel whose bridge has no sentence naming the hop-2 "
    "entity (fill_b_rel): b_rel stays null",
}
B_REL_FIELDS: tuple[str, ...] = ("sentence", "source")
#: ``b_rel.source`` when a line gives none
GIVEN_SOURCE = "given"
#: the hop-order rule of a line that gives none and is not parallel
GIVEN_RULE = "given"
#: ``parallel`` lines' rule and default native type
PARALLEL_RULE = "parallel"

#: Why a line is excluded under ``lenient`` reading (strict reading: each is an error).
EXCLUSION_REASONS: dict[str, str] = {
    "not_in_pool": "bridge_id, target_id or a gold id names no passage of the line's pool",
    "same_bridge_and_target": "bridge_id and target_id name the same passage",
    "duplicate_passage_id": "one pool lists a passage id twice",
    "b_rel_out_of_range": "b_rel.sentence is not an index of the bridge's sentences",
    "duplicate_id": "the question id is used by an earlier line (that line is kept)",
    "passage_conflict": "a passage id an earlier line gave another title or text",
}


class LineProblem(ValueError):
    """A bad line: the message names the file, line (and id) and field. ``reason`` is a key of
    :data:`EXCLUSION_REASONS` for a broken reference (which lenient reading excludes), None for
    every other problem (always an error); ``split`` is the line's split when it was read."""

    def __init__(self, message: str, reason: str | None = None, split: str | None = None):
        super().__init__(message)
        self.reason, self.split = reason, split


@dataclass(frozen=True)
class Exclusion:
    """One line left out under lenient reading: its line number, id, split, reason and the
    problem (the message strict reading raises)."""

    line: int
    id: str
    split: str
    reason: str
    problem: str


@dataclass(frozen=True)
class TwoHopRead:
    """What :func:`read_twohop` read from one file: the examples (in line order), the lines
    excluded (lenient reading), the number of records (non-blank lines) and of blank lines,
    and the file's sha256 and size (of its bytes as stored, compressed or not)."""

    examples: tuple[Example, ...]
    excluded: tuple[Exclusion, ...]
    records: int
    blank_lines: int
    sha256: str
    bytes: int
    filled: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FILL_COUNTS, 0))
    """what the built-in rules filled, by :data:`FILL_COUNTS` key (lines prepared only)"""


# --- reading ---------------------------------------------------------------------------------


class _Line:
    """The checks of one line's fields, each failing with a :class:`LineProblem` naming the
    file, line (id, once read) and field."""

    def __init__(self, record: dict[str, Any], where: str) -> None:
        self.record, self.where = record, where
        self.split: str | None = None  # known once the line's split is read

    def fail(
        self, field: str | tuple[str | int, ...], problem: str, reason: str | None = None
    ) -> LineProblem:
        name = field if isinstance(field, str) else json_path(field)
        return LineProblem(f"{self.where}: field {name!r}: {problem}", reason, self.split)

    def get(self, key: str, default: Any = None) -> Any:
        if key not in self.record:
            if FIELDS[key]:
                raise LineProblem(f"{self.where}: missing field {key!r} (required)")
            return default
        return self.record[key]

    def text(self, path: tuple[str | int, ...], value: Any, *, blank: bool = False) -> str:
        if not isinstance(value, str):
            raise self.fail(path, f"must be a string, got {json_kind(value)}")
        if not blank and not value.strip():
            raise self.fail(path, "must be a non-blank string")
        return value.strip()

    def texts(self, key: str) -> tuple[str, ...]:
        value = self.get(key, [])
        if not isinstance(value, list):
            raise self.fail(key, f"must be an array of strings, got {json_kind(value)}")
        return tuple(self.text((key, i), v) for i, v in enumerate(value))

    def ident(self, path: tuple[str | int, ...], value: Any) -> str:
        problem = id_problem(value)
        if problem is not None:
            raise self.fail(path, f"an id {problem}")
        return str(value)

    def choice(self, key: str, value: Any, allowed: Collection[str]) -> str:
        if not isinstance(value, str) or value not in allowed:
            shown = repr(value) if isinstance(value, str) else json_kind(value)
            raise self.fail(key, f"is {shown}, not one of {list(allowed)}")
        return value

    def flag(self, key: str) -> bool:
        value = self.get(key, False)
        if not isinstance(value, bool):
            raise self.fail(key, f"must be true or false, got {json_kind(value)}")
        return value

    def fields(self, obj: Any, path: tuple[str | int, ...], known: Sequence[str]) -> None:
        """``obj`` is an object whose keys are all ``known`` (the required ones present)."""
        if not isinstance(obj, dict):
            raise self.fail(path, f"must be an object, got {json_kind(obj)}")
        unknown = [k for k in obj if k not in known]
        if unknown:
            raise self.fail(
                (*path, unknown[0]), f"is not a field of {FORMAT} here (fields: {list(known)})"
            )


def parse_line_filled(
    record: Any, *, dataset: str, where: str, source: str = "", fill_b_rel: bool = False
) -> tuple[Example, dict[str, int]]:
    """The canonical example of one parsed line (pure) and what the built-in rules filled on it
    (the keys of :data:`FILL_COUNTS`): :class:`LineProblem` naming ``where`` (file and line) and
    the field for every problem the module docstring lists, except the ones across lines
    (:func:`read_twohop` checks those). ``source`` is the example's ``source_files`` entry;
    ``fill_b_rel``: a line without ``b_rel`` gets the built-in one (:func:`fill_relation`).
    ``dataset`` was checked by the caller (once per file)."""
    filled = dict.fromkeys(FILL_COUNTS, 0)
    if not isinstance(record, dict):
        raise LineProblem(f"{where}: expected a JSON object, got {json_kind(record)}")
    line = _Line(record, where)
    unknown = [k for k in record if k not in FIELDS]
    if unknown:
        raise line.fail(unknown[0], f"is not a field of {FORMAT} (fields: {list(FIELDS)})")
    fmt = line.get("format")
    if fmt != FORMAT:
        shown = repr(fmt) if isinstance(fmt, str) else json_kind(fmt)
        raise line.fail("format", f"is {shown}; this version reads {FORMAT!r} only")
    qid = line.ident(("id",), line.get("id"))
    line.where = f"{where} (id {qid!r})"
    split = line.split = line.choice("split", line.get("split", SPLITS[0]), SPLITS)
    parallel = line.flag("parallel")
    native_type = line.text(("native_type",), line.get("native_type", _default_type(parallel)))
    question = line.text(("question",), line.get("question"))
    answer = line.text(("answer",), line.get("answer"), blank=True)
    answer_aliases = line.texts("answer_aliases")
    hop2_aliases = line.texts("hop2_aliases")
    rule = line.choice(
        "hop_order_rule", line.get("hop_order_rule", _default_rule(parallel)), HOP_ORDER_RULES
    )
    pool, filled["passages_split"] = _pool(line)
    bridge_id = line.ident(("bridge_id",), line.get("bridge_id"))
    target_id = line.ident(("target_id",), line.get("target_id"))
    gold = line.get("gold_ids", None)
    if gold is not None and not isinstance(gold, list):
        raise line.fail("gold_ids", f"must be an array of passage ids, got {json_kind(gold)}")
    gold_ids = (
        (bridge_id, target_id)
        if gold is None
        else tuple(line.ident(("gold_ids", i), v) for i, v in enumerate(gold))
    )
    if gold is not None and len(set(gold_ids)) != len(gold_ids):
        raise line.fail("gold_ids", "lists a passage id twice")
    entity = line.get("hop2_entity", None)
    hop2_entity = None if entity is None else line.text(("hop2_entity",), entity)
    relation = _b_rel(line)
    # references: the broken ones are what lenient reading excludes
    by_id: dict[str, Passage] = {}
    for i, passage in enumerate(pool):
        if passage.pid in by_id:
            raise line.fail(
                ("pool", i, "id"),
                f"the pool lists the passage id {passage.pid!r} twice",
                "duplicate_passage_id",
            )
        by_id[passage.pid] = passage
    for key, pid in (("bridge_id", bridge_id), ("target_id", target_id)):
        if pid not in by_id:
            raise line.fail(key, f"{pid!r} is the id of no passage of the pool", "not_in_pool")
    for i, pid in enumerate(gold_ids if gold is not None else ()):
        if pid not in by_id:
            raise line.fail(
                ("gold_ids", i), f"{pid!r} is the id of no passage of the pool", "not_in_pool"
            )
    if bridge_id == target_id:
        raise line.fail(
            "target_id", f"is the bridge passage {bridge_id!r} too", "same_bridge_and_target"
        )
    n_sentences = len(by_id[bridge_id].sentences)
    if relation[0] is not None and not 0 <= relation[0] < n_sentences:
        raise line.fail(
            ("b_rel", "sentence"),
            f"is {relation[0]}, but the bridge {bridge_id!r} has {n_sentences} sentences "
            f"(indices 0 to {n_sentences - 1})",
            "b_rel_out_of_range",
        )
    example = Example(
        id=qid,
        dataset=dataset,
        split=split,
        native_type=native_type,
        question=question,
        answer=answer,
        answer_aliases=answer_aliases,
        pool=pool,
        bridge_pid=bridge_id,
        target_pid=target_id,
        gold_pids=gold_ids,
        hop_order_rule=rule,
        parallel=parallel,
        hop2_entity=by_id[target_id].title if hop2_entity is None else hop2_entity,
        hop2_aliases=hop2_aliases,
        relation_sentence=relation[0],
        relation_source=relation[1],
        source_files=(source,) if source else (),
    )
    if fill_b_rel and "b_rel" not in record:
        example = fill_relation(example)
        filled["b_rel_filled" if example.relation_sentence is not None else "b_rel_not_found"] = 1
    example.validate(line.where)  # the invariants above, checked once more by their owner
    return example, filled


def fill_relation(example: Example) -> Example:
    """``example`` with the built-in ``B_rel`` of a bridge without sentence labels, the rule
    the MuSiQue converter uses (pure): the first bridge sentence that mentions the hop-2
    entity, the target's title (with and without a trailing parenthetical) or a
    ``hop2_aliases`` name (:func:`regime_core.data.canonical.mention_relation`), source
    ``"entity_mention"``; none when no sentence does."""
    names = relation_names(example.hop2_entity, example.target.title, example.hop2_aliases)
    index, source = mention_relation(example.bridge, names)
    return replace(example, relation_sentence=index, relation_source=source)


def _default_type(parallel: bool) -> str:
    return "comparison" if parallel else "bridge"


def _default_rule(parallel: bool) -> str:
    return PARALLEL_RULE if parallel else GIVEN_RULE


def _pool(line: _Line) -> tuple[tuple[Passage, ...], int]:
    """The line's passages and how many of them were given as ``text`` (split here)."""
    pool = line.get("pool")
    if not isinstance(pool, list):
        raise line.fail("pool", f"must be an array of passages, got {json_kind(pool)}")
    if len(pool) < 2:
        raise line.fail("pool", f"holds {len(pool)} passage(s); a two-hop pool needs two")
    out = []
    split = 0
    for i, obj in enumerate(pool):
        path: tuple[str | int, ...] = ("pool", i)
        line.fields(obj, path, PASSAGE_FIELDS)
        needs = "a passage needs 'id', 'title' and one of 'sentences' or 'text'"
        missing = [k for k in ("id", "title") if k not in obj]
        if missing:
            raise line.fail(path, f"missing field {missing[0]!r} ({needs})")
        bodies = [k for k in PASSAGE_BODIES if k in obj]
        if len(bodies) != 1:
            problem = "gives both" if bodies else "gives neither of"
            raise line.fail(path, f"{problem} 'sentences' and 'text' ({needs})")
        pid = line.ident((*path, "id"), obj["id"])
        title = line.text((*path, "title"), obj["title"])
        if bodies == ["text"]:
            text = line.text((*path, "text"), obj["text"])
            if len(text) > MAX_TEXT_CHARS:
                raise line.fail(
                    (*path, "text"),
                    f"is {len(text):,} characters long, over the splitter's limit of "
                    f"{MAX_TEXT_CHARS:,}; give its sentences instead",
                )
            out.append(Passage(pid=pid, title=title, sentences=spacy_sentences(text)))
            split += 1
            continue
        sentences = obj["sentences"]
        if not isinstance(sentences, list):
            raise line.fail(
                (*path, "sentences"), f"must be an array of strings, got {json_kind(sentences)}"
            )
        if not sentences:
            raise line.fail((*path, "sentences"), "is empty; a passage needs a sentence")
        texts = tuple(line.text((*path, "sentences", j), s) for j, s in enumerate(sentences))
        out.append(Passage(pid=pid, title=title, sentences=texts))
    return tuple(out), split


def _b_rel(line: _Line) -> tuple[int | None, str]:
    value = line.get("b_rel", None)
    if value is None:
        return None, "none"
    line.fields(value, ("b_rel",), B_REL_FIELDS)
    if "sentence" not in value:
        raise line.fail("b_rel", "missing field 'sentence' (null for no gold B_rel)")
    index = value["sentence"]
    if isinstance(index, bool) or not isinstance(index, int):
        raise line.fail(("b_rel", "sentence"), f"must be an integer index, got {json_kind(index)}")
    sources = [s for s in RELATION_SOURCES if s != "none"]
    source = line.choice("b_rel.source", value.get("source", GIVEN_SOURCE), sources)
    return index, source


def read_twohop(
    raw: bytes, display: str, dataset: str, *, strict: bool = True, fill_b_rel: bool = False
) -> TwoHopRead:
    """Every example of a ``regime-twohop/1`` file's bytes (pure): ``display`` names the file in
    messages and in each example's ``source_files``.

    A bad line raises :class:`LineProblem` (a ``ValueError``) naming the file, the line and the
    field; with ``strict=False`` a line with a broken reference (:data:`EXCLUSION_REASONS`) is
    excluded instead, and counted. A file without any record is an error. ``fill_b_rel``: a
    line without ``b_rel`` gets the built-in one (:func:`fill_relation`); ``filled`` counts
    it, and every passage given as ``text``, over the lines prepared.
    """
    if (problem := dataset_name_problem(dataset)) is not None:
        raise ValueError(problem)
    data = decompress(raw, display)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        lineno = data[: err.start].count(b"\n") + 1
        raise ValueError(f"{display}, line {lineno}: not UTF-8 text (byte {err.start})") from None
    examples: list[Example] = []
    excluded: list[Exclusion] = []
    first_line_of: dict[str, int] = {}
    passages: dict[str, tuple[Passage, int]] = {}
    records = blank = 0
    filled = dict.fromkeys(FILL_COUNTS, 0)
    # split on "\n" only: a JSON string may hold U+2028 and other characters splitlines() breaks
    lines = text.split("\n")
    if lines[-1] == "":  # the end of the last line, not a line
        lines.pop()
    for lineno, body in enumerate(lines, start=1):
        if not body.strip():
            blank += 1
            continue
        records += 1
        where = f"{display}, line {lineno}"
        try:
            try:
                record = parse_json(body, where)
            except JSONProblem as err:
                raise LineProblem(_json_message(err, where)) from None
            example, line_filled = parse_line_filled(
                record, dataset=dataset, where=where, source=display, fill_b_rel=fill_b_rel
            )
            _check_across_lines(example, lineno, where, first_line_of, passages)
        except LineProblem as err:
            if strict or err.reason is None or err.split is None:
                raise
            excluded.append(Exclusion(lineno, str(record["id"]), err.split, err.reason, str(err)))
            continue
        first_line_of[example.id] = lineno
        for p in example.pool:
            passages.setdefault(p.pid, (p, lineno))
        examples.append(example)
        for key, n in line_filled.items():
            filled[key] += n
    if records == 0:
        raise ValueError(f"{display}: the file holds no example (no non-blank line)")
    return TwoHopRead(
        examples=tuple(examples),
        excluded=tuple(excluded),
        records=records,
        blank_lines=blank,
        sha256=hashlib.sha256(raw).hexdigest(),
        bytes=len(raw),
        filled=filled,
    )


def _json_message(err: JSONProblem, where: str) -> str:
    """A strict parser's refusal as the line's problem: the column of malformed JSON, or the
    field of a refused value (a NaN, a duplicate key)."""
    if err.line is not None:
        return f"{where}, column {err.column}: {err.problem}"
    field = f": field {json_path(err.path)!r}" if err.path else ""
    return f"{where}{field}: {err.problem}"


def _check_across_lines(
    example: Example,
    lineno: int,
    where: str,
    first_line_of: dict[str, int],
    passages: dict[str, tuple[Passage, int]],
) -> None:
    """A question id used by an earlier line, or a passage id an earlier line gave another
    passage, is a :class:`LineProblem` naming both lines."""
    where = f"{where} (id {example.id!r})"
    if example.id in first_line_of:
        raise LineProblem(
            f"{where}: field 'id': the question id is used by line {first_line_of[example.id]} "
            "too; ids must be unique in the file",
            "duplicate_id",
            example.split,
        )
    for i, passage in enumerate(example.pool):
        seen = passages.get(passage.pid)
        if seen is not None and _content(seen[0]) != _content(passage):
            what = "title" if seen[0].title != passage.title else "text"
            raise LineProblem(
                f"{where}: field 'pool[{i}]': passage id {passage.pid!r} names another passage "
                f"on line {seen[1]} (its {what} differs); a passage id names one passage "
                "throughout the file",
                "passage_conflict",
                example.split,
            )


def _content(passage: Passage) -> tuple[str, str]:
    """What one passage id must name throughout a file: the title and the text, whitespace
    collapsed (the split into sentences may differ)."""
    return passage.title, " ".join(passage.text.split())
