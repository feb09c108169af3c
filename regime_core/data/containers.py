"""The containers a raw file comes in, and its format, told from the first record's keys.

Containers: a JSON array, JSON Lines, a single object, or a pandas column dict; each plain or
compressed with gzip, bzip2 or xz (detected from the magic bytes). JSON is read strictly
(:func:`regime_core.strict_json.parse_json`): a duplicate key, ``NaN``/``Infinity`` or a lone
surrogate is an error naming the file, the record and the field, and so is nesting deeper than
the parser goes (about 1,000 levels: the readers take typed fields only and never recurse into
a value, so a bound of their own would only cost a walk over every record).
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import zlib
from collections.abc import Callable, Iterator
from typing import IO, Any

from regime_core.inputs import json_kind
from regime_core.limits import expanded_bound
from regime_core.strict_json import JSONProblem, json_path, parse_json

# every stream of a multi-stream file, as gzip.decompress and its kin read them
_MAGIC: tuple[tuple[bytes, str, Callable[[IO[bytes]], io.BufferedIOBase]], ...] = (
    (b"\x1f\x8b", "gzip", lambda raw: gzip.GzipFile(fileobj=raw, mode="rb")),
    (b"BZh", "bzip2", lambda raw: bz2.BZ2File(raw, mode="rb")),
    (b"\xfd7zXZ\x00", "xz", lambda raw: lzma.LZMAFile(raw, mode="rb")),  # noqa: SIM115
)


def decompress(raw: bytes, display: str) -> bytes:
    """Undo gzip/bzip2/xz compression, detected by magic bytes; plain bytes pass through.

    The output is bounded (:func:`regime_core.limits.expanded_bound`): a file that expands
    beyond it is refused with a ``ValueError`` naming it, after reading no more than the bound.
    """
    for magic, kind, opener in _MAGIC:
        if raw.startswith(magic):
            bound = expanded_bound(len(raw))
            try:
                with opener(io.BytesIO(raw)) as stream:
                    data = stream.read(bound + 1)
            except (OSError, EOFError, ValueError, lzma.LZMAError, zlib.error) as err:
                raise ValueError(
                    f"{display}: the file starts like {kind} data but cannot be decompressed "
                    f"({err}); it is truncated or corrupt — download it again"
                ) from err
            if len(data) > bound:
                raise ValueError(
                    f"{display}: its {kind} data expands to more than {bound:,} bytes from "
                    f"{len(raw):,}; refused as a decompression bomb (decompress it yourself "
                    "if it is real data)"
                )
            return data
    return raw


def parse_container(raw: bytes, display: str) -> list[tuple[str, Any]]:
    """Bytes of one file -> ``[(location, record)]`` for a JSON array, JSON Lines, a single
    object or a pandas column dict. ``location`` is ``"line N"`` or ``"record #i"``; a record
    that is not an object is refused by its format's declaration
    (:mod:`regime_core.inputs.raw_records`), which names it."""
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
        return [(f"record #{i}", record) for i, record in enumerate(obj)]
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


def _json_lines(text: str, display: str) -> Iterator[tuple[str, Any]]:
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rec = parse_json(line, display, max_depth=None)
        except JSONProblem as err:
            raise _refused(err, display, f"line {lineno}", line=lineno, whole=True) from None
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


def detect_format(record: Any, display: str) -> str:
    """The format of a file, from the keys of its first record."""
    keys = set(record) if isinstance(record, dict) else set()
    if {"question_id", "contexts"} <= keys:
        return "hotpot_ircot"
    if {"paragraphs", "question_decomposition"} <= keys:
        return "musique"
    if "_id" in keys and "evidences" in keys:
        return "2wiki_original"
    if "_id" in keys and "supporting_facts" in keys:
        return "hotpot_original"
    raise ValueError(
        f"{display}: unknown format — the first record "
        + (f"has keys {sorted(keys)}" if isinstance(record, dict) else f"is {json_kind(record)}")
        + "; expected "
        "HotpotQA (_id, context, supporting_facts), IRCoT (question_id, contexts), "
        "2Wiki (_id, evidences, ...) or MuSiQue (id, paragraphs, question_decomposition)"
    )


def records_and_format(raw: bytes, display: str) -> tuple[list[tuple[str, Any]], str]:
    """The records of one file's bytes (:func:`parse_container`) and its format
    (:func:`detect_format` of the first record); ValueError for a file without records."""
    records = parse_container(raw, display)
    if not records:
        raise ValueError(f"{display}: the file holds no records")
    return records, detect_format(records[0][1], display)
