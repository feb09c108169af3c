"""A variant's identity: everything that changes its numbers, hashed into its folder's name.

A run's config hash covers its config's fields only. A notebook also reads what its other
parameters name (``zero_shot_transfer``'s ``router_file`` and ``train_record``,
``router_train``'s ``selector_datasets``, the exercises' ``my_predictions``) and the records of
the runs upstream of it. Two executions that differ in any of these must not share a folder, and
the label of a variant must name what differs. So a variant's *inputs* are:

* every notebook parameter that is not a config field (nor ``output_dir``, ``work_dir``,
  ``profile``, which say where, not what): its value, and, for a parameter naming a file
  (the ``files`` field of :class:`regime_core.runner.runs.Run`), the sha256 of that file and where
  it was found;
* the default record of every run upstream of it (``<work>/results/<run>/record.json``): its sha256.

:func:`variant_hash` hashes them (never their paths, which depend on the machine) with the config
hash. :func:`regime_core.registry.start` (a notebook run by hand) and ``regime reproduce --set``
compute it the same way, so they land in the same folder, and each writes :data:`IDENTITY_FILE`
there: the inputs and those of the default run, which label the variant.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from regime_core import paths
from regime_core.inputs.record import VARIANT_IDENTITY
from regime_core.integrity import atomic_write_bytes
from regime_core.runner.declarations import OUTPUT_DIR_PARAMETER
from regime_core.runner.records import canonical_json, hash_file
from regime_core.strict_json import read_json_file

#: the file beside a variant's record naming its inputs and the default run's
IDENTITY_FILE = "variant.json"
#: parameters that say where a run reads or writes, not what: never part of an identity
WHERE_PARAMETERS: frozenset[str] = frozenset({OUTPUT_DIR_PARAMETER, "work_dir", "profile"})
#: the value of ``sha256`` for a file or record that does not exist (yet)
ABSENT = "absent"
#: how a parameter naming a file is resolved: ``(value, work) -> Path`` (whether or not the file
#: exists: a missing one is :data:`ABSENT`)
Resolver = Callable[[Any, Path], Path]


def input_entry(value: Any, file: Path | None, work: Path) -> dict[str, Any]:
    """One input: its value and, when it names a file, that file's sha256 and origin (the path,
    relative to ``work`` when inside it; a missing file's sha256 is :data:`ABSENT`)."""
    entry: dict[str, Any] = {"value": value}
    if file is None:
        return entry
    try:
        origin = str(file.resolve().relative_to(work.resolve()))
        origin = f"<work>/{origin}"
    except ValueError:
        origin = str(file)
    entry["origin"] = origin
    entry["sha256"] = hash_file(file) if file.is_file() else ABSENT
    return entry


def describe_inputs(
    parameters: Mapping[str, Any],
    *,
    config_fields: frozenset[str] | set[str],
    files: Mapping[str, Resolver],
    upstream: Sequence[str],
    work: Path,
) -> dict[str, dict[str, Any]]:
    """The inputs of an execution with ``parameters`` (see the module docstring): every
    parameter outside the config, a file's content hash where ``files`` resolves it, and
    ``record:<run>`` for every run in ``upstream``."""
    inputs: dict[str, dict[str, Any]] = {}
    for name in sorted(parameters):
        if name in config_fields or name in WHERE_PARAMETERS:
            continue
        value = parameters[name]
        file = files[name](value, work) if name in files else None
        inputs[name] = input_entry(value, file, work)
    for run_id in sorted(upstream):
        record = paths.results_dir(work) / run_id / "record.json"
        inputs[f"record:{run_id}"] = input_entry(None, record, work)
    return inputs


def variant_hash(config_hash: str, inputs: Mapping[str, Mapping[str, Any]]) -> str:
    """The name of the variant's folder: its config hash when it has no input, else a hash of
    the config hash and each input's value and content hash (not its origin), as long as the
    config hash; pure.

    >>> variant_hash("0123456789ab", {})
    '0123456789ab'
    >>> a = variant_hash("0123456789ab", {"router_file": {"value": "x", "sha256": "1"}})
    >>> b = variant_hash("0123456789ab", {"router_file": {"value": "x", "sha256": "2"}})
    >>> len(a), a != b, a != "0123456789ab"
    (12, True, True)
    """
    if not inputs:
        return config_hash
    hashed = {name: _content(entry) for name, entry in inputs.items()}
    text = canonical_json({"config_hash": config_hash, "inputs": hashed})
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[: len(config_hash)]


def input_text(entry: Mapping[str, Any] | None) -> str:
    """An input in a reader's words: its value, then the file's hash and origin; pure.

    >>> input_text({"value": "trained", "sha256": "ab" * 32, "origin": "<work>/r.json"})
    'trained (sha256 abababababab, <work>/r.json)'
    >>> input_text({"value": None, "sha256": "absent", "origin": "<work>/r.json"})
    'absent (<work>/r.json)'
    """
    if entry is None:
        return "none"
    value = entry.get("value")
    if "sha256" not in entry:
        return repr(value)
    digest = entry["sha256"]
    shown = ABSENT if digest == ABSENT else f"sha256 {str(digest)[:12]}"
    if value is None:
        return f"{shown} ({entry['origin']})"
    return f"{value} ({shown}, {entry['origin']})"


def input_differences(
    default: Mapping[str, Mapping[str, Any]], variant: Mapping[str, Mapping[str, Any]]
) -> dict[str, dict[str, str]]:
    """The inputs whose value or content differ between the default run's and a variant's,
    each side in :func:`input_text`'s words; pure.

    >>> input_differences({"n": {"value": 1}}, {"n": {"value": 2}})
    {'n': {'default': '1', 'variant': '2'}}
    """
    return {
        name: {"default": input_text(default.get(name)), "variant": input_text(variant.get(name))}
        for name in sorted(set(default) | set(variant))
        if _content(default.get(name)) != _content(variant.get(name))
    }


def _content(entry: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """An input without its origin (a path of this machine): what tells two inputs apart."""
    return None if entry is None else {k: v for k, v in entry.items() if k != "origin"}


def write_identity(
    folder: Path,
    *,
    run_id: str,
    config_hash: str,
    inputs: Mapping[str, Any],
    default_inputs: Mapping[str, Any],
) -> Path:
    """Write :data:`IDENTITY_FILE` into the variant's ``folder`` (atomically); returns it."""
    file = folder / IDENTITY_FILE
    body = {
        "run": run_id,
        "config_hash": config_hash,
        "variant_hash": variant_hash(config_hash, inputs),
        "inputs": dict(inputs),
        "default_inputs": dict(default_inputs),
    }
    atomic_write_bytes(file, (canonical_json(body) + "\n").encode("utf-8"))
    return file


def read_identity(folder: Path) -> dict[str, Any] | None:
    """The identity written beside a variant's record, or None when there is none (a folder
    written before identities were)."""
    file = folder / IDENTITY_FILE
    if not file.is_file():
        return None
    return VARIANT_IDENTITY.read(read_json_file(file), where=f"{file} (remove the file)")
