"""Results records: the one file through which a notebook's numbers reach the book.

Every experiment notebook ends with :func:`write_record`, which writes ``<out_dir>/record.json``
atomically. The record holds what is needed to judge a number later: the experiment's config
and its hash, the hashes of its inputs (the prepared-data manifest, the embedding stores), the
package versions, the numbers themselves (a nested dict of finite scalars) and the figures it
saved. Notebooks then *print their numbers by reading the record back* (:func:`load_record`,
:func:`get_number`, :func:`regime_core.runner.wording.format_number`), and the book's ``{rec}``
role reads the same file, so no reported number is ever typed by hand.

Its fields, what each means and holds: ``regime_core.inputs.record.RECORD``.
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
import platform
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from regime_core.inputs import InputError, Text, check_value
from regime_core.inputs.record import CONFIG, INPUTS, NUMBERS, RECORD, RECORD_SCHEMA
from regime_core.integrity import atomic_write_bytes, read_bytes
from regime_core.strict_json import DamagedFileError, read_json

RECORD_FILENAME = "record.json"
#: distributions whose versions every record carries (``python`` is added separately)
VERSIONED_PACKAGES: tuple[str, ...] = (
    "regime-core",
    "numpy",
    "torch",
    "sentence-transformers",
    "scikit-learn",
)

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
    or strings (``regime_core.inputs.record.NUMBERS``); NumPy scalars are converted. NaN,
    infinity, ``None``, lists and keys containing ``.``, ``:`` or ``|`` raise ``ValueError``
    naming the key path. ``figures`` must be files inside ``out_dir``
    (:meth:`regime_core.book.figures.Figure.save`); they are stored relative to it.
    """
    out = Path(out_dir)
    where = str(out / RECORD_FILENAME)
    check_value(Text(), name, where=where, field="name")
    config_kind, config_dict, config_hash = _describe_config(config, where)
    # the numbers' own paths ('a.b'), not 'numbers.a.b': what the notebook handed in
    clean_numbers = check_value(NUMBERS, _python_scalars(numbers), where=f"{where}, numbers",
                                field="")  # fmt: skip
    clean_inputs = check_value(INPUTS, dict(inputs or {}), where=where, field="inputs")
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


def _describe_config(config: Any, where: str) -> tuple[str, dict[str, Any], str]:
    if hasattr(config, "to_dict") and hasattr(config, "config_hash"):
        as_dict = config.to_dict()
        return type(config).__name__, as_dict, str(config.config_hash())
    as_dict = check_value(CONFIG, config, where=where, field="config")  # a mapping of JSON data
    payload = canonical_json({"kind": "dict", **as_dict})
    return "dict", as_dict, hashlib.sha256(payload.encode("utf-8")).hexdigest()[:12]


def _python_scalars(node: Any) -> Any:
    """``node`` with every NumPy scalar (or 0-d array) replaced by the Python value it holds."""
    if isinstance(node, Mapping):
        return {key: _python_scalars(value) for key, value in node.items()}
    return node.item() if getattr(node, "shape", None) == () and hasattr(node, "item") else node


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

        def absent(part: str) -> KeyError:
            return KeyError(f"record {self.name!r} has no node {key!r} (at {part!r})")

        node = _walk(self.body["numbers"], key, absent)
        if not isinstance(node, Mapping):
            raise KeyError(f"record {self.name!r}: {key!r} is a number, not a node")
        return node

    def config_text(self, key: str, display: Callable[[str, Any], str] | None = None) -> str:
        """A config value in words: ``display(field, value)`` (the book's display names, by
        default ``str``) joined by commas for a list, "all" for ``None``."""
        show = display or (lambda field, value: str(value))
        absent = f"record {self.name!r} has no config field {key!r}"
        node = _walk(self.body["config"], key, lambda _part: KeyError(absent))
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
        record = read_json(file, hint)  # DamagedFileError when it is not UTF-8 or strict JSON
    except FileNotFoundError:
        raise FileNotFoundError(f"no results record at {file}") from None
    try:
        RECORD.read(record, where=str(file))  # checked only: the hashes cover the bytes as read
    except InputError as err:
        raise DamagedFileError(f"{err}; {hint}") from err
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
    node = _walk(record["numbers"], key, lambda _part: MissingNumberError(record, key))
    if isinstance(node, Mapping):
        children = ", ".join(f"{key}.{k}" for k in list(node)[:8])
        raise KeyError(
            f"record {record.get('name', '?')!r}: {key!r} is a group, not a number; "
            f"its keys include: {children}"
        )
    return node


def _walk(node: Any, key: str, absent: Callable[[str], KeyError]) -> Any:
    """What dotted ``key`` names under ``node``; ``absent(part)`` is raised at the first part
    that is not there."""
    for part in key.split("."):
        if not isinstance(node, Mapping) or part not in node:
            raise absent(part)
        node = node[part]
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
        keys = list(iter_number_keys(self.record["numbers"]))
        near = difflib.get_close_matches(self.key, keys, n=5, cutoff=0.5) or keys[:5]
        hint = ", ".join(near) if near else "(the record has no numbers)"
        name = self.record.get("name", "?")
        return f"record {name!r} has no number {self.key!r}; near keys: {hint}"
