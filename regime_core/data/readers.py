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
compressed with gzip, bzip2 or xz (detected from the magic bytes). The format is decided by the
keys of the first record; every record is then parsed with that format's reader, and a missing or
mistyped field raises ``ValueError`` naming the file, the record (id, else its position) and the
field.

Readers only parse and check references (supporting titles, sentence ids, decomposition indices).
Hop order and everything else derived lives in :mod:`regime_core.data.canonical`.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import json
import lzma
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from regime_core.integrity import read_bytes
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
            obj = json.loads(text)
        except json.JSONDecodeError as err:
            raise ValueError(
                f"{display}, line {err.lineno}, column {err.colno}: malformed JSON ({err.msg})"
            ) from err
        return _records_from_list(obj, display)
    if stripped[0] != "{":
        raise ValueError(
            f"{display}: unknown format — expected a JSON array, JSON Lines or a JSON object, "
            f"but the content starts with {stripped[:20]!r}"
        )
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as err:
        if err.msg != "Extra data":
            raise ValueError(
                f"{display}, line {err.lineno}, column {err.colno}: malformed JSON ({err.msg})"
            ) from err
        return list(_json_lines(text, display))
    if _is_pandas_columns(obj):
        return _pandas_columns_to_rows(obj, display)
    first_line = text[: len(text) - len(stripped)].count("\n") + 1
    return [(f"line {first_line}", obj)]


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
            rec = json.loads(line)
        except json.JSONDecodeError as err:
            raise ValueError(
                f"{display}, line {lineno}, column {err.colno}: malformed JSON ({err.msg})"
            ) from err
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


# --- records ---------------------------------------------------------------------------------


class _Record:
    """Typed field access that names file, record and field in every error."""

    def __init__(self, rec: dict[str, Any], display: str, location: str, id_key: str) -> None:
        self.rec = rec
        self.display = display
        rid = rec.get(id_key)
        self.id = str(rid) if isinstance(rid, str | int) else None
        self.where = f"{display}, {location}" + (f" (id {self.id!r})" if self.id else "")

    def fail(self, field_name: str, problem: str) -> ValueError:
        return ValueError(f"{self.where}: field {field_name!r} {problem}")

    def get(self, name: str, kind: type | tuple[type, ...], *, path: str | None = None) -> Any:
        return _typed(self, self.rec, name, kind, path or name)


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
    if kind is float and isinstance(value, int):
        return value
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
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


def _sentence_pool(r: _Record, key: str) -> tuple[RawParagraph, ...]:
    """``context = [[title, [sentence, ...]], ...]`` (HotpotQA and 2Wiki original)."""
    context = r.get(key, list)
    out = []
    for i, item in enumerate(context):
        ok = (
            isinstance(item, list)
            and len(item) == 2
            and isinstance(item[0], str)
            and isinstance(item[1], list)
            and all(isinstance(s, str) for s in item[1])
        )
        if not ok:
            raise r.fail(f"{key}[{i}]", "must be [title, [sentence, ...]]")
        _check_length(r, item[0], f"{key}[{i}][0]")
        for j, sentence in enumerate(item[1]):
            _check_length(r, sentence, f"{key}[{i}][1][{j}]")
        out.append(RawParagraph(title=item[0], sentences=tuple(item[1])))
    return tuple(out)


def _supporting_facts(r: _Record) -> tuple[tuple[str, int], ...]:
    facts = r.get("supporting_facts", list)
    out = []
    for i, fact in enumerate(facts):
        ok = (
            isinstance(fact, list)
            and len(fact) == 2
            and isinstance(fact[0], str)
            and isinstance(fact[1], int)
            and not isinstance(fact[1], bool)
        )
        if not ok:
            raise r.fail(f"supporting_facts[{i}]", "must be [title, sentence_index]")
        out.append((fact[0], fact[1]))
    return tuple(out)


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


def read_hotpot_original(
    r: _Record, dataset: str, split: str, strict: bool, source: str
) -> RawQuestion:
    qid = str(r.get("_id", (str, int)))
    question = r.get("question", str)
    answer = r.get("answer", str)
    native_type = r.get("type", str)
    pool = _sentence_pool(r, "context")
    facts = _supporting_facts(r)
    defect = _check_supporting(r, pool, facts, strict)
    context = [[p.title, list(p.sentences or ())] for p in pool]
    return RawQuestion(
        dataset=dataset,
        id=qid,
        split=split,
        fmt="hotpot_original",
        where=r.where,
        question=question,
        answer=answer,
        answer_aliases=(),
        native_type=native_type,
        paragraphs=pool,
        supporting_facts=facts,
        content_key=_key(question, answer, native_type, context, [list(f) for f in facts]),
        identity_key=_identity_key(question, [p.title for p in pool]),
        source_files=(source,),
        defect=defect,
    )


def read_hotpot_ircot(
    r: _Record, dataset: str, split: str, strict: bool, source: str
) -> RawQuestion:
    qid = str(r.get("question_id", (str, int)))
    question = r.get("question_text", str)
    answers = r.get("answers_objects", list)
    spans: list[str] = []
    for i, obj in enumerate(answers):
        got = _typed(r, obj, "spans", list, f"answers_objects[{i}].spans")
        spans.extend(str(s) for s in got)
    if not spans:
        raise r.fail("answers_objects", "holds no answer span")
    pool = []
    for i, ctx in enumerate(r.get("contexts", list)):
        path = f"contexts[{i}]"
        pool.append(
            RawParagraph(
                title=_typed(r, ctx, "title", str, f"{path}.title"),
                text=_typed(r, ctx, "paragraph_text", str, f"{path}.paragraph_text"),
                is_supporting=_typed(r, ctx, "is_supporting", bool, f"{path}.is_supporting"),
            )
        )
    texts = [[p.title, " ".join((p.text or "").split()), p.is_supporting] for p in pool]
    return RawQuestion(
        dataset=dataset,
        id=qid,
        split=split,
        fmt="hotpot_ircot",
        where=r.where,
        question=question,
        answer=spans[0],
        answer_aliases=tuple(dict.fromkeys(s for s in spans[1:] if s != spans[0])),
        native_type=None,
        paragraphs=tuple(pool),
        content_key=_key(question, spans, texts),
        identity_key=_identity_key(question, [p.title for p in pool]),
        source_files=(source,),
    )


def read_2wiki_original(
    r: _Record, dataset: str, split: str, strict: bool, source: str
) -> RawQuestion:
    qid = str(r.get("_id", (str, int)))
    question = r.get("question", str)
    answer = r.get("answer", str)
    native_type = r.get("type", str)
    evidences = []
    for i, triple in enumerate(r.get("evidences", list)):
        if not (isinstance(triple, list) and len(triple) == 3):
            raise r.fail(f"evidences[{i}]", "must be [subject, relation, object]")
        evidences.append((str(triple[0]), str(triple[1]), str(triple[2])))
    if "context" not in r.rec:
        # MIGRES rows carrying qa_pairs/explanation have no pool: kept, then excluded by reason.
        return RawQuestion(
            dataset=dataset,
            id=qid,
            split=split,
            fmt="2wiki_original",
            where=r.where,
            question=question,
            answer=answer,
            answer_aliases=(),
            native_type=native_type,
            paragraphs=None,
            evidences=tuple(evidences),
            content_key=_key(question, answer, native_type, None, evidences),
            identity_key=_identity_key(question, []),
            source_files=(source,),
        )
    pool = _sentence_pool(r, "context")
    facts = _supporting_facts(r)
    defect = _check_supporting(r, pool, facts, strict)
    context = [[p.title, list(p.sentences or ())] for p in pool]
    return RawQuestion(
        dataset=dataset,
        id=qid,
        split=split,
        fmt="2wiki_original",
        where=r.where,
        question=question,
        answer=answer,
        answer_aliases=(),
        native_type=native_type,
        paragraphs=pool,
        supporting_facts=facts,
        evidences=tuple(evidences),
        content_key=_key(
            question, answer, native_type, context, [list(f) for f in facts], evidences
        ),
        identity_key=_identity_key(question, [p.title for p in pool]),
        source_files=(source,),
        defect=defect,
    )


def read_musique(r: _Record, dataset: str, split: str, strict: bool, source: str) -> RawQuestion:
    qid = str(r.get("id", (str, int)))
    question = r.get("question", str)
    answer = r.get("answer", str)
    aliases = r.get("answer_aliases", list) if "answer_aliases" in r.rec else []
    answerable = r.get("answerable", bool) if "answerable" in r.rec else True
    pool = []
    for i, par in enumerate(r.get("paragraphs", list)):
        path = f"paragraphs[{i}]"
        pool.append(
            RawParagraph(
                title=_typed(r, par, "title", str, f"{path}.title"),
                text=_typed(r, par, "paragraph_text", str, f"{path}.paragraph_text"),
                is_supporting=_typed(r, par, "is_supporting", bool, f"{path}.is_supporting"),
                idx=_typed(r, par, "idx", int, f"{path}.idx"),
            )
        )
    known_idx = {p.idx for p in pool}
    steps = []
    defect = None
    for i, step in enumerate(r.get("question_decomposition", list)):
        path = f"question_decomposition[{i}]"
        support = _typed(
            r, step, "paragraph_support_idx", (int, type(None)), f"{path}.paragraph_support_idx"
        )
        if support is not None and support not in known_idx:
            defect = defect or _defect(
                strict,
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
    return RawQuestion(
        dataset=dataset,
        id=qid,
        split=split,
        fmt="musique",
        where=r.where,
        question=question,
        answer=answer,
        answer_aliases=tuple(str(a) for a in aliases),
        native_type=None,
        paragraphs=tuple(pool),
        decomposition=tuple(steps),
        answerable=answerable,
        content_key=_key(question, answer, list(aliases), texts, decomposition, answerable),
        identity_key=_identity_key(question, [p.title for p in pool]),
        source_files=(source,),
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
) -> FileRead:
    """Read one raw file of any known format into :class:`RawQuestion` records.

    ``display`` is the name used in messages and ``source_files`` (prepare passes the path
    relative to the data directory). ``expect_dataset`` cross-checks the detected format.
    """
    display = display or str(path)
    raw = read_bytes(path)
    records = parse_container(raw, display)
    if not records:
        raise ValueError(f"{display}: the file holds no records")
    fmt = detect_format(records[0][1], display)
    dataset = FORMATS[fmt]
    if expect_dataset is not None and expect_dataset != dataset:
        raise ValueError(
            f"{display}: registered as {expect_dataset!r}, but its content is {fmt!r} ({dataset!r})"
        )
    reader, id_key = _READERS[fmt]
    questions = tuple(
        reader(_Record(rec, display, loc, id_key), dataset, split, strict, display)
        for loc, rec in records
    )
    return FileRead(
        display=display,
        fmt=fmt,
        dataset=dataset,
        split=split,
        questions=questions,
        sha256=hashlib.sha256(raw).hexdigest(),
        bytes=len(raw),
    )
