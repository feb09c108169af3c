"""Strict JSON and YAML, and sealed JSON: what the package parses is refused, naming the file
and where in it, rather than read wrongly.

JSON is parsed by one strict reader, :func:`parse_json` (a file: :func:`read_json_file`; a
derived file: :func:`read_json`), and YAML by :func:`parse_yaml`; both refuse, naming the file
and where in it: duplicate keys (the plain parsers keep the last value silently), ``NaN``,
``Infinity`` and numbers beyond a float's range, lone surrogates, and nesting deeper than
:data:`MAX_NESTING` (200,000 nested brackets would otherwise end in a ``RecursionError``).

:func:`seal_json` / :func:`open_sealed_json` wrap a JSON payload with the sha256 of its
canonical form, so a flipped bit that still parses is detected on read.
:class:`DamagedFileError` names the file and the command that rebuilds it.
"""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path
from typing import Any

from regime_core.inputs import json_path
from regime_core.integrity import canonical_bytes, read_bytes, read_text, sha256_hex
from regime_core.limits import MAX_NESTING

SEAL_KEY = "sha256"
PAYLOAD_KEY = "payload"


class DamagedFileError(ValueError):
    """A derived file failed its integrity check; the message names it and how to rebuild it."""


class JSONProblem(ValueError):
    """Why a JSON or YAML text was refused, and where: ``line``/``column`` (syntax, YAML) or
    ``path`` (the keys and indices leading to the value: ``(3, "evidences", 0)``). ``syntax``
    is the JSON decoder's own message for malformed JSON (``"Extra data"``), else None."""

    def __init__(
        self,
        where: str,
        problem: str,
        *,
        path: tuple[str | int, ...] = (),
        line: int | None = None,
        column: int | None = None,
        syntax: str | None = None,
    ) -> None:
        self.where, self.problem, self.path = where, problem, path
        self.line, self.column, self.syntax = line, column, syntax
        super().__init__(f"{where}{self.location()}: {problem}")

    def location(self) -> str:
        """``, line L, column C`` or ``, at a[3].b`` (empty when neither is known)."""
        if self.line is not None:
            column = "" if self.column is None else f", column {self.column}"
            return f", line {self.line}{column}"
        return f", at {json_path(self.path)}" if self.path else ""


class _Flagged:
    """A value the strict parser refused, kept in place until its path is known."""

    __slots__ = ("problem",)

    def __init__(self, problem: str) -> None:
        self.problem = problem


class _DuplicateKeys(dict[str, Any]):
    """An object that named a key twice (the plain parser keeps the last value silently)."""

    duplicate: str = ""


# An escaped UTF-16 surrogate (``\\ud83d``): one that is not half of a pair decodes to no
# character, and every later encoding of the text fails.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _lone_surrogate_escape(text: str) -> bool:
    """Whether ``text`` may escape a lone surrogate: an escaped high surrogate not followed at
    once by an escaped low one, or a low one on its own (an escaped backslash before one makes
    this a false alarm, settled by the exact check of :func:`check_value`)."""
    found = list(_SURROGATE_ESCAPE.finditer(text))
    i = 0
    while i < len(found):
        code = int(found[i].group()[2:], 16)
        pair = i + 1 < len(found) and found[i + 1].start() == found[i].end()
        if code <= 0xDBFF and pair and int(found[i + 1].group()[2:], 16) >= 0xDC00:
            i += 2
            continue
        return True
    return False


def parse_json(text: str, where: str, *, max_depth: int | None = MAX_NESTING) -> Any:
    """The JSON value of ``text``, strictly: :class:`JSONProblem` (a ``ValueError`` whose message
    starts with ``where``) for malformed JSON, a duplicate key, ``NaN``, ``Infinity`` or a
    number beyond a float's range, a lone surrogate, or nesting deeper than ``max_depth``.

    ``max_depth=None`` leaves the bound to the parser itself (Python's recursion limit, about
    1,000 levels, reported like any other problem) and saves walking the value: for a caller
    that takes typed fields only and never recurses into a value (the dataset readers, whose
    files are megabytes).

    >>> parse_json('{"a": [1, 2.5, "x"]}', "f.json")
    {'a': [1, 2.5, 'x']}
    >>> try:
    ...     parse_json('{"a": 1, "a": 2}', "f.json")
    ... except ValueError as err:
    ...     print(err)
    f.json, at a: the key 'a' appears twice in one object
    """
    flagged: list[bool] = []

    def pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out = dict(pairs)
        if len(out) == len(pairs):
            return out
        seen: set[str] = set()
        marked = _DuplicateKeys(out)
        for key, _ in pairs:
            if key in seen:
                marked.duplicate = key
                break
            seen.add(key)
        flagged.append(True)
        return marked

    def constant(name: str) -> _Flagged:
        flagged.append(True)
        return _Flagged(f"{name} is not a JSON number (JSON has no NaN or Infinity)")

    def number(literal: str) -> float | _Flagged:
        value = float(literal)
        if math.isfinite(value):
            return value
        flagged.append(True)
        return _Flagged(f"the number {literal[:40]} is beyond a float's range")

    try:
        value = json.loads(
            text, object_pairs_hook=pairs_hook, parse_constant=constant, parse_float=number
        )
    except json.JSONDecodeError as err:
        problem = f"malformed JSON ({err.msg})"
        raise JSONProblem(
            where, problem, line=err.lineno, column=err.colno, syntax=err.msg
        ) from None
    except RecursionError:
        bound = max_depth or f"the parser's {sys.getrecursionlimit():,}"
        raise JSONProblem(where, f"values nest more than {bound} levels deep") from None
    except ValueError:  # an integer of more digits than int() converts (4,300)
        raise JSONProblem(where, "a number has too many digits to be read") from None
    strict = bool(flagged) or _lone_surrogate_escape(text)
    if strict or max_depth is not None:
        check_value(value, where, max_depth=max_depth or sys.getrecursionlimit(), strict=strict)
    return value


def check_value(
    value: Any, where: str, *, max_depth: int = MAX_NESTING, strict: bool = True
) -> None:
    """Depth first over a parsed ``value``: :class:`JSONProblem` naming ``where`` and the path
    when it nests deeper than ``max_depth``; with ``strict``, also at the first value the
    parser flagged, duplicate key, or string holding a lone surrogate."""
    if not strict and not _deeper_than(value, max_depth):
        return  # the common case, without building a path for every container
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(value, ())]
    while stack:
        node, path = stack.pop()
        if type(node) is list or isinstance(node, dict):
            if len(path) >= max_depth:
                raise JSONProblem(
                    where, f"values nest more than {max_depth} levels deep", path=path[:6]
                )
            if isinstance(node, _DuplicateKeys):
                problem = f"the key {node.duplicate!r} appears twice in one object"
                raise JSONProblem(where, problem, path=(*path, node.duplicate))
            items = list(node.items()) if isinstance(node, dict) else list(enumerate(node))
            for key, child in reversed(items):
                if strict and isinstance(key, str):
                    _check_string(key, where, (*path, key))
                if strict or type(child) is list or isinstance(child, dict):
                    stack.append((child, (*path, key)))
        elif isinstance(node, _Flagged):
            raise JSONProblem(where, node.problem, path=path)
        elif strict and isinstance(node, str):
            _check_string(node, where, path)


def _deeper_than(value: Any, max_depth: int) -> bool:
    """Whether containers nest more than ``max_depth`` levels in ``value`` (fast: no paths)."""
    if type(value) is not list and not isinstance(value, dict):
        return False
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        for child in node.values() if isinstance(node, dict) else node:
            if type(child) is list or type(child) is dict:
                if depth >= max_depth:
                    return True
                stack.append((child, depth + 1))
    return False


def _check_string(text: str, where: str, path: tuple[str | int, ...]) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        code = ord(text[err.start])
        problem = f"a lone surrogate \\u{code:04x} (half of a UTF-16 pair, not a character)"
        raise JSONProblem(where, problem, path=path) from None


def read_json_file(path: Path | str, *, max_depth: int = MAX_NESTING) -> Any:
    """The JSON value of the file ``path`` (:func:`read_text`, :func:`parse_json`); every
    problem is a ``ValueError`` naming ``path`` (nothing there: ``FileNotFoundError``)."""
    return parse_json(read_text(path), str(path), max_depth=max_depth)


def parse_yaml(text: str, where: str, *, max_depth: int = MAX_NESTING, finite: bool = True) -> Any:
    """The value of a YAML data file (safe types only), as strict as :func:`parse_json`:
    :class:`JSONProblem` naming ``where`` and the line for invalid YAML, a duplicate key, an
    alias (``*name``; our files use none), nesting deeper than ``max_depth``, or, with
    ``finite``, a float that is not finite (``.nan``, ``.inf``: no setting, claim or expected
    number is one; a caller that names the key itself passes ``finite=False`` and checks)."""
    import yaml

    class StrictLoader(yaml.SafeLoader):
        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                event = self.peek_event()
                problem = f"the YAML alias *{event.anchor} (our files write values out)"
                raise JSONProblem(where, problem, line=event.start_mark.line + 1)
            return super().compose_node(parent, index)

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            seen: set[Any] = set()
            for key_node, _ in node.value:
                line = key_node.start_mark.line + 1
                key = self.construct_object(key_node, deep=True)
                try:
                    duplicate = key in seen
                except TypeError:  # a list or mapping as a key
                    raise JSONProblem(where, "a key is not a scalar", line=line) from None
                if duplicate:
                    problem = f"the key {key!r} appears twice in one mapping"
                    raise JSONProblem(where, problem, line=line)
                seen.add(key)
            return super().construct_mapping(node, deep=deep)

        def construct_finite_float(self, node: Any) -> float:
            value = float(self.construct_yaml_float(node))
            if finite and not math.isfinite(value):
                problem = f"{node.value} is not a finite number"
                raise JSONProblem(where, problem, line=node.start_mark.line + 1)
            return value

    StrictLoader.add_constructor("tag:yaml.org,2002:float", StrictLoader.construct_finite_float)
    try:
        value = yaml.load(text, Loader=StrictLoader)  # a SafeLoader subclass
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        line = None if mark is None else mark.line + 1
        problem = f"not valid YAML ({err.problem or err.context})"
        raise JSONProblem(where, problem, line=line) from None
    except yaml.YAMLError as err:
        raise JSONProblem(where, f"not valid YAML ({err})") from None
    except RecursionError:
        raise JSONProblem(where, f"values nest more than {max_depth} levels deep") from None
    except JSONProblem:
        raise
    except ValueError:  # an integer of more digits than int() converts (4,300)
        raise JSONProblem(where, "a number has too many digits to be read") from None
    check_value(value, where, max_depth=max_depth, strict=False)
    return value


def read_yaml_file(path: Path | str, *, max_depth: int = MAX_NESTING, finite: bool = True) -> Any:
    """:func:`parse_yaml` of the file ``path`` (:func:`read_text`)."""
    return parse_yaml(read_text(path), str(path), max_depth=max_depth, finite=finite)


# --- sealed JSON -----------------------------------------------------------------------------


def seal_json(payload: Any) -> bytes:
    """``{"payload": ..., "sha256": <hash of the payload's canonical JSON>}`` as bytes."""
    body = {PAYLOAD_KEY: payload, SEAL_KEY: sha256_hex(canonical_bytes(payload))}
    return (json.dumps(body, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def read_json(path: Path | str, rebuild: str) -> Any:
    """The JSON value stored in the derived file ``path`` (UTF-8, :func:`parse_json`).

    Raises :class:`DamagedFileError` naming ``path`` and ``rebuild`` (the command or action that
    rebuilds it) when the file is not UTF-8 or not strict JSON; a FIFO, device or directory in
    its place is a ``ValueError`` naming it (:func:`read_bytes`).
    """
    raw = read_bytes(path)
    try:
        return parse_json(raw.decode("utf-8"), str(path))
    except UnicodeDecodeError as err:
        raise DamagedFileError(
            f"{path} is damaged (not UTF-8 at byte {err.start}); {rebuild}"
        ) from err
    except JSONProblem as err:
        where = err.location().removeprefix(", ")
        raise DamagedFileError(
            f"{path} is damaged ({err.problem}{' at ' + where if where else ''}); {rebuild}"
        ) from err


def open_sealed_json(path: Path | str, rebuild: str) -> Any:
    """The payload of a file written from :func:`seal_json`, verified.

    Raises :class:`DamagedFileError` naming ``path`` and ``rebuild`` (the command or action
    that rebuilds it) when the file is not UTF-8, not JSON, not sealed, or its hash differs.
    """
    body = read_json(path, rebuild)
    if not isinstance(body, dict) or set(body) != {PAYLOAD_KEY, SEAL_KEY}:
        raise DamagedFileError(f"{path} is damaged or of an older format (no seal); {rebuild}")
    if sha256_hex(canonical_bytes(body[PAYLOAD_KEY])) != body[SEAL_KEY]:
        raise DamagedFileError(
            f"{path} is damaged (its content does not match its sha256); {rebuild}"
        )
    return body[PAYLOAD_KEY]
