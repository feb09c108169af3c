"""Integrity of what the package reads and writes: atomic writes, strict reads, sealed JSON.

Every file the package derives (prepared data, caches, embedding shards, records, routers) is
written through :func:`atomic_write_bytes`: a temporary file with a unique name carrying the
writer's pid (``.<name>.<pid>.<random>.tmp``), fsync-ed, made ``0644`` and ``os.replace``-d
into place, so a reader never sees half a file and two writers never share a temporary.
Outputs go only where they should (:func:`output_target`): a target that exists and is not a
regular file (a directory, a FIFO, a device, a socket) is refused, never replaced; a symbolic
link is *followed* when it points to an existing regular file (that file is replaced, the link
stays a link) and refused otherwise (dangling, looping, or pointing to anything else).
:func:`remove_stale_temporaries` deletes the temporaries of writers that are no longer running
(an interrupted run's leftovers) and leaves those of live writers alone.

Every file the package reads goes through :func:`read_bytes`: it is opened without blocking and
must be a regular file (a FIFO, a device or a directory is an error naming it, and never hangs
the reader); a dangling symbolic link is named as such. JSON is parsed by one strict reader,
:func:`parse_json` (a file: :func:`read_json_file`; a derived file: :func:`read_json`), and YAML
by :func:`parse_yaml`; both refuse, naming the file and where in it: duplicate keys (the plain
parsers keep the last value silently), ``NaN``, ``Infinity`` and numbers beyond a float's range,
lone surrogates, and nesting deeper than :data:`MAX_NESTING` (200,000 nested brackets would
otherwise end in a ``RecursionError``).

:func:`seal_json` / :func:`open_sealed_json` wrap a JSON payload with the sha256 of its
canonical form, so a flipped bit that still parses is detected on read.
:class:`DamagedFileError` names the file and the command that rebuilds it.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import math
import os
import re
import stat
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

FILE_MODE = 0o644  # derived files are shared like any cache: readable by group and others
LOCK_NAME = ".regime.lock"
SEAL_KEY = "sha256"
PAYLOAD_KEY = "payload"
#: How deep JSON and YAML values may nest (objects and arrays inside each other). Our deepest
#: files (a notebook, a record's numbers) nest about 6 levels; the bound keeps every recursive
#: consumer (hashing, validation) far from Python's recursion limit.
MAX_NESTING: int = 100
# ``.<name>.<pid>.<random>.tmp`` (ours) and ``.tmp-<random>.part`` / ``<name>.tmp`` (the
# embedding store's and prepare's temporaries before this module, which carry no pid)
_OUR_TEMP = re.compile(r"^\..+\.(\d+)\.[A-Za-z0-9_]+\.tmp$")
_LEGACY_TEMP = re.compile(r"^(\.tmp-[A-Za-z0-9_]+\.part|[^.].*\.(json|jsonl)\.tmp)$")


class DamagedFileError(ValueError):
    """A derived file failed its integrity check; the message names it and how to rebuild it."""


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def canonical_bytes(value: Any) -> bytes:
    """The bytes hashes are computed over: sorted keys, no whitespace, no NaN, UTF-8."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.encode("utf-8")


def file_kind(mode: int) -> str:
    """What an ``st_mode`` is, for messages: ``a directory``, ``a FIFO (named pipe)``, ..."""
    for test, name in (
        (stat.S_ISREG, "a regular file"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISLNK, "a symbolic link"),
    ):
        if test(mode):
            return name
    return "a special file"


# --- writing ---------------------------------------------------------------------------------


def os_error_message(err: OSError, path: Path | str, action: str) -> str:
    """``cannot <action> <path>: <reason>`` for permission and path problems."""
    reason = {
        errno.EACCES: "permission denied",
        errno.EPERM: "operation not permitted",
        errno.EISDIR: "it is a directory",
        errno.ENOTDIR: "a parent of it is not a directory",
        errno.ENOENT: "no such file or directory",
        errno.ENOSPC: "no space left on the device",
        errno.EROFS: "the file system is read-only",
        errno.ELOOP: "its symbolic links loop",
        errno.ENXIO: "it is a socket or a device without a driver, not a regular file",
        errno.ENAMETOOLONG: "the name is too long",
    }.get(err.errno or 0, err.strerror or str(err))
    return f"cannot {action} {path}: {reason}"


def output_target(path: Path | str) -> Path:
    """The regular file a write to ``path`` replaces, by the writer's rule (module docstring).

    ``path`` itself when nothing is there or it is a regular file; the file a symbolic link
    points to when that is an existing regular file (the link is kept). ``ValueError`` naming
    ``path`` otherwise: a directory, FIFO, device or socket is never replaced by a file, and a
    dangling or looping link is not followed to create a file somewhere else.
    """
    target = Path(path)
    if "\0" in str(target):
        raise ValueError(f"cannot write {str(target)!r}: the path holds a NUL character")
    try:
        info = os.lstat(target)
    except FileNotFoundError:
        return target
    except OSError as err:
        raise ValueError(os_error_message(err, target, "write")) from err
    if stat.S_ISLNK(info.st_mode):
        link = os.readlink(target)
        try:
            resolved = Path(os.path.realpath(target, strict=True))
            info = os.stat(resolved)
        except FileNotFoundError:
            raise ValueError(
                f"cannot write {target}: it is a symbolic link to {link}, which does not exist "
                "(a link is followed only to an existing regular file)"
            ) from None
        except OSError as err:
            raise ValueError(os_error_message(err, target, "write")) from err
        if not stat.S_ISREG(info.st_mode):
            raise ValueError(
                f"cannot write {target}: it is a symbolic link to {file_kind(info.st_mode)} "
                f"({link}); only a regular file is ever replaced"
            )
        return resolved
    if not stat.S_ISREG(info.st_mode):
        raise ValueError(
            f"cannot write {target}: it is {file_kind(info.st_mode)}; only a regular file is "
            "ever replaced"
        )
    return target


def atomic_write_bytes(path: Path | str, data: bytes, *, mode: int = FILE_MODE) -> None:
    """Write ``data`` to ``path`` atomically (unique temporary + fsync + ``os.replace``).

    Where it writes is :func:`output_target`'s rule: a symbolic link to a regular file has that
    file replaced (the link stays); a directory, FIFO, device, socket or dangling link is
    refused. Raises ``ValueError`` naming the path for these and for permission and path
    problems (a parent that is a file), so no caller shows an ``OSError`` traceback.
    """
    given = Path(path)
    target = output_target(given)
    try:
        _check_parents(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(
            dir=target.parent, prefix=f".{target.name}.{os.getpid()}.", suffix=".tmp"
        )
    except OSError as err:
        raise ValueError(os_error_message(err, given, "write")) from err
    try:
        os.chmod(tmp, mode)  # mkstemp makes 0600
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if output_target(given) != target:  # replaced by a link meanwhile: refuse, not guess
            raise ValueError(f"cannot write {given}: it changed while it was being written")
        os.replace(tmp, target)
    except BaseException as err:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(err, OSError):
            raise ValueError(os_error_message(err, given, "write")) from err
        raise


def _check_parents(target: Path) -> None:
    """``NotADirectoryError`` when an existing ancestor of ``target`` is a file (``mkdir``
    would say "File exists", naming the wrong problem)."""
    for parent in target.parents:
        if parent.exists():
            if not parent.is_dir():
                raise NotADirectoryError(errno.ENOTDIR, "not a directory", str(parent))
            return


def check_writable(path: Path | str, what: str) -> None:
    """ValueError naming ``what`` and ``path`` unless :func:`atomic_write_bytes` could write
    ``path``: :func:`output_target` accepts it and its nearest existing ancestor is a writable
    directory."""
    try:
        target = output_target(path)
    except ValueError as err:
        raise ValueError(f"{what}: {err}") from None
    for parent in target.parents:
        if parent.exists():
            if not parent.is_dir():
                raise ValueError(
                    f"{what}: cannot write {path}: its parent {parent} is not a directory"
                )
            if not os.access(parent, os.W_OK | os.X_OK):
                raise ValueError(f"{what}: cannot write {path}: permission denied on {parent}")
            return


def write_if_changed(path: Path, data: bytes) -> None:
    """Atomic write that leaves an identical file untouched (its mtime kept)."""
    with contextlib.suppress(OSError, ValueError):
        if read_bytes(path) == data:
            return
    atomic_write_bytes(path, data)


# --- reading ---------------------------------------------------------------------------------


def read_bytes(path: Path | str) -> bytes:
    """``path``'s bytes, if it is a regular file (or a symbolic link to one).

    The file is opened without blocking, so a FIFO or a device never hangs the reader: it is
    refused, as is a directory, with a ``ValueError`` naming the file and what it is.
    ``FileNotFoundError`` when nothing is there (its message says so when ``path`` is a
    dangling symbolic link); permission and path problems are ``ValueError`` naming the file.
    """
    name = Path(path)
    if "\0" in str(name):
        raise ValueError(f"cannot read {str(name)!r}: the path holds a NUL character")
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        if os.path.islink(name):
            raise FileNotFoundError(
                f"cannot read {name}: it is a symbolic link to {os.readlink(name)}, which does "
                "not exist"
            ) from None
        raise FileNotFoundError(f"cannot read {name}: no such file") from None
    except OSError as err:
        raise ValueError(os_error_message(err, name, "read")) from err
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError(
                f"cannot read {name}: it is {file_kind(info.st_mode)}, not a regular file"
            )
        chunks = []
        while chunk := os.read(fd, 1 << 24):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as err:
        raise ValueError(os_error_message(err, name, "read")) from err
    finally:
        os.close(fd)


def read_text(path: Path | str) -> str:
    """``path``'s text (:func:`read_bytes`, UTF-8); ``ValueError`` naming it if not UTF-8."""
    raw = read_bytes(path)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"{path}: not UTF-8 text (byte {err.start})") from err


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


def json_path(path: tuple[str | int, ...]) -> str:
    """``("context", 3, 1)`` -> ``context[3][1]``; ``(3, "id")`` -> ``[3].id``.

    >>> json_path(("context", 3, 1)), json_path((3, "id"))
    ('context[3][1]', '[3].id')
    """
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


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


# --- stale temporaries -----------------------------------------------------------------------


def pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    try:  # a zombie has exited; only its process-table entry waits to be reaped
        return "\nState:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True


def remove_stale_temporaries(directory: Path | str) -> list[Path]:
    """Delete temporaries left in ``directory`` by writers no longer running; return them.

    A temporary whose pid is alive (another process writing now) is kept; one without a pid
    (written before temporaries carried one) is stale by construction of today's writers.
    """
    removed: list[Path] = []
    root = Path(directory)
    if not root.is_dir():
        return removed
    for entry in root.iterdir():
        ours = _OUR_TEMP.match(entry.name)
        stale = (ours is not None and not pid_alive(int(ours.group(1)))) or (
            ours is None and _LEGACY_TEMP.match(entry.name) is not None
        )
        if stale and entry.is_file():
            with contextlib.suppress(FileNotFoundError):
                entry.unlink()
                removed.append(entry)
    return removed


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


# --- locks -----------------------------------------------------------------------------------

LOCK_MODES: tuple[str, ...] = ("exclusive", "shared")
#: set by a process holding a directory's lock exclusively for the children that work on its
#: behalf (``regime reproduce``'s notebooks), to that lock file's path: in them, taking the same
#: lock is free instead of waiting for the parent forever
LOCK_HELD_VARIABLE = "REGIME_LOCK_HELD"
_HELD = threading.local()  # this thread's locks: lock file -> [mode, depth]


def _held_locks() -> dict[str, list[Any]]:
    held = getattr(_HELD, "locks", None)
    if held is None:
        held = _HELD.locks = {}
    return held


def lock_key(directory: Path | str) -> str:
    """The lock file of ``directory``, resolved: what :data:`LOCK_HELD_VARIABLE` holds."""
    return os.path.realpath(Path(directory) / LOCK_NAME)


def _open_lock_file(root: Path, shared: bool) -> int | None:
    """A descriptor of ``root/.regime.lock`` (not inherited by children), or None for a reader
    of a directory that does not exist or cannot hold a lock file: nothing writes there."""
    lock_file = root / LOCK_NAME
    flags = os.O_CLOEXEC | os.O_NOFOLLOW
    if shared:
        if not root.is_dir():
            return None
        for mode in (os.O_RDWR | os.O_CREAT, os.O_RDONLY):
            try:
                return os.open(lock_file, mode | flags, FILE_MODE)
            except (PermissionError, FileNotFoundError):
                continue
            except OSError as err:
                if err.errno != errno.EROFS:
                    raise
        return None
    root.mkdir(parents=True, exist_ok=True)
    return os.open(lock_file, os.O_RDWR | os.O_CREAT | flags, FILE_MODE)


@contextlib.contextmanager
def directory_lock(
    directory: Path | str,
    *,
    what: str,
    on_wait: Callable[[], None] | None = None,
    shared: bool = False,
) -> Iterator[None]:
    """Hold the lock of ``directory`` (``.regime.lock`` in it): exclusive for a writer,
    ``shared`` for a reader.

    A writer excludes every other holder and a reader excludes writers only, across processes
    and threads, so a reader never sees a half-written directory and two writers never
    interleave; whoever must wait calls ``on_wait`` once, then waits. The lock is the kernel's
    (``flock``): it ends with its process, even a killed one, and no child inherits it (a child
    working for an exclusive holder is told so by :data:`LOCK_HELD_VARIABLE`). Within
    one thread, nesting is free (the same lock again, or a shared one inside an exclusive one);
    an exclusive lock inside a shared one is a ``ValueError`` (it would wait for itself). A
    reader of a directory that does not exist, or where no lock file can be made (read-only),
    reads without a lock. ``what`` names the holder in error messages.
    """
    root = Path(directory)
    held = _held_locks()
    key = lock_key(root)
    if os.environ.get(LOCK_HELD_VARIABLE) == key:  # a child of the holder, working for it
        yield
        return
    if key in held:
        entry = held[key]
        if entry[0] == "shared" and not shared:
            raise ValueError(
                f"{what}: cannot lock {root} for writing inside a read of it (take the "
                "exclusive lock first)"
            )
        entry[1] += 1
        try:
            yield
        finally:
            entry[1] -= 1
        return
    fd: int | None = None
    try:
        fd = _open_lock_file(root, shared)
        if fd is not None:
            operation = fcntl.LOCK_SH if shared else fcntl.LOCK_EX
            try:
                fcntl.flock(fd, operation | fcntl.LOCK_NB)
            except BlockingIOError:
                if on_wait is not None:
                    on_wait()
                fcntl.flock(fd, operation)
    except BaseException as err:
        if fd is not None:
            os.close(fd)
        if isinstance(err, OSError):
            raise ValueError(os_error_message(err, root, f"lock ({what})")) from err
        raise
    if fd is None:
        yield
        return
    held[key] = ["shared" if shared else "exclusive", 1]
    try:
        yield
    finally:
        del held[key]
        os.close(fd)  # releases the lock
