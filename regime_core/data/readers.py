"""Readers for every known raw format, detected from content (never from the file name).

Formats (see ``shared/data/README.md`` for the field lists):

- ``hotpot_original``: HotpotQA ``{_id, question, answer, type, level, context, supporting_facts}``.
- ``hotpot_ircot``: IRCoT-processed HotpotQA ``{question_id, question_text, answers_objects,
  contexts}``; no ``type`` and no sentence labels.
- ``2wiki_original``: 2WikiMultiHopQA ``{_id, question, answer, type, context, supporting_facts,
  evidences, ...}``; also as a pandas ``DataFrame.to_json()`` column dict, where ``_id`` is the
  column ``_1`` and ``id`` the row index in the official ``dev.json`` (dropped).
- ``musique``: MuSiQue ``{id, question, answer, answer_aliases, paragraphs,
  question_decomposition}``.

Containers: a JSON array, JSON Lines, a single object, or a pandas column dict; each plain or
compressed with gzip, bzip2 or xz (detected from the magic bytes). JSON is read strictly
(:func:`regime_core.strict_json.parse_json`): a duplicate key, ``NaN``/``Infinity`` or a lone
surrogate is an error naming the file, the record and the field, and so is nesting deeper than
the parser goes (about 1,000 levels: the readers take typed fields only and never recurse into
a value, so a bound of their own would only cost a walk over every record). The format is
decided by the keys of the first record; every record is then parsed with that format's reader,
and a missing or mistyped field (``_id: true``, a number among 2Wiki's ``evidences``) raises
``ValueError`` naming the file, the record (id, else its position) and the field: no value is
converted to a string it is not.

Readers only parse and check references (supporting titles, sentence ids, decomposition indices).
Hop order and everything else derived lives in :mod:`regime_core.data.canonical`.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import json
import lzma
import unicodedata
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from regime_core.integrity import read_bytes
from regime_core.strict_json import JSONProblem, json_path, parse_json
from regime_core.text import MAX_TEXT_CHARS

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

_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x1f\x8b", "gzip"),
    (b"BZh", "bzip2"),
    (b"\xfd7zXZ\x00", "xz"),
)


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


# --- containers ------------------------------------------------------------------------------


def decompress(raw: bytes, display: str) -> bytes:
    """Undo gzip/bzip2/xz compression, detected by magic bytes; plain bytes pass through."""
    for magic, kind in _MAGIC:
        if raw.startswith(magic):
            try:
                if kind == "gzip":
                    return gzip.decompress(raw)
                if kind == "bzip2":
                    return bz2.decompress(raw)
                return lzma.decompress(raw)
            except (OSError, EOFError, ValueError, lzma.LZMAError, zlib.error) as err:
                raise ValueError(
                    f"{display}: the file starts like {kind} data but cannot be decompressed "
                    f"({err}); it is truncated or corrupt — download it again"
                ) from err
    return raw


def parse_container(raw: bytes, display: str) -> list[tuple[str, dict[str, Any]]]:
    """Bytes of one file -> ``[(location, record)]`` for a JSON array, JSON Lines, a single
    object or a pandas column dict. ``location`` is ``"line N"`` or ``"record #i"``."""
    data = decompress(raw, display)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise ValueError(
            f"{display}: not UTF-8 text at byte {err.start} (is it an unsupported archive?)"
        ) from err
    stripped = text.lstrip()
    if not stripped:
        raise ValueError(f"{display}: the file is empty")
    if stripped[0] == "[":
        try:
            obj = parse_json(text, display, max_depth=None)
        except JSONProblem as err:
            raise _refused(err, display, "record #{}") from None
        return _records_from_list(obj, display)
    if stripped[0] != "{":
        raise ValueError(
            f"{display}: unknown format — expected a JSON array, JSON Lines or a JSON object, "
            f"but the content starts with {stripped[:20]!r}"
        )
    first_line = text[: len(text) - len(stripped)].count("\n") + 1
    try:
        obj = parse_json(text, display, max_depth=None)
    except JSONProblem as err:
        if err.syntax != "Extra data":
            raise _refused(err, display, f"line {first_line}", whole=True) from None
        return list(_json_lines(text, display))
    if _is_pandas_columns(obj):
        return _pandas_columns_to_rows(obj, display)
    return [(f"line {first_line}", obj)]


def _refused(
    err: JSONProblem, display: str, record: str, *, line: int | None = None, whole: bool = False
) -> ValueError:
    """The error for JSON the strict parser refused, naming the file and where: the line and
    column of malformed JSON (``line``: of a JSON Lines file), else the record (``record``, a
    format for the first key of ``err.path`` unless ``whole``: the path is inside the record
    named) and the field."""
    if err.line is not None:
        return ValueError(f"{display}, line {line or err.line}, column {err.column}: {err.problem}")
    path = err.path
    if not whole and path:
        record, path = record.format(path[0]), path[1:]
    field = f": field {json_path(path)!r}" if path else ""
    return ValueError(f"{display}, {record}{field}: {err.problem}")


def _records_from_list(obj: list[Any], display: str) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for i, rec in enumerate(obj):
        if not isinstance(rec, dict):
            raise ValueError(f"{display}, record #{i}: expected a JSON object, got {_kind(rec)}")
        out.append((f"record #{i}", rec))
    return out


def _json_lines(text: str, display: str) -> Iterator[tuple[str, dict[str, Any]]]:
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rec = parse_json(line, display, max_depth=None)
        except JSONProblem as err:
            raise _refused(err, display, f"line {lineno}", line=lineno, whole=True) from None
        if not isinstance(rec, dict):
            raise ValueError(f"{display}, line {lineno}: expected a JSON object, got {_kind(rec)}")
        yield f"line {lineno}", rec


def _is_pandas_columns(obj: dict[str, Any]) -> bool:
    """``DataFrame.to_json()`` (orient='columns'): ``{column: {row_key: value}}``."""
    return (
        bool(obj)
        and all(isinstance(v, dict) for v in obj.values())
        and ("question" in obj or "_1" in obj)
    )


def _pandas_columns_to_rows(
    obj: dict[str, dict[str, Any]], display: str
) -> list[tuple[str, dict[str, Any]]]:
    columns = list(obj)
    row_keys = list(obj[columns[0]])
    for col in columns[1:]:
        if set(obj[col]) != set(row_keys):
            raise ValueError(
                f"{display}: pandas column dict is ragged — column {col!r} has "
                f"{len(obj[col])} rows, column {columns[0]!r} has {len(row_keys)}"
            )
    rows = []
    for i, key in enumerate(row_keys):
        row = {col: obj[col][key] for col in columns}
        # The TTS-project dump renamed _id to _1 and holds the official row index in `id`.
        if "_1" in row and "_id" not in row:
            row["_id"] = row.pop("_1")
            row.pop("id", None)
        rows.append((f"row {key!r} (#{i})", row))
    return rows


def detect_format(record: dict[str, Any], display: str) -> str:
    """The format of a file, from the keys of its first record."""
    keys = set(record)
    if {"question_id", "contexts"} <= keys:
        return "hotpot_ircot"
    if {"paragraphs", "question_decomposition"} <= keys:
        return "musique"
    if "_id" in keys and "evidences" in keys:
        return "2wiki_original"
    if "_id" in keys and "supporting_facts" in keys:
        return "hotpot_original"
    raise ValueError(
        f"{display}: unknown format — the first record has keys {sorted(keys)}; expected "
        "HotpotQA (_id, context, supporting_facts), IRCoT (question_id, contexts), "
        "2Wiki (_id, evidences, ...) or MuSiQue (id, paragraphs, question_decomposition)"
    )


def records_and_format(raw: bytes, display: str) -> tuple[list[tuple[str, dict[str, Any]]], str]:
    """The records of one file's bytes (:func:`parse_container`) and its format
    (:func:`detect_format` of the first record); ValueError for a file without records."""
    records = parse_container(raw, display)
    if not records:
        raise ValueError(f"{display}: the file holds no records")
    return records, detect_format(records[0][1], display)


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


class _Head(NamedTuple):
    """What every format names: the question's id, its text and its (first) answer."""

    id: str
    question: str
    answer: str


class _Record:
    """One record of a file being read: typed field access that names file, record and field in
    every error, and the :class:`RawQuestion` it becomes."""

    def __init__(self, rec: dict[str, Any], location: str, reading: _Reading, id_key: str) -> None:
        self.rec = rec
        self.reading = reading
        rid = rec.get(id_key)
        ok = isinstance(rid, str | int) and not isinstance(rid, bool)
        self.id = str(rid) if ok else None
        self.where = f"{reading.display}, {location}" + (f" (id {self.id!r})" if self.id else "")

    def fail(self, field_name: str, problem: str) -> ValueError:
        return ValueError(f"{self.where}: field {field_name!r} {problem}")

    def get(self, name: str, kind: type | tuple[type, ...], *, path: str | None = None) -> Any:
        return _typed(self, self.rec, name, kind, path or name)

    def identifier(self, name: str) -> str:
        """The record's id (field ``name``): a string or an integer, never a boolean, and a
        non-empty one without control characters (it names the question in every output)."""
        value = str(self.get(name, (str, int)))
        if not value.strip() or any(unicodedata.category(c) == "Cc" for c in value):
            raise self.fail(name, f"must be a non-empty id without control characters: {value!r}")
        return value

    def strings(self, value: Any, path: str) -> list[str]:
        """``value`` as a list of strings (each checked for length), or the error naming the
        first item that is not one (``path[i]``)."""
        if not isinstance(value, list):
            raise self.fail(path, f"must be a list of strings, got {_kind(value)}")
        for i, item in enumerate(value):
            if not isinstance(item, str):
                raise self.fail(f"{path}[{i}]", f"must be a string, got {_kind(item)}")
            _check_length(self, item, f"{path}[{i}]")
        return value

    def raw_question(
        self,
        head: _Head,
        paragraphs: tuple[RawParagraph, ...] | None,
        content: tuple[Any, ...],
        **fields: Any,
    ) -> RawQuestion:
        """The record as a :class:`RawQuestion`; ``content`` is what its ``content_key``
        hashes (the whole record as its format stores it), ``fields`` the format's own."""
        reading = self.reading
        return RawQuestion(
            dataset=reading.dataset,
            id=head.id,
            split=reading.split,
            fmt=reading.fmt,
            where=self.where,
            question=head.question,
            answer=head.answer,
            answer_aliases=fields.pop("answer_aliases", ()),
            native_type=fields.pop("native_type", None),
            paragraphs=paragraphs,
            content_key=_key(*content),
            identity_key=_identity_key(head.question, [p.title for p in paragraphs or ()]),
            source_files=(reading.display,),
            **fields,
        )


def _check_length(r: _Record, value: str, path: str) -> str:
    if len(value) > MAX_TEXT_CHARS:
        raise r.fail(
            path,
            f"is {len(value):,} characters long, over the limit of {MAX_TEXT_CHARS:,} "
            "(spaCy's max_length; no real passage is near it)",
        )
    return value


def _typed(r: _Record, obj: Any, name: str, kind: Any, path: str) -> Any:
    if not isinstance(obj, dict):
        raise r.fail(path.rsplit(".", 1)[0], f"must be a JSON object, got {_kind(obj)}")
    if name not in obj:
        raise r.fail(path, "is missing")
    value = obj[name]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if float in kinds and isinstance(value, int) and not isinstance(value, bool):
        return value
    if not isinstance(value, kind) or (isinstance(value, bool) and bool not in kinds):
        names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise r.fail(path, f"must be {names}, got {_kind(value)}")
    if isinstance(value, str):
        _check_length(r, value, path)
    return value


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _key(*parts: Any) -> str:
    payload = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _identity_key(question: str, titles: list[str]) -> str:
    """What must agree between the IRCoT and the original form of one HotpotQA question."""
    return _key(" ".join(question.split()), [t.strip() for t in titles])


def _defect(strict: bool, reason: str, message: str) -> str:
    if strict:
        raise ValueError(message)
    return reason


def _pairs(
    r: _Record, key: str, second: Callable[[Any], bool], shape: str
) -> Iterator[tuple[int, str, Any]]:
    """``key = [[string, X], ...]``: ``(i, string, X)`` per item, each checked as it comes
    (``second(X)``); an item of another shape raises, naming ``key[i]`` and ``shape``."""
    for i, item in enumerate(r.get(key, list)):
        ok = isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)
        if not (ok and second(item[1])):
            raise r.fail(f"{key}[{i}]", f"must be {shape}")
        yield i, item[0], item[1]


def _is_sentence_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(s, str) for s in value)


def _is_index(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _sentence_pool(r: _Record, key: str) -> tuple[RawParagraph, ...]:
    """``context = [[title, [sentence, ...]], ...]`` (HotpotQA and 2Wiki original)."""
    out = []
    for i, title, sentences in _pairs(r, key, _is_sentence_list, "[title, [sentence, ...]]"):
        _check_length(r, title, f"{key}[{i}][0]")
        for j, sentence in enumerate(sentences):
            _check_length(r, sentence, f"{key}[{i}][1][{j}]")
        out.append(RawParagraph(title=title, sentences=tuple(sentences)))
    return tuple(out)


def _supporting_facts(r: _Record) -> tuple[tuple[str, int], ...]:
    shape = "[title, sentence_index]"
    return tuple((title, i) for _, title, i in _pairs(r, "supporting_facts", _is_index, shape))


def _check_supporting(
    r: _Record, pool: tuple[RawParagraph, ...], facts: tuple[tuple[str, int], ...], strict: bool
) -> str | None:
    """Every supporting title must be in the pool and every sentence index in range."""
    lengths: dict[str, list[int]] = {}
    for p in pool:
        lengths.setdefault(p.title, []).append(len(p.sentences or ()))
    for i, (title, sent) in enumerate(facts):
        if title not in lengths:
            return _defect(
                strict,
                "gold_not_in_pool",
                f"{r.where}: field 'supporting_facts[{i}]' names title {title!r}, which is not "
                f"in the pool ('context' has {len(pool)} paragraphs)",
            )
        if not any(0 <= sent < n for n in lengths[title]):
            return _defect(
                strict,
                "supporting_sentence_out_of_range",
                f"{r.where}: field 'supporting_facts[{i}]' has sentence index {sent}, but "
                f"paragraph {title!r} has {max(lengths[title])} sentences",
            )
    return None


def _text_pool(r: _Record, key: str, *, with_idx: bool) -> tuple[RawParagraph, ...]:
    """``key = [{title, paragraph_text, is_supporting[, idx]}, ...]`` (IRCoT and MuSiQue)."""
    pool = []
    for i, par in enumerate(r.get(key, list)):
        path = f"{key}[{i}]"
        pool.append(
            RawParagraph(
                title=_typed(r, par, "title", str, f"{path}.title"),
                text=_typed(r, par, "paragraph_text", str, f"{path}.paragraph_text"),
                is_supporting=_typed(r, par, "is_supporting", bool, f"{path}.is_supporting"),
                idx=_typed(r, par, "idx", int, f"{path}.idx") if with_idx else None,
            )
        )
    return tuple(pool)


def _read_original(r: _Record, *, evidences: bool) -> RawQuestion:
    """HotpotQA and 2Wiki in their original form: ``_id``, ``type``, a ``context`` of sentence
    lists and ``supporting_facts``; 2Wiki adds ``evidences`` (``evidences=True``)."""
    head = _Head(r.identifier("_id"), r.get("question", str), r.get("answer", str))
    native_type = r.get("type", str)
    triples = _evidences(r) if evidences else None
    pool: tuple[RawParagraph, ...] | None = None
    facts: tuple[tuple[str, int], ...] | None = None
    defect: str | None = None
    content: tuple[Any, ...] = (head.question, head.answer, native_type, None)
    # 2Wiki MIGRES rows carrying qa_pairs/explanation have no pool: kept, then excluded by reason.
    if not evidences or "context" in r.rec:
        pool = _sentence_pool(r, "context")
        facts = _supporting_facts(r)
        defect = _check_supporting(r, pool, facts, r.reading.strict)
        context = [[p.title, list(p.sentences or ())] for p in pool]
        content = (*content[:3], context, [list(f) for f in facts])
    if triples is not None:
        content += (list(triples),)
    return r.raw_question(
        head,
        pool,
        content,
        native_type=native_type,
        supporting_facts=facts,
        evidences=triples,
        defect=defect,
    )


def _evidences(r: _Record) -> tuple[tuple[str, str, str], ...]:
    triples = []
    for i, triple in enumerate(r.get("evidences", list)):
        if not (isinstance(triple, list) and len(triple) == 3):
            raise r.fail(f"evidences[{i}]", "must be [subject, relation, object]")
        subject, relation, obj = r.strings(triple, f"evidences[{i}]")
        triples.append((subject, relation, obj))
    return tuple(triples)


def read_hotpot_original(r: _Record) -> RawQuestion:
    return _read_original(r, evidences=False)


def read_2wiki_original(r: _Record) -> RawQuestion:
    return _read_original(r, evidences=True)


def read_hotpot_ircot(r: _Record) -> RawQuestion:
    qid = r.identifier("question_id")
    question = r.get("question_text", str)
    answers = r.get("answers_objects", list)
    spans: list[str] = []
    for i, obj in enumerate(answers):
        path = f"answers_objects[{i}].spans"
        spans.extend(r.strings(_typed(r, obj, "spans", list, path), path))
    if not spans:
        raise r.fail("answers_objects", "holds no answer span")
    pool = _text_pool(r, "contexts", with_idx=False)
    texts = [[p.title, " ".join((p.text or "").split()), p.is_supporting] for p in pool]
    aliases = tuple(dict.fromkeys(s for s in spans[1:] if s != spans[0]))
    head = _Head(qid, question, spans[0])
    return r.raw_question(head, pool, (question, spans, texts), answer_aliases=aliases)


def read_musique(r: _Record) -> RawQuestion:
    head = _Head(r.identifier("id"), r.get("question", str), r.get("answer", str))
    aliases = (
        r.strings(r.rec["answer_aliases"], "answer_aliases") if "answer_aliases" in r.rec else []
    )
    answerable = r.get("answerable", bool) if "answerable" in r.rec else True
    pool = _text_pool(r, "paragraphs", with_idx=True)
    known_idx = {p.idx for p in pool if p.idx is not None}  # with_idx: each is an int
    steps = []
    defect = None
    for i, step in enumerate(r.get("question_decomposition", list)):
        path = f"question_decomposition[{i}]"
        support = _typed(
            r, step, "paragraph_support_idx", (int, type(None)), f"{path}.paragraph_support_idx"
        )
        if support is not None and support not in known_idx:
            defect = defect or _defect(
                r.reading.strict,
                "gold_not_in_pool",
                f"{r.where}: field '{path}.paragraph_support_idx' is {support}, but no "
                f"paragraph has that idx (pool idx {min(known_idx, default=None)}.."
                f"{max(known_idx, default=None)})",
            )
        steps.append(
            DecompositionStep(
                question=_typed(r, step, "question", str, f"{path}.question"),
                answer=_typed(r, step, "answer", str, f"{path}.answer"),
                paragraph_support_idx=support,
            )
        )
    texts = [[p.idx, p.title, p.text, p.is_supporting] for p in pool]
    decomposition = [[s.question, s.answer, s.paragraph_support_idx] for s in steps]
    content = (head.question, head.answer, list(aliases), texts, decomposition, answerable)
    return r.raw_question(
        head,
        pool,
        content,
        answer_aliases=tuple(aliases),
        decomposition=tuple(steps),
        answerable=answerable,
        defect=defect,
    )


_READERS = {
    "hotpot_original": (read_hotpot_original, "_id"),
    "hotpot_ircot": (read_hotpot_ircot, "question_id"),
    "2wiki_original": (read_2wiki_original, "_id"),
    "musique": (read_musique, "id"),
}


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
    reader, id_key = _READERS[fmt]
    reading = _Reading(fmt, dataset, split, strict, display)
    questions = tuple(reader(_Record(rec, loc, reading, id_key)) for loc, rec in records)
    return FileRead(
        display=display,
        fmt=fmt,
        dataset=dataset,
        split=split,
        questions=questions,
        sha256=hashlib.sha256(raw).hexdigest(),
        bytes=len(raw),
    )
