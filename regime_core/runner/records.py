"""Results records: the one file through which a notebook's numbers reach the book.

Every experiment notebook ends with :func:`write_record`, which writes ``<out_dir>/record.json``
atomically. The record holds what is needed to judge a number later: the experiment's config
and its hash, the hashes of its inputs (the prepared-data manifest, the embedding stores), the
package versions, the numbers themselves (a nested dict of finite scalars) and the figures it
saved. Notebooks then *print their numbers by reading the record back* (:func:`load_record`,
:func:`get_number`, :func:`regime_core.runner.wording.format_number`), and the book's ``{rec}``
role reads the same file, so no reported number is ever typed by hand.

Record layout (``schema`` ``regime-record/1``)::

    {"schema": "regime-record/1", "name": "t2_minilm",
     "config_kind": "T2Config", "config": {...}, "config_hash": "3f2a...",
     "inputs": {"manifest": "sha256..."}, "versions": {"numpy": "2.4.6", ...},
     "numbers": {"cells": {"B-dominant": {"delta_hit@5": 0.12}}},
     "figures": ["hit_by_regime.svg"],
     "record_hash": "sha256 of everything above", "created": "2026-11-29T12:00:00Z"}

``record_hash`` covers every field except ``created``, so two runs that produce the same
numbers from the same inputs have the same hash, and :func:`load_record` detects a hand-edited
record. ``content_sha256`` covers every field including ``created`` and ``record_hash``, so no
byte of a record can change unnoticed. Records are written ``0644`` (readable by the group).

>>> import tempfile
>>> out = Path(tempfile.mkdtemp())
>>> path = write_record(out, name="demo", config={"alpha": 0.25},
...                     numbers={"cells": {"B-dominant": {"delta_hit@5": 0.1234}}})
>>> get_number(load_record(path), "cells.B-dominant.delta_hit@5")
0.1234
"""

from __future__ import annotations

import datetime as _dt
import difflib
import hashlib
import json
import math
import numbers as _numbers
import platform
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from regime_core.integrity import atomic_write_bytes, read_bytes
from regime_core.strict_json import DamagedFileError, JSONProblem, parse_json

RECORD_SCHEMA = "regime-record/1"
RECORD_FILENAME = "record.json"
#: distributions whose versions every record carries (``python`` is added separately)
VERSIONED_PACKAGES: tuple[str, ...] = (
    "regime-core",
    "numpy",
    "torch",
    "sentence-transformers",
    "scikit-learn",
)
#: characters a number key may not contain: ``.`` separates levels in dotted keys, ``:`` and
#: ``|`` are the run and format separators of the book's ``{rec}`` role.
_FORBIDDEN_KEY_CHARS = frozenset(".:|")
_REQUIRED_FIELDS: dict[str, type | tuple[type, ...]] = {
    "schema": str,
    "name": str,
    "config_kind": str,
    "config": dict,
    "config_hash": str,
    "inputs": dict,
    "versions": dict,
    "numbers": dict,
    "figures": list,
    "record_hash": str,
    "created": str,
    "content_sha256": str,
}

Scalar = int | float | str | bool


# --- writing -------------------------------------------------------------------------------------


def write_record(
    out_dir: Path | str,
    *,
    name: str,
    config: Any,
    numbers: Mapping[str, Any],
    inputs: Mapping[str, str] | None = None,
    figures: Sequence[Path | str] = (),
) -> Path:
    """Validate and atomically write ``out_dir/record.json``; return its path.

    ``config`` is a frozen config dataclass using :class:`regime_core.config.ConfigMixin` (its
    ``to_dict()`` and ``config_hash()`` are stored) or a plain mapping of JSON values (hashed the
    same canonical way). ``numbers`` is a nested dict whose leaves are finite ints/floats, bools
    or strings; NumPy scalars are converted. NaN, infinity, ``None``, lists and keys containing
    ``.``, ``:`` or ``|`` raise ``ValueError`` naming the key path. ``figures`` must be files
    inside ``out_dir`` (:meth:`regime_core.book.figures.Figure.save`); they are stored relative
    to it.
    """
    out = Path(out_dir)
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"record name must be a non-empty string, got {name!r}")
    config_kind, config_dict, config_hash = _describe_config(config)
    clean_numbers = _clean_numbers(numbers, path=())
    clean_inputs = _clean_inputs(inputs)
    out.mkdir(parents=True, exist_ok=True)
    figure_paths = [_relative_figure(out, fig) for fig in figures]
    body: dict[str, Any] = {
        "schema": RECORD_SCHEMA,
        "name": name,
        "config_kind": config_kind,
        "config": config_dict,
        "config_hash": config_hash,
        "inputs": clean_inputs,
        "versions": package_versions(),
        "numbers": clean_numbers,
        "figures": figure_paths,
    }
    body["record_hash"] = _record_hash(body)
    body["created"] = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    body["content_sha256"] = _content_hash(body)
    target = out / RECORD_FILENAME
    atomic_write_text(target, json.dumps(body, indent=2, sort_keys=False, allow_nan=False) + "\n")
    return target


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` via a uniquely named temporary file and ``os.replace`` (never
    half a file), mode 0644; path and permission problems raise ValueError naming ``path``."""
    atomic_write_bytes(path, text.encode("utf-8"))


def package_versions() -> dict[str, str | None]:
    """Versions of :data:`VERSIONED_PACKAGES` (``None`` when not installed) and of Python."""
    versions: dict[str, str | None] = {}
    for dist in VERSIONED_PACKAGES:
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist] = None
    versions["python"] = platform.python_version()
    return versions


def hash_file(path: Path | str) -> str:
    """SHA-256 of an input file's bytes, e.g. for ``inputs={"manifest": hash_file(manifest)}``.

    A missing file is a ``FileNotFoundError`` saying which part of its path is missing (a
    notebook's ``work_dir`` parameter naming no directory, say); a FIFO, device or directory is
    a ``ValueError`` naming it (:func:`regime_core.integrity.read_bytes`).
    """
    file = Path(path)
    try:
        return hashlib.sha256(read_bytes(file)).hexdigest()
    except FileNotFoundError:
        missing = file
        while not missing.parent.exists() and missing.parent != missing:
            missing = missing.parent
        hint = (
            f"the directory {missing} does not exist"
            if missing != file
            else f"{file.parent} has no {file.name}"
        )
        raise FileNotFoundError(
            f"input file {file} does not exist: {hint}. A notebook reads its inputs under the "
            "work directory its work_dir parameter (or REGIME_WORK_DIR) names: pass the one "
            "`regime data prepare --work DIR` filled"
        ) from None


def canonical_json(value: Any) -> str:
    """The JSON text hashes are computed over: sorted keys, no whitespace, no NaN."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)


def _content_hash(body: Mapping[str, Any]) -> str:
    hashed = {k: v for k, v in body.items() if k != "content_sha256"}
    return hashlib.sha256(canonical_json(hashed).encode("utf-8")).hexdigest()


def _rebuild_hint(file: Path) -> str:
    """The command that rewrites a record: its directory is named after the run; a variant's
    (``<work>/variants/<run>/<config hash>``: :func:`regime_core.paths.variant_dir`) is
    rewritten by running its notebook by hand again."""
    if file.parent.parent.parent.name == "variants":
        return (
            f"rerun the notebook of run {file.parent.parent.name!r} by hand with the same "
            "parameters, or remove the folder"
        )
    return f"rebuild it with `regime reproduce --only {file.parent.name} --force`"


def _record_hash(body: Mapping[str, Any]) -> str:
    hashed = {
        k: v for k, v in body.items() if k not in ("record_hash", "created", "content_sha256")
    }
    return hashlib.sha256(canonical_json(hashed).encode("utf-8")).hexdigest()


def _describe_config(config: Any) -> tuple[str, dict[str, Any], str]:
    if hasattr(config, "to_dict") and hasattr(config, "config_hash"):
        as_dict = config.to_dict()
        return type(config).__name__, as_dict, str(config.config_hash())
    if isinstance(config, Mapping):
        as_dict = {str(k): v for k, v in config.items()}
        try:
            payload = canonical_json({"kind": "dict", **as_dict})
        except (TypeError, ValueError) as err:
            raise ValueError(f"record config must be JSON-serialisable: {err}") from err
        return "dict", as_dict, hashlib.sha256(payload.encode("utf-8")).hexdigest()[:12]
    raise ValueError(
        "record config must be a config dataclass (regime_core.config.ConfigMixin) or a dict, "
        f"got {type(config).__name__}"
    )


def _clean_inputs(inputs: Mapping[str, str] | None) -> dict[str, str]:
    if inputs is None:
        return {}
    clean: dict[str, str] = {}
    for key, value in inputs.items():
        if not isinstance(key, str) or not isinstance(value, str) or not value:
            raise ValueError(
                f"record inputs must map names to hash strings; got {key!r}: {value!r}"
            )
        clean[key] = value
    return clean


def _clean_numbers(node: Mapping[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(node, Mapping):
        raise ValueError(f"record numbers at {_show(path)}: expected a dict, got {type(node)}")
    clean: dict[str, Any] = {}
    for key, value in node.items():
        if not isinstance(key, str) or not key:
            raise ValueError(f"record numbers at {_show(path)}: key {key!r} is not a string")
        bad = _FORBIDDEN_KEY_CHARS.intersection(key)
        if bad:
            raise ValueError(
                f"record numbers key {_show((*path, key))!r} contains {''.join(sorted(bad))!r}; "
                "'.' separates levels and ':' / '|' are reserved by the book's {rec} role"
            )
        here = (*path, key)
        if isinstance(value, Mapping):
            clean[key] = _clean_numbers(value, here)
        else:
            clean[key] = _clean_scalar(value, here)
    return clean


def _clean_scalar(value: Any, path: tuple[str, ...]) -> Scalar:
    if isinstance(value, bool | str):
        return value
    if hasattr(value, "item") and getattr(value, "shape", None) == ():  # NumPy scalar or 0-d
        value = value.item()
    if isinstance(value, bool):
        return value
    if isinstance(value, _numbers.Integral):
        return int(value)
    if isinstance(value, _numbers.Real):
        as_float = float(value)
        if not math.isfinite(as_float):
            raise ValueError(
                f"record number {_show(path)!r} is {as_float!r}; records hold finite numbers "
                "only (report the count of undefined cases instead)"
            )
        return as_float
    raise ValueError(
        f"record number {_show(path)!r} has type {type(value).__name__}; leaves must be "
        "int, float, bool or str (use a dict keyed by name instead of a list)"
    )


def _show(path: tuple[str, ...]) -> str:
    return ".".join(path) if path else "<top>"


def _relative_figure(out: Path, figure: Path | str) -> str:
    fig = Path(figure)
    candidate = fig if fig.is_absolute() else out / fig
    if not candidate.is_file() and not fig.is_absolute() and fig.is_file():
        candidate = fig  # a path relative to the working directory
    if not candidate.is_file():
        raise ValueError(f"record figure {figure} does not exist (looked at {candidate})")
    try:
        return candidate.resolve().relative_to(out.resolve()).as_posix()
    except ValueError as err:
        raise ValueError(
            f"record figure {candidate} is outside the record directory {out}; "
            "save it there with Figure.save(out_dir)"
        ) from err


# --- reading -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, eq=False)
class Record(Mapping[str, Any]):
    """A record as :func:`load_record` read and checked it, trusted by whatever reads it (a test
    builds one from a plain ``body``): its fields by name, its numbers by dotted key."""

    body: Mapping[str, Any]
    #: the file it was read from (None: built in memory)
    file: Path | None = None

    def __getitem__(self, key: str) -> Any:
        return self.body[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.body)

    def __len__(self) -> int:
        return len(self.body)

    @property
    def name(self) -> str:
        return str(self.body.get("name", "?"))

    def number(self, key: str) -> Scalar:
        """The number at dotted ``key`` of its numbers (:func:`get_number`)."""
        return get_number(self, key)

    def has(self, key: str) -> bool:
        """Whether dotted ``key`` names a number of it."""
        try:
            get_number(self, key)
        except KeyError:
            return False
        return True

    def node(self, key: str) -> Mapping[str, Any]:
        """The group of numbers at dotted ``key`` (``KeyError`` naming the part absent)."""
        node: Any = self.body["numbers"]
        for part in key.split("."):
            if not isinstance(node, Mapping) or part not in node:
                raise KeyError(f"record {self.name!r} has no node {key!r} (at {part!r})")
            node = node[part]
        if not isinstance(node, Mapping):
            raise KeyError(f"record {self.name!r}: {key!r} is a number, not a node")
        return node

    def config_text(self, key: str, display: Callable[[str, Any], str] | None = None) -> str:
        """A config value in words: ``display(field, value)`` (the book's display names, by
        default ``str``) joined by commas for a list, "all" for ``None``."""
        show = display or (lambda field, value: str(value))
        node: Any = self.body["config"]
        for part in key.split("."):
            if not isinstance(node, Mapping) or part not in node:
                raise KeyError(f"record {self.name!r} has no config field {key!r}")
            node = node[part]
        if node is None:
            return "all"
        field = key.rsplit(".", 1)[-1]
        if isinstance(node, list | tuple):
            return ", ".join(show(field, v) for v in node)
        return show(field, node)


def record_path(path: Path | str) -> Path:
    """``path`` itself if it names a ``.json`` file, else ``path/record.json``."""
    p = Path(path)
    return p if p.suffix == ".json" and not p.is_dir() else p / RECORD_FILENAME


def load_record(path: Path | str) -> Record:
    """Read and validate a record (a ``record.json`` or the directory holding it).

    Raises ``FileNotFoundError`` if it is missing and ``ValueError`` naming the file and the field
    if its structure is wrong, a number is not finite, or its ``record_hash`` does not match (the
    file was edited by hand).
    """
    file = record_path(path)
    hint = _rebuild_hint(file)
    try:
        raw = read_bytes(file)
    except FileNotFoundError:
        raise FileNotFoundError(f"no results record at {file}") from None
    try:
        record = parse_json(raw.decode("utf-8"), str(file))
    except UnicodeDecodeError as err:
        raise DamagedFileError(f"{file}: damaged, not UTF-8 (byte {err.start}); {hint}") from err
    except JSONProblem as err:
        raise DamagedFileError(f"{err}; {hint}") from err
    if not isinstance(record, dict):
        raise DamagedFileError(
            f"{file}: a record is a JSON object, got {type(record).__name__}; {hint}"
        )
    for field, kind in _REQUIRED_FIELDS.items():
        if field not in record:
            raise DamagedFileError(f"{file}: missing field {field!r}; {hint}")
        if not isinstance(record[field], kind):
            raise DamagedFileError(
                f"{file}: field {field!r} has type {type(record[field]).__name__}; {hint}"
            )
    if record["schema"] != RECORD_SCHEMA:
        raise DamagedFileError(
            f"{file}: schema {record['schema']!r}, expected {RECORD_SCHEMA!r}; {hint}"
        )
    try:
        _clean_numbers(record["numbers"], path=())
    except ValueError as err:
        raise DamagedFileError(f"{file}: {err}; {hint}") from err
    if _record_hash(record) != record["record_hash"]:
        raise DamagedFileError(
            f"{file}: record_hash does not match the contents; the record was edited or damaged "
            f"after it was written; {hint}"
        )
    if _content_hash(record) != record["content_sha256"]:
        raise DamagedFileError(
            f"{file}: content_sha256 does not match the contents (its created time or hash "
            f"was edited or damaged); {hint}"
        )
    return Record(record, file)


def iter_number_keys(numbers: Mapping[str, Any], prefix: str = "") -> Iterator[str]:
    """Every dotted key of a nested numbers dict, leaves only, in insertion order."""
    for key, value in numbers.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping):
            yield from iter_number_keys(value, prefix=f"{dotted}.")
        else:
            yield dotted


def get_number(record: Mapping[str, Any], key: str) -> Scalar:
    """The number at dotted ``key`` in ``record["numbers"]``; ``KeyError`` with the nearest
    existing keys when ``key`` is absent or names a group.

    >>> rec = {"name": "t2", "numbers": {"cells": {"B-dominant": {"hit@5": 0.5}}}}
    >>> get_number(rec, "cells.B-dominant.hit@5")
    0.5
    """
    node: Any = record["numbers"]
    for part in key.split("."):
        if not isinstance(node, Mapping) or part not in node:
            raise MissingNumberError(record, key)
        node = node[part]
    if isinstance(node, Mapping):
        children = ", ".join(f"{key}.{k}" for k in list(node)[:8])
        raise KeyError(
            f"record {record.get('name', '?')!r}: {key!r} is a group, not a number; "
            f"its keys include: {children}"
        )
    return node


class MissingNumberError(KeyError):
    """A number absent from a record. Its message names the nearest keys, a fuzzy search over
    every key of the record, made only when the message is read: the verdicts probe records
    for keys they may lack (a diagnosis's alternatives), and searching on every probe made the
    book step spend most of its time in ``difflib``."""

    def __init__(self, record: Mapping[str, Any], key: str) -> None:
        super().__init__(key)
        self.record, self.key = record, key

    def __str__(self) -> str:
        return _missing_key_message(self.record, self.key)


def _missing_key_message(record: Mapping[str, Any], key: str) -> str:
    keys = list(iter_number_keys(record["numbers"]))
    near = difflib.get_close_matches(key, keys, n=5, cutoff=0.5)
    if not near:
        near = keys[:5]
    hint = ", ".join(near) if near else "(the record has no numbers)"
    return f"record {record.get('name', '?')!r} has no number {key!r}; near keys: {hint}"
