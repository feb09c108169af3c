"""The prepared store: the manifest, its seal and the loaders of prepared examples.

Integrity: the manifest records each ``<dataset>.jsonl``'s sha256 and its own
(``manifest_sha256``); :func:`load_examples` refuses a file that does not match, naming it and
the ``prepare`` command that rebuilds it.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import warnings
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from regime_core import config, paths
from regime_core.inputs import InputError
from regime_core.inputs.manifest import MANIFEST
from regime_core.inputs.prepared_example import EXAMPLE
from regime_core.integrity import canonical_bytes, read_bytes, sha256_hex, write_if_changed
from regime_core.locks import directory_lock
from regime_core.schema import DATASETS, SPLITS, Example, Passage
from regime_core.strict_json import DamagedFileError, parse_json, read_json

PREPARED_DATASETS: tuple[str, ...] = config.DATASETS
TOYWORLD = "toyworld"  # generated on demand (regime_core.data.toyworld), never prepared
MANIFEST_NAME = "manifest.json"
MANIFEST_SCHEMA = 1
MANIFEST_HASH_KEY = "manifest_sha256"  # sha256 of the manifest's other keys, canonical JSON
#: the counts ``regime data stats`` shows: every entry ``prepare`` writes has them
STATS_KEYS: tuple[str, ...] = (
    "questions",
    "two_hop",
    "by_type",
    "parallel",
    "excluded",
    "excluded_by_split",
    "hop_order_rules",
    "relation_sources",
    "type_rules",
    "title_match",
    "records_read",
    "corpus_passages",
    "filled",  # a regime-twohop/1 file's only: what the built-in rules filled
)


def package_version() -> str:
    try:
        return importlib.metadata.version("regime-core")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - source checkout
        return "0+unknown"


def counts(values: Iterable[str]) -> dict[str, int]:
    return dict(sorted(Counter(values).items()))


def per_split(items: Iterable[str]) -> dict[str, int]:
    found = Counter(items)
    return {split: found.get(split, 0) for split in SPLITS}


def example_counts(
    examples: Sequence[Example], excluded: Sequence[tuple[str, str]]
) -> dict[str, Any]:
    """The counts of a manifest entry every origin shares; ``excluded`` holds the
    ``(split, reason)`` of each question left out."""
    return {
        "two_hop": per_split(ex.split for ex in examples),
        "by_type": counts(ex.native_type for ex in examples),
        "parallel": sum(ex.parallel for ex in examples),
        "excluded": counts(reason for _, reason in excluded),
        "excluded_by_split": {
            split: counts(reason for s, reason in excluded if s == split) for split in SPLITS
        },
        "hop_order_rules": counts(ex.hop_order_rule for ex in examples),
        "relation_sources": counts(ex.relation_source for ex in examples),
        "corpus_passages": len({p.pid for ex in examples for p in ex.pool}),
    }


def examples_jsonl(examples: Iterable[Example]) -> bytes:
    lines = [
        json.dumps(ex.to_dict(), ensure_ascii=False, separators=(",", ":"))
        for ex in sorted(examples, key=lambda e: e.id)
    ]
    return ("\n".join(lines) + "\n" if lines else "").encode("utf-8")


def new_manifest() -> dict[str, Any]:
    """The top of a manifest that has no dataset yet."""
    return {
        "schema": MANIFEST_SCHEMA,
        "version": package_version(),
        "strict": True,
        "datasets": {},
        "ignored_files": [],
    }


def write_manifest(path: Path, manifest: dict[str, Any]) -> dict[str, Any]:
    """Seal ``manifest`` with its sha256 (``manifest_sha256``, replacing an old one) and write
    it to ``path``; returns it. The caller holds the directory's lock."""
    manifest.pop(MANIFEST_HASH_KEY, None)
    manifest[MANIFEST_HASH_KEY] = sha256_hex(canonical_bytes(manifest))
    text = json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    write_if_changed(path, text.encode("utf-8"))
    return manifest


def read_manifest_if_compatible(path: Path) -> dict[str, Any]:
    """The previous manifest, whose entries for datasets not prepared now are kept. A damaged
    one is replaced, with a warning naming it: its entries cannot be trusted, and the datasets
    it described then fail to load until prepared again (their files have no recorded hash)."""
    if not path.exists():
        return {}
    try:
        manifest = _read_verified_manifest(path)
    except DamagedFileError as err:
        warnings.warn(
            f"{err}; replacing it: datasets not prepared by this run must be prepared again",
            stacklevel=3,
        )
        return {}
    if manifest.get("schema") != MANIFEST_SCHEMA or manifest.get("version") != package_version():
        return {}
    return manifest


def _read_verified_manifest(path: Path) -> dict[str, Any]:
    rebuild = "rebuild it with `regime data prepare`"
    manifest = read_json(path, rebuild)
    try:  # its fields (a missing sha256: written by an older version, or edited), then its seal
        MANIFEST.read(manifest, where=str(path))  # only checked: readers get the sealed mapping
    except InputError as err:
        raise DamagedFileError(f"{err}; {rebuild}") from err
    unsealed = {k: v for k, v in manifest.items() if k != MANIFEST_HASH_KEY}
    if manifest[MANIFEST_HASH_KEY] != sha256_hex(canonical_bytes(unsealed)):
        raise DamagedFileError(
            f"{path} is damaged or edited (it does not match its sha256); {rebuild}"
        )
    return manifest


# --- loading ---------------------------------------------------------------------------------


#: The dataset names of each manifest read, by the sha256 of its bytes: a config checks its
#: datasets whenever it is built (the robustness run builds one per reading).
_KNOWN_BY_MANIFEST: dict[str, tuple[str, ...]] = {}


def known_datasets(work: Path | str | None = None) -> tuple[str, ...]:
    """Every name a command or an experiment accepts as a dataset: the built-in ones
    (``schema.DATASETS``: the three prepared datasets and ``toyworld``, prepared or not), then
    the datasets of one's own prepared under ``work`` (``regime data prepare --jsonl FILE
    --name NAME``), sorted. A damaged manifest is an error naming it; a manifest is parsed and
    verified once per content."""
    path = paths.prepared_dir(work) / MANIFEST_NAME
    if not os.path.lexists(path):
        return DATASETS
    digest = sha256_hex(read_bytes(path))
    if digest not in _KNOWN_BY_MANIFEST:
        names = _read_verified_manifest(path)["datasets"]
        _KNOWN_BY_MANIFEST[digest] = (*DATASETS, *sorted(n for n in names if n not in DATASETS))
    return _KNOWN_BY_MANIFEST[digest]


def _rebuild_hint(dataset: str, entry: Any = None) -> str:
    """The command that prepares ``dataset`` (again)."""
    if entry is not None and entry.get("origin") == "jsonl":  # an entry of a read manifest
        files = entry.get("files") or [{}]
        return f"regime data prepare --jsonl {files[0].get('source', 'FILE')} --name {dataset}"
    if dataset in PREPARED_DATASETS:
        return f"regime data prepare --dataset {dataset}"
    return f"regime data prepare --jsonl FILE --name {dataset}"


def _unknown_dataset(dataset: str, known: Sequence[str]) -> ValueError:
    return ValueError(
        f"unknown dataset {dataset!r}; known datasets: {', '.join(known)} (prepare one of your "
        "own with `regime data prepare --jsonl FILE --name NAME`)"
    )


def _check_dataset(dataset: str, work: Path | str | None = None) -> None:
    """``dataset`` is built in, or prepared under ``work`` from a file of one's own (whose
    name ``prepare`` checked)."""
    if dataset not in DATASETS and dataset not in (known := known_datasets(work)):
        raise _unknown_dataset(dataset, known)


def load_manifest(work: Path | None = None) -> dict[str, Any]:
    path = paths.prepared_dir(work) / MANIFEST_NAME
    if not path.exists():
        raise ValueError(f"no manifest at {path}; run `regime data prepare` first")
    return _read_verified_manifest(path)


def load_examples(
    dataset: str, *, split: str | None = None, work: Path | None = None
) -> list[Example]:
    """The prepared examples of one dataset (optionally one split), in id order.

    ``toyworld`` needs no preparation: its examples are generated (``ToyWorldConfig()``, both
    splits when ``split`` is None) and ``work`` is ignored.
    """
    _check_dataset(dataset, work)
    if split is not None and split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; known splits: {', '.join(SPLITS)}")
    if dataset == TOYWORLD:
        return _toyworld_examples(split)
    path = paths.prepared_dir(work) / f"{dataset}.jsonl"
    if not path.exists():
        raise ValueError(f"no prepared examples at {path}: run `{_rebuild_hint(dataset)}` first")
    raw = _verified_examples_bytes(path, dataset, work)
    examples: list[Example] = []
    for lineno, line in enumerate(raw.decode("utf-8").split("\n"), start=1):
        if not line.strip():
            continue
        where = f"{path}, line {lineno}"
        examples.append(read_example(parse_json(line, where), where))
    return [ex for ex in examples if split is None or ex.split == split]


def read_example(record: Any, where: str) -> Example:
    """One parsed line of a prepared file as an :class:`Example` (pure): its fields read by
    :data:`regime_core.inputs.prepared_example.EXAMPLE`, then its cross-field invariants
    (:meth:`Example.validate`); ``ValueError`` naming ``where`` (file, line, id) and the
    field otherwise."""
    if isinstance(record, dict) and isinstance(record.get("id"), str):
        where = f"{where} (id {record['id']!r})"
    values = EXAMPLE.read(record, where=where)
    pool = tuple(Passage(**passage) for passage in values.pop("pool"))
    example = Example(pool=pool, **values)
    example.validate(where)
    return example


def _wait_for_writer(directory: Path) -> bool:
    """Wait until no ``prepare`` holds ``directory``; False if it cannot be locked (read-only)."""
    try:
        with directory_lock(directory, what="reading prepared data"):
            return True
    except ValueError:
        return False


def _verified_examples_bytes(path: Path, dataset: str, work: Path | None) -> bytes:
    """The bytes of ``<dataset>.jsonl``, checked against the sha256 the manifest recorded.

    A file cut at a line boundary still parses, so only the hash tells it is short. A
    mismatch seen while a ``prepare`` is rewriting the directory is retried once under its
    lock (the writer replaces the file before the manifest).
    """
    for attempt in range(2):
        manifest = load_manifest(work)
        described = manifest["datasets"].get(dataset, {})
        rebuild = f"rebuild it with `{_rebuild_hint(dataset, described)}`"
        expected = described.get("examples_file", {}).get("sha256")
        if expected is None:
            raise DamagedFileError(
                f"{path}: the manifest {path.parent / MANIFEST_NAME} records no sha256 for it; "
                f"{rebuild}"
            )
        raw = read_bytes(path)
        if sha256_hex(raw) == expected:
            break
        if attempt == 0 and _wait_for_writer(path.parent):
            continue
        raise DamagedFileError(
            f"{path} is damaged or edited: its sha256 differs from the one `regime data "
            f"prepare` recorded in {path.parent / MANIFEST_NAME}; {rebuild}"
        )
    return raw  # the bytes prepare wrote: UTF-8 JSON Lines


def _toyworld_examples(split: str | None) -> list[Example]:
    from regime_core.data import toyworld

    splits = SPLITS if split is None else (split,)
    return [ex for s in splits for ex in toyworld.load_examples(split=s)]


def toyworld_stats() -> dict[str, Any]:
    """The ``dataset_stats`` keys for the generated ``toyworld`` (both splits; nothing is
    excluded, so ``questions`` equals ``two_hop``)."""
    examples = _toyworld_examples(None)
    return {
        "dataset": TOYWORLD,
        "questions": per_split(ex.split for ex in examples),
        **example_counts(examples, ()),
        "files": [],
        "version": package_version(),
    }


def dataset_stats(manifest: dict[str, Any], dataset: str) -> dict[str, Any]:
    """The object ``regime data stats DATASET --json`` prints (``toyworld``: computed from the
    generated examples, see :func:`toyworld_stats`; the manifest is not read)."""
    entry = manifest.get("datasets", {}).get(dataset)
    if entry is None and dataset not in DATASETS:
        known = [*DATASETS, *sorted(n for n in manifest.get("datasets", {}) if n not in DATASETS)]
        raise _unknown_dataset(dataset, known)
    if dataset == TOYWORLD:
        return toyworld_stats()
    rebuild = f"run `{_rebuild_hint(dataset, entry)}`"
    if entry is None:
        raise ValueError(f"the manifest has no entry for {dataset!r}; {rebuild}")
    missing = [k for k in STATS_KEYS[:8] if k not in entry]
    if missing:
        raise ValueError(
            f"the manifest entry of {dataset!r} holds no counts ({', '.join(missing)}): its "
            "examples were built by hand, not read from the raw files; "
            f"{rebuild} for the counts"
        )
    stats: dict[str, Any] = {"dataset": dataset}
    stats.update({k: entry[k] for k in STATS_KEYS if k in entry})
    stats["files"] = [f["path"] for f in entry.get("files", [])]
    stats["version"] = manifest.get("version")
    return stats
