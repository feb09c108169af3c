"""``prepare``: raw files -> one canonical JSONL per dataset + a manifest.

Side effects (writing ``out_dir``) happen here only; the work in between is
:mod:`~regime_core.data.discovery`, :mod:`~regime_core.data.readers` and
:mod:`~regime_core.data.canonical`; the manifest and the loaders are
:mod:`~regime_core.data.prepared`. The sentence cache is sealed with its sha256 and rebuilt, with
a warning, when damaged. ``prepare`` holds a lock on the output directory and fails, writing
nothing, when a requested dataset has no file in the data directory.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from regime_core.data.canonical import Conversion, convert, merge_questions, spacy_sentences
from regime_core.data.discovery import KNOWN_FILES, UNREADABLE_KEY, DataDirRead, read_data_dir
from regime_core.data.prepared import (
    MANIFEST_NAME,
    PREPARED_DATASETS,
    counts,
    example_counts,
    examples_jsonl,
    new_manifest,
    per_split,
    read_manifest_if_compatible,
    write_manifest,
)
from regime_core.data.readers import FileRead
from regime_core.inputs import InputError, Items, Table, Text, check_value
from regime_core.integrity import remove_stale_temporaries, write_if_changed
from regime_core.locks import directory_lock
from regime_core.strict_json import DamagedFileError, open_sealed_json, seal_json

# bump when the splitting around spaCy or the file layout changes (2: sealed with a sha256)
SENTENCE_CACHE_FORMAT = 2
# the cache's entries: the sentences of each text, by the sha1 of the text
_CACHE_ENTRIES = Table(Items(Text(blank=True)))


def summarise(
    dataset: str, reads: Sequence[FileRead], conversions: Sequence[Conversion]
) -> dict[str, Any]:
    """The manifest entry of one dataset (pure)."""
    examples = [c.example for c in conversions if c.example is not None]
    excluded = [(c.raw.split, c.excluded) for c in conversions if c.excluded is not None]
    return {
        "questions": per_split(c.raw.split for c in conversions),
        **example_counts(examples, excluded),
        "type_rules": counts(c.notes["type_rule"] for c in conversions if "type_rule" in c.notes),
        "title_match": counts(
            c.notes["title_match"] for c in conversions if "title_match" in c.notes
        ),
        "records_read": sum(len(r.questions) for r in reads),
        "files": [
            {
                "path": r.display,
                "format": r.fmt,
                "split": r.split,
                "sha256": r.sha256,
                "bytes": r.bytes,
                "records": len(r.questions),
                "source": KNOWN_FILES[r.display].source if r.display in KNOWN_FILES else "",
            }
            for r in reads
        ],
    }


# --- prepare ---------------------------------------------------------------------------------


class SentenceCache:
    """``spacy_sentences`` with a JSON memo on disk, keyed by the sha1 of the text.

    Importing spaCy and splitting the MuSiQue pools takes most of a cold ``prepare``; a rerun
    reads the splits back instead. The file name carries the spaCy version, so an upgrade starts a
    fresh cache. The splits are a pure function of (text, spaCy version): the cache never changes
    results. The file is sealed with its sha256; a damaged one is rebuilt with a warning.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.entries: dict[str, list[str]] = {}
        self.added = 0
        if path.exists():
            self.entries = _read_sentence_cache(path)

    @classmethod
    def in_dir(cls, out_dir: Path) -> SentenceCache:
        try:
            version = importlib.metadata.version("spacy")
        except importlib.metadata.PackageNotFoundError:  # pragma: no cover
            version = "unknown"
        return cls(out_dir / "cache" / f"sentences-v{SENTENCE_CACHE_FORMAT}-spacy-{version}.json")

    def __call__(self, text: str) -> tuple[str, ...]:
        key = hashlib.sha1(text.encode("utf-8")).hexdigest()
        hit = self.entries.get(key)
        if hit is None:
            hit = list(spacy_sentences(text))
            self.entries[key] = hit
            self.added += 1
        return tuple(hit)

    def save(self) -> None:
        if self.added:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_if_changed(self.path, seal_json(self.entries))
            self.added = 0


def _read_sentence_cache(path: Path) -> dict[str, list[str]]:
    """The cache's entries, verified against the sha256 its writer sealed it with.

    A damaged cache (bit flip, bad byte, truncation, older unsealed format) is rebuilt with a
    warning naming it: its entries are never used, since they would change passage text.
    """
    try:
        payload = open_sealed_json(path, "it is rebuilt")
        check_value(_CACHE_ENTRIES, payload, where=f"{path} is damaged", field="")
    except (DamagedFileError, InputError) as err:
        warnings.warn(f"sentence cache: {err}; rebuilding it", stacklevel=3)
        return {}
    return dict(payload)


def prepare(
    data_dir: Path,
    out_dir: Path,
    datasets: Sequence[str] = PREPARED_DATASETS,
    *,
    splits: Mapping[str, str] | None = None,
    strict: bool = True,
    exclude_unreadable: bool = False,
) -> dict[str, Any]:
    """Read, merge and convert every raw file; write ``<dataset>.jsonl`` and the manifest.

    Returns the manifest. Deterministic: a rerun writes byte-identical files. ``strict=False``
    turns broken references (supporting title not in the pool, sentence index out of range,
    decomposition index not in the pool) into counted exclusions instead of errors.
    ``exclude_unreadable`` turns a data file that cannot be read into an entry of the
    manifest's ``unreadable_files`` instead of an error. Datasets not named keep their entries
    in an existing manifest.
    """
    unknown = [d for d in datasets if d not in PREPARED_DATASETS]
    if unknown:
        raise ValueError(
            f"unknown dataset(s) {unknown}: `regime data prepare` builds {PREPARED_DATASETS}"
        )
    data_dir, out_dir = Path(data_dir), Path(out_dir)
    found = read_data_dir(
        data_dir, datasets, splits=splits, strict=strict, exclude_unreadable=exclude_unreadable
    )
    _check_every_dataset_read(data_dir, datasets, found.reads)
    # One writer per work directory at a time: a second prepare waits, then rewrites the same
    # bytes, instead of interleaving its files with the first one's.
    with directory_lock(out_dir, what="regime data prepare"):
        for directory in (out_dir, out_dir / "cache"):
            remove_stale_temporaries(directory)
        return _prepare_locked(found, out_dir, datasets, strict)


def _check_every_dataset_read(
    data_dir: Path, datasets: Sequence[str], reads: Sequence[FileRead]
) -> None:
    """A requested dataset without any file is an error, never an empty prepared file."""
    found = {r.dataset for r in reads}
    absent = [d for d in datasets if d not in found]
    if absent:
        have = f"it holds files of {sorted(found)}" if found else "it holds no known dataset file"
        raise ValueError(
            f"no file of {absent} in the data directory {data_dir} ({have}); point --data-dir "
            f"(REGIME_DATA_DIR) at the datasets, or prepare only the others with --dataset; "
            f"nothing was written"
        )


def _prepare_locked(
    found: DataDirRead, out_dir: Path, datasets: Sequence[str], strict: bool
) -> dict[str, Any]:
    reads = found.reads
    manifest_path = out_dir / MANIFEST_NAME
    previous = read_manifest_if_compatible(manifest_path)
    entries: dict[str, Any] = dict(previous.get("datasets", {}))
    splitter = SentenceCache.in_dir(out_dir)
    for dataset in datasets:
        dataset_reads = [r for r in reads if r.dataset == dataset]
        merged = merge_questions(q for r in dataset_reads for q in r.questions)
        conversions = [convert(q, splitter=splitter) for q in merged]
        splitter.save()
        payload = examples_jsonl(c.example for c in conversions if c.example is not None)
        write_if_changed(out_dir / f"{dataset}.jsonl", payload)
        entry = summarise(dataset, dataset_reads, conversions)
        entry["examples_file"] = {
            "path": f"{dataset}.jsonl",
            "sha256": hashlib.sha256(payload).hexdigest(),
        }
        entries[dataset] = entry
    manifest = {
        **new_manifest(),
        "strict": strict,
        "datasets": dict(sorted(entries.items())),
        "ignored_files": found.ignored,
    }
    if found.unreadable:
        manifest[UNREADABLE_KEY] = [{"path": p, "reason": r} for p, r in found.unreadable]
    return write_manifest(manifest_path, manifest)
