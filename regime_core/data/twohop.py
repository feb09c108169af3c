"""``regime-twohop/1``: two-hop examples of one's own, one JSON object per line.

``regime data prepare --jsonl FILE --name NAME`` reads a file in this format into the prepared
store beside the three known datasets (:func:`regime_core.data.custom.prepare_jsonl`), after
which every command and notebook accepts ``NAME`` as a dataset; ``regime data export DATASET
--jsonl FILE`` writes any prepared dataset, the toy world included, in it
(:func:`regime_core.data.custom.export_jsonl`). The book's page "Your own data" shows it with
an example; ``tests/fixtures/twohop/small.jsonl`` is a small file of invented text.

**The format, version 1.** A UTF-8 text file (optionally gzip, bzip2 or xz compressed), one JSON
object per line, each stating ``"format": "regime-twohop/1"`` (no header line, so lines can be
concatenated, shuffled or filtered and stay readable); blank lines are skipped and counted. A
line's fields, each with its kind, default and meaning, are declared once in
:data:`regime_core.inputs.twohop_line.LINE` (the book's page renders that declaration as its
table). The dataset is the ``NAME`` given to ``prepare``, not a field.

A passage gives ``id``, ``title`` and exactly one of ``sentences`` or ``text`` (which the
built-in splitter splits, :func:`regime_core.data.canonical.spacy_sentences`). A passage id is
*stable*: wherever it appears in the file it names the same title and text (whitespace
collapsed); only the split into sentences may differ, since ``b_rel`` counts the line's own
sentences. In ``b_rel``, ``sentence`` indexes the bridge's sentences and ``source`` says where
it came from. With ``fill_b_rel``, a line that leaves ``b_rel`` out gets the built-in rule's
sentence (:func:`fill_relation`), counted in :data:`FILL_COUNTS`. Text values are stripped of
edge whitespace, as the readers of the known datasets strip them.

**Reading rules.** JSON is read strictly (:func:`regime_core.strict_json.parse_json`); an
unknown or missing field, a wrongly typed value (no value is converted) and an unknown
``format`` are errors naming the file, the line and the field, e.g. ``mine.jsonl, line 7 (id
'q7'): field 'pool[2].sentences[0]' must be a non-blank string, got ' '``. Broken references
are errors too, or, with ``lenient``, an exclusion of the line, counted by reason
(:data:`EXCLUSION_REASONS`) and listed with its line in the manifest: each line ends as an
example or an exclusion, ``records == two_hop + excluded``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from typing import Any

from regime_core.data.canonical import mention_relation, relation_names, spacy_sentences
from regime_core.data.containers import decompress
from regime_core.inputs import InputError
from regime_core.inputs.twohop_line import FORMAT as FORMAT  # the name users import
from regime_core.inputs.twohop_line import LINE
from regime_core.schema import Example, Passage
from regime_core.strict_json import JSONProblem, json_path, parse_json

#: the fields of a line, in the order :func:`regime_core.data.custom.example_line` writes them
FIELDS: tuple[str, ...] = tuple(f.name for f in LINE.fields)
#: What :func:`read_twohop` filled with the built-in rules, counted (the manifest's ``filled``):
FILL_COUNTS: dict[str, str] = {
    "passages_split": "passages given as text, split into sentences by the built-in splitter",
    "b_rel_filled": "lines without b_rel given the built-in B_rel (fill_b_rel)",
    "b_rel_not_found": "lines without b_rel whose bridge has no sentence naming the hop-2 "
    "entity (fill_b_rel): b_rel stays null",
}

#: Why a line is excluded under ``lenient`` reading (strict reading: each is an error).
EXCLUSION_REASONS: dict[str, str] = {
    "not_in_pool": "bridge_id, target_id or a gold id names no passage of the line's pool",
    "same_bridge_and_target": "bridge_id and target_id name the same passage",
    "duplicate_passage_id": "one pool lists a passage id twice",
    "b_rel_out_of_range": "b_rel.sentence is not an index of the bridge's sentences",
    "duplicate_id": "the question id is used by an earlier line (that line is kept)",
    "passage_conflict": "a passage id an earlier line gave another title or text",
}


class LineProblem(InputError):
    """A line that breaks a rule its declaration cannot say, named by file, line (and id) and
    field. ``reason`` is a key of :data:`EXCLUSION_REASONS` for a broken reference (which
    lenient reading excludes), None for every other problem (always an error); ``split`` is
    the line's split."""

    def __init__(
        self, where: str, field: str, problem: str, reason: str | None = None, split: str = ""
    ) -> None:
        super().__init__(where, field, problem)
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


def parse_line_filled(
    record: Any, *, dataset: str, where: str, source: str = "", fill_b_rel: bool = False
) -> tuple[Example, dict[str, int]]:
    """The canonical example of one parsed line (pure) and what the built-in rules filled on it
    (the keys of :data:`FILL_COUNTS`): :data:`regime_core.inputs.twohop_line.LINE` reads the
    fields (an :class:`~regime_core.inputs.InputError` naming ``where`` and the field), then
    a :class:`LineProblem` for a passage without one body or a broken reference; the rules
    across lines are :func:`read_twohop`'s. ``source`` is the example's ``source_files``
    entry; ``fill_b_rel``: a line without ``b_rel`` gets the built-in one
    (:func:`fill_relation`). ``dataset`` was checked by the caller (once per file)."""
    if isinstance(record, dict) and isinstance(record.get("id"), str):
        where = f"{where} (id {record['id']!r})"
    line = LINE.read(record, where=where)
    split = line["split"]

    def fail(path: tuple[str | int, ...], problem: str, reason: str | None = None) -> LineProblem:
        return LineProblem(where, json_path(path), problem, reason, split)

    pool = []
    for i, given in enumerate(line["pool"]):
        if (given["sentences"] is None) == (given["text"] is None):
            both = "gives both" if given["text"] is not None else "gives neither of"
            raise fail(("pool", i), f"{both} 'sentences' and 'text' (exactly one is needed)")
        sentences = given["sentences"] or spacy_sentences(given["text"].strip())
        pool.append(Passage(given["id"], given["title"].strip(), _stripped(sentences)))
    parallel = line["parallel"]
    bridge_id, target_id = line["bridge_id"], line["target_id"]
    given_gold = line["gold_ids"]
    gold_ids = (bridge_id, target_id) if given_gold is None else given_gold
    if given_gold is not None and len(set(gold_ids)) != len(gold_ids):
        raise fail(("gold_ids",), "lists a passage id twice")
    # references: the broken ones are what lenient reading excludes
    by_id: dict[str, Passage] = {}
    for i, passage in enumerate(pool):
        if passage.pid in by_id:
            raise fail(("pool", i, "id"), "lists a passage id twice", "duplicate_passage_id")
        by_id[passage.pid] = passage
    named = [("bridge_id",), ("target_id",)] + [("gold_ids", i) for i in range(len(gold_ids))]
    for path, pid in zip(named, (bridge_id, target_id, *gold_ids), strict=True):
        if pid not in by_id:
            raise fail(path, f"is {pid!r}, the id of no passage of the pool", "not_in_pool")
    if bridge_id == target_id:
        raise fail(("target_id",), "is the bridge's id too", "same_bridge_and_target")
    b_rel = line["b_rel"] or {"sentence": None, "source": "none"}
    n_sentences = len(by_id[bridge_id].sentences)
    if b_rel["sentence"] is not None and not 0 <= b_rel["sentence"] < n_sentences:
        raise fail(
            ("b_rel", "sentence"),
            f"is {b_rel['sentence']}, but the bridge {bridge_id!r} has {n_sentences} sentences",
            "b_rel_out_of_range",
        )
    entity = line["hop2_entity"]
    example = Example(
        id=line["id"],
        dataset=dataset,
        split=split,
        native_type=(line["native_type"] or ("comparison" if parallel else "bridge")).strip(),
        question=line["question"].strip(),
        answer=line["answer"].strip(),
        answer_aliases=_stripped(line["answer_aliases"]),
        pool=tuple(pool),
        bridge_pid=bridge_id,
        target_pid=target_id,
        gold_pids=gold_ids,
        hop_order_rule=line["hop_order_rule"] or ("parallel" if parallel else "given"),
        parallel=parallel,
        hop2_entity=by_id[target_id].title if entity is None else entity.strip(),
        hop2_aliases=_stripped(line["hop2_aliases"]),
        relation_sentence=b_rel["sentence"],
        relation_source=b_rel["source"],
        source_files=(source,) if source else (),
    )
    filled = dict.fromkeys(FILL_COUNTS, 0)
    filled["passages_split"] = sum(given["text"] is not None for given in line["pool"])
    if fill_b_rel and "b_rel" not in record:
        example = fill_relation(example)
        filled["b_rel_filled" if example.relation_sentence is not None else "b_rel_not_found"] = 1
    return example, filled


def _stripped(texts: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(text.strip() for text in texts)


def fill_relation(example: Example) -> Example:
    """``example`` with the built-in ``B_rel`` of a bridge without sentence labels, the rule
    the MuSiQue converter uses (pure): the first bridge sentence that mentions the hop-2
    entity, the target's title (with and without a trailing parenthetical) or a
    ``hop2_aliases`` name (:func:`regime_core.data.canonical.mention_relation`), source
    ``"entity_mention"``; none when no sentence does."""
    names = relation_names(example.hop2_entity, example.target.title, example.hop2_aliases)
    index, source = mention_relation(example.bridge, names)
    return replace(example, relation_sentence=index, relation_source=source)


def read_twohop(
    raw: bytes, display: str, dataset: str, *, strict: bool = True, fill_b_rel: bool = False
) -> TwoHopRead:
    """Every example of a ``regime-twohop/1`` file's bytes (pure): ``display`` names the file in
    messages and in each example's ``source_files``.

    A bad line raises :class:`~regime_core.inputs.InputError` (a ``ValueError``) naming the
    file, the line and the field; with ``strict=False`` a line with a broken reference
    (:data:`EXCLUSION_REASONS`) is excluded instead, and counted. ``dataset`` was checked by
    the caller. A file without any record is an error. ``fill_b_rel``: a
    line without ``b_rel`` gets the built-in one (:func:`fill_relation`); ``filled`` counts
    it, and every passage given as ``text``, over the lines prepared.
    """
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
            except JSONProblem as err:  # malformed (a column) or a refused value (a field)
                if err.line is not None:
                    raise InputError(f"{where}, column {err.column}", "", err.problem) from None
                raise InputError(where, json_path(err.path), err.problem) from None
            example, line_filled = parse_line_filled(
                record, dataset=dataset, where=where, source=display, fill_b_rel=fill_b_rel
            )
            _check_across_lines(example, lineno, where, first_line_of, passages)
        except LineProblem as err:
            if strict or err.reason is None:
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
            where,
            "id",
            f"is used by line {first_line_of[example.id]} too; ids must be unique in the file",
            "duplicate_id",
            example.split,
        )
    for i, passage in enumerate(example.pool):
        seen = passages.get(passage.pid)
        if seen is not None and _content(seen[0]) != _content(passage):
            what = "title" if seen[0].title != passage.title else "text"
            raise LineProblem(
                where,
                f"pool[{i}]",
                f"is passage {passage.pid!r}, another passage on line {seen[1]} (its {what} "
                "differs); a passage id names one passage throughout the file",
                "passage_conflict",
                example.split,
            )


def _content(passage: Passage) -> tuple[str, str]:
    """What one passage id must name throughout a file: the title and the text, whitespace
    collapsed (the split into sentences may differ)."""
    return passage.title, " ".join(passage.text.split())
