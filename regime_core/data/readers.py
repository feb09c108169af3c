"""Readers for every known raw format, detected from content (never from the file name).

Formats: ``hotpot_original`` (HotpotQA), ``hotpot_ircot`` (IRCoT-processed HotpotQA: no
``type``, no sentence labels), ``2wiki_original`` (2WikiMultiHopQA, also as a pandas
``DataFrame.to_json()`` column dict) and ``musique``; each record's fields are declared in
:mod:`regime_core.inputs.raw_records` (``shared/data/README.md`` describes the files).

Containers (JSON, JSON Lines, compression) and format detection are
:mod:`~regime_core.data.containers`. The format is decided by the keys of the first record;
every record is then read through that format's declaration
(:mod:`regime_core.inputs.raw_records`), and a missing or mistyped field (``_id: true``, a
number among 2Wiki's ``evidences``) raises ``ValueError`` naming the file, the record (id, else
its position) and the field: no value is converted to a string it is not.

Readers only parse and check references (supporting titles, sentence ids, decomposition indices).
Hop order and everything else derived lives in :mod:`regime_core.data.canonical`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from regime_core.data.containers import records_and_format
from regime_core.inputs import InputError
from regime_core.inputs.raw_records import RAW_RECORDS
from regime_core.integrity import read_bytes

FORMATS: dict[str, str] = {
    "hotpot_original": "hotpotqa",
    "hotpot_ircot": "hotpotqa",
    "2wiki_original": "2wikimultihopqa",
    "musique": "musique",
}

# Formats that carry more information win when the same question appears in several formats.
FORMAT_RICHNESS: dict[str, int] = {
    "hotpot_original": 2,
    "hotpot_ircot": 1,
    "2wiki_original": 2,
    "musique": 2,
}


@dataclass(frozen=True)
class RawParagraph:
    """One pool paragraph as stored: a sentence list (original formats) or a string."""

    title: str
    sentences: tuple[str, ...] | None = None
    text: str | None = None
    is_supporting: bool | None = None
    idx: int | None = None


@dataclass(frozen=True)
class DecompositionStep:
    question: str
    answer: str
    paragraph_support_idx: int | None


@dataclass(frozen=True)
class RawQuestion:
    """One question as read from one file, before hop order is derived.

    ``defect`` is set (lenient reading only) when a reference is broken; the canonical step then
    excludes the question with that reason instead of failing.
    """

    dataset: str
    id: str
    split: str
    fmt: str
    where: str
    question: str
    answer: str
    answer_aliases: tuple[str, ...]
    native_type: str | None
    paragraphs: tuple[RawParagraph, ...] | None
    supporting_facts: tuple[tuple[str, int], ...] | None = None
    decomposition: tuple[DecompositionStep, ...] | None = None
    evidences: tuple[tuple[str, str, str], ...] | None = None
    answerable: bool = True
    content_key: str = ""
    identity_key: str = ""
    source_files: tuple[str, ...] = field(default=())
    defect: str | None = None


# --- records ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Reading:
    """What every record of one file shares: its format and dataset, the split the file holds,
    strictness (a broken reference raises, or becomes the question's ``defect``) and the file's
    name, used in messages and ``source_files``."""

    fmt: str
    dataset: str
    split: str
    strict: bool
    display: str


def _key(*parts: Any) -> str:
    payload = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _identity_key(question: str, titles: list[str]) -> str:
    """What must agree between the IRCoT and the original form of one HotpotQA question."""
    return _key(" ".join(question.split()), [t.strip() for t in titles])


def _raw_question(
    reading: _Reading,
    where: str,
    head: tuple[str, str, str],
    paragraphs: tuple[RawParagraph, ...] | None,
    content: tuple[Any, ...],
    **fields: Any,
) -> RawQuestion:
    """A record as a :class:`RawQuestion`: ``head`` is its id, question and (first) answer,
    ``content`` what its ``content_key`` hashes (the whole record as its format stores it),
    ``fields`` the format's own."""
    qid, question, answer = head
    return RawQuestion(
        dataset=reading.dataset,
        id=qid,
        split=reading.split,
        fmt=reading.fmt,
        where=where,
        question=question,
        answer=answer,
        answer_aliases=fields.pop("answer_aliases", ()),
        native_type=fields.pop("native_type", None),
        paragraphs=paragraphs,
        content_key=_key(*content),
        identity_key=_identity_key(question, [p.title for p in paragraphs or ()]),
        source_files=(reading.display,),
        **fields,
    )


def _defect(strict: bool, error: InputError, reason: str) -> str:
    """A broken reference: ``error`` raised when reading strictly, else its ``reason``."""
    if strict:
        raise error
    return reason


def _check_supporting(
    where: str, pool: tuple[RawParagraph, ...], facts: tuple[tuple[str, int], ...], strict: bool
) -> str | None:
    """Every supporting title must be in the pool and every sentence index in range."""
    lengths: dict[str, list[int]] = {}
    for p in pool:
        lengths.setdefault(p.title, []).append(len(p.sentences or ()))
    for i, (title, sent) in enumerate(facts):
        field_name = f"supporting_facts[{i}]"
        if title not in lengths:
            problem = f"names title {title!r}, which is not in the pool ({len(pool)} paragraphs)"
            return _defect(strict, InputError(where, field_name, problem), "gold_not_in_pool")
        if not any(0 <= sent < n for n in lengths[title]):
            problem = f"has sentence index {sent}, but {title!r} has {max(lengths[title])}"
            error = InputError(where, field_name, problem + " sentences")
            return _defect(strict, error, "supporting_sentence_out_of_range")
    return None


def _read_original(values: dict[str, Any], where: str, reading: _Reading) -> RawQuestion:
    """HotpotQA and 2Wiki in their original form: ``_id``, ``type``, a ``context`` of sentence
    lists and ``supporting_facts``; 2Wiki adds ``evidences`` (and may lack a ``context``)."""
    head = (values["_id"], values["question"], values["answer"])
    triples = values.get("evidences")
    pool: tuple[RawParagraph, ...] | None = None
    facts, defect = None, None
    content: tuple[Any, ...] = (*head[1:], values["type"], None)
    if values["context"] is not None:
        if values["supporting_facts"] is None:
            raise InputError(where, "supporting_facts", "is missing (required with a context)")
        pool = tuple(RawParagraph(title=t, sentences=s) for t, s in values["context"])
        facts = values["supporting_facts"]
        defect = _check_supporting(where, pool, facts, reading.strict)
        content = (*content[:3], values["context"], facts)
    if triples is not None:
        content += (triples,)
    return _raw_question(
        reading,
        where,
        head,
        pool,
        content,
        native_type=values["type"],
        supporting_facts=facts,
        evidences=triples,
        defect=defect,
    )


def _read_hotpot_ircot(values: dict[str, Any], where: str, reading: _Reading) -> RawQuestion:
    spans = [span for answer in values["answers_objects"] for span in answer["spans"]]
    if not spans:
        raise InputError(where, "answers_objects", "holds no answer span")
    pool = tuple(
        RawParagraph(title=p["title"], text=p["paragraph_text"], is_supporting=p["is_supporting"])
        for p in values["contexts"]
    )
    texts = [[p.title, " ".join((p.text or "").split()), p.is_supporting] for p in pool]
    aliases = tuple(dict.fromkeys(s for s in spans[1:] if s != spans[0]))
    head = (values["question_id"], values["question_text"], spans[0])
    content = (values["question_text"], spans, texts)
    return _raw_question(reading, where, head, pool, content, answer_aliases=aliases)


def _read_musique(values: dict[str, Any], where: str, reading: _Reading) -> RawQuestion:
    head = (values["id"], values["question"], values["answer"])
    pool = tuple(
        RawParagraph(
            title=p["title"],
            text=p["paragraph_text"],
            is_supporting=p["is_supporting"],
            idx=p["idx"],
        )
        for p in values["paragraphs"]
    )
    known_idx = {p.idx for p in pool}
    steps = tuple(
        DecompositionStep(s["question"], s["answer"], s["paragraph_support_idx"])
        for s in values["question_decomposition"]
    )
    defect = None
    for i, step in enumerate(steps):
        support = step.paragraph_support_idx
        if defect is None and support is not None and support not in known_idx:
            problem = f"is {support}, but no paragraph has that idx"
            error = InputError(where, f"question_decomposition[{i}].paragraph_support_idx", problem)
            defect = _defect(reading.strict, error, "gold_not_in_pool")
    texts = [[p.idx, p.title, p.text, p.is_supporting] for p in pool]
    decomposition = [[s.question, s.answer, s.paragraph_support_idx] for s in steps]
    aliases = values["answer_aliases"]
    content = (*head[1:], aliases, texts, decomposition, values["answerable"])
    return _raw_question(
        reading,
        where,
        head,
        pool,
        content,
        answer_aliases=aliases,
        decomposition=steps,
        answerable=values["answerable"],
        defect=defect,
    )


_READERS: dict[str, tuple[Callable[[dict[str, Any], str, _Reading], RawQuestion], str]] = {
    "hotpot_original": (_read_original, "_id"),
    "hotpot_ircot": (_read_hotpot_ircot, "question_id"),
    "2wiki_original": (_read_original, "_id"),
    "musique": (_read_musique, "id"),
}


def _read_record(record: Any, location: str, reading: _Reading) -> RawQuestion:
    """One record through its format's declaration (:mod:`regime_core.inputs.raw_records`),
    then its reader; messages name the file, the record (its id when it has one) and the field."""
    reader, id_key = _READERS[reading.fmt]
    rid = record.get(id_key) if isinstance(record, dict) else None
    named = isinstance(rid, str | int) and not isinstance(rid, bool)
    where = f"{reading.display}, {location}" + (f" (id {str(rid)!r})" if named else "")
    return reader(RAW_RECORDS[reading.fmt].read(record, where=where), where, reading)


@dataclass(frozen=True)
class FileRead:
    """Everything read from one file."""

    display: str
    fmt: str
    dataset: str
    split: str
    questions: tuple[RawQuestion, ...]
    sha256: str
    bytes: int


def read_file(
    path: Path,
    *,
    split: str,
    display: str | None = None,
    expect_dataset: str | None = None,
    strict: bool = True,
    raw: bytes | None = None,
) -> FileRead:
    """Read one raw file of any known format into :class:`RawQuestion` records.

    ``display`` is the name used in messages and ``source_files`` (prepare passes the path
    relative to the data directory). ``expect_dataset`` cross-checks the detected format.
    ``raw``: the file's bytes when the caller has read them already (else they are read).
    """
    display = display or str(path)
    if raw is None:
        raw = read_bytes(path)
    records, fmt = records_and_format(raw, display)
    dataset = FORMATS[fmt]
    if expect_dataset is not None and expect_dataset != dataset:
        raise ValueError(
            f"{display}: registered as {expect_dataset!r}, but its content is {fmt!r} ({dataset!r})"
        )
    reading = _Reading(fmt, dataset, split, strict, display)
    questions = tuple(_read_record(rec, loc, reading) for loc, rec in records)
    return FileRead(
        display=display,
        fmt=fmt,
        dataset=dataset,
        split=split,
        questions=questions,
        sha256=hashlib.sha256(raw).hexdigest(),
        bytes=len(raw),
    )
