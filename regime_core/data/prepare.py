"""``prepare``: raw files -> one canonical JSONL per dataset + a manifest; and the loaders.

Side effects (reading the data directory, writing ``out_dir``) happen here only; the work in
between is :mod:`~regime_core.data.readers` and :mod:`~regime_core.data.canonical`.

Which split a file holds:

1. ``KNOWN_FILES``: the shared subsets, by path relative to the data directory;
2. else the caller's ``splits`` mapping (relative path -> split; CLI ``--split PATH=SPLIT``);
3. else the official file name (``fetch.OFFICIAL_SPLITS``, compression suffix ignored), e.g.
   ``hotpot_dev_distractor_v1.json`` -> dev, ``musique_ans_v1.0_train.jsonl`` -> train;
4. else ``ValueError`` asking for ``--split``.

Integrity: the manifest records each ``<dataset>.jsonl``'s sha256 and its own
(``manifest_sha256``); :func:`load_examples` refuses a file that does not match, naming it and
the ``prepare`` command that rebuilds it. The sentence cache is sealed with its sha256 and
rebuilt, with a warning, when damaged. ``prepare`` holds a lock on the output directory and
fails, writing nothing, when a requested dataset has no file in the data directory.

Which files are read: every ``*.json``/``*.jsonl`` under the data directory (optionally with a
``.gz``/``.bz2``/``.xz`` suffix), except ``checksums.json`` and ``manifest.json``; symbolic links
to directories are followed (each directory once). Other files (README, scripts, archives,
``.part`` downloads) are listed in the manifest's ``ignored_files``. Every input is accounted
for: a data file that cannot be read (a dangling symbolic link, a FIFO, a device, a directory
named like a data file, no permission) is an error naming it, or, with ``exclude_unreadable``
(``--exclude-unreadable``), an exclusion listed with its reason in the manifest's
``unreadable_files``. A ``splits`` entry must name a data file of the directory and a known
split (and agree with the registry for a known subset): one naming nothing is an error.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import stat
import warnings
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from regime_core import config, paths
from regime_core.data.canonical import (
    Conversion,
    convert,
    corpus_passages,
    merge_questions,
    spacy_sentences,
)
from regime_core.data.fetch import OFFICIAL_SPLITS
from regime_core.data.readers import FORMATS, FileRead, read_file, records_and_format
from regime_core.integrity import (
    canonical_bytes,
    file_kind,
    os_error_message,
    read_bytes,
    remove_stale_temporaries,
    sha256_hex,
    write_if_changed,
)
from regime_core.locks import directory_lock
from regime_core.schema import DATASETS, SPLITS, Example, dataset_name_problem
from regime_core.strict_json import (
    DamagedFileError,
    JSONProblem,
    open_sealed_json,
    parse_json,
    read_json,
    seal_json,
)

PREPARED_DATASETS: tuple[str, ...] = config.DATASETS
TOYWORLD = "toyworld"  # generated on demand (regime_core.data.toyworld), never prepared
MANIFEST_NAME = "manifest.json"
MANIFEST_SCHEMA = 1
# bump when the splitting around spaCy or the file layout changes (2: sealed with a sha256)
SENTENCE_CACHE_FORMAT = 2
MANIFEST_HASH_KEY = "manifest_sha256"  # sha256 of the manifest's other keys, canonical JSON
#: the manifest key listing the data files excluded because they cannot be read (present only
#: when some are: ``prepare(exclude_unreadable=True)``)
UNREADABLE_KEY = "unreadable_files"
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
)
_COMPRESSION_SUFFIXES = (".gz", ".bz2", ".xz")
_DATA_SUFFIXES = (".json", ".jsonl")
_NOT_DATA = ("checksums.json", MANIFEST_NAME)


@dataclass(frozen=True)
class KnownFile:
    dataset: str
    split: str
    source: str


KNOWN_FILES: dict[str, KnownFile] = {
    "hotpotqa/migres/hotpot.json": KnownFile(
        "hotpotqa", "dev", "AdelWang/MIGRES@a261f2b data/hotpot.json (original, JSON Lines)"
    ),
    "hotpotqa/ircot_xindili/dev_subsampled.jsonl": KnownFile(
        "hotpotqa",
        "dev",
        "xindili-cmu/anlp-project-multihop@11ba729 processed_data/hotpotqa/dev_subsampled.jsonl "
        "(IRCoT-processed)",
    ),
    "hotpotqa/acmyu_cs592/hotpot_dev_distractor_v1_100.json": KnownFile(
        "hotpotqa",
        "dev",
        "acmyu/CS592LLM-Project@5f67a0f data/hotpot_dev_distractor_v1_100.json (original)",
    ),
    "hotpotqa/hipporag_train/hotpotqa_train.json": KnownFile(
        "hotpotqa", "train", "OSU-NLP-Group/HippoRAG@3d95d25 data/hotpotqa_train.json (original)"
    ),
    "2wikimultihopqa/tts_project/sampled_ds.json": KnownFile(
        "2wikimultihopqa",
        "dev",
        "saptarshi059/TTS-project@2b5e199 sampled_data/2wikimultihopqa/sampled_ds.json "
        "(pandas column dict)",
    ),
    "2wikimultihopqa/migres/wikihop.json": KnownFile(
        "2wikimultihopqa", "dev", "AdelWang/MIGRES@a261f2b data/wikihop.json (JSON Lines)"
    ),
    "musique/migres/musique.json": KnownFile(
        "musique", "dev", "AdelWang/MIGRES@a261f2b data/musique.json (JSON Lines)"
    ),
    "musique/kag/musique_qa_100.json": KnownFile(
        "musique",
        "dev",
        "OpenSPG/KAG@8901a93 kag/examples/musique_pike/solver/data/musique_qa_100.json",
    ),
    "musique/hipporag_train/musique_train.json": KnownFile(
        "musique", "train", "OSU-NLP-Group/HippoRAG@3d95d25 data/musique_train.json"
    ),
}


def package_version() -> str:
    try:
        return importlib.metadata.version("regime-core")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - source checkout
        return "0+unknown"


# --- file discovery --------------------------------------------------------------------------


def _base_name(name: str) -> str:
    for suffix in _COMPRESSION_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def is_data_file(path: Path) -> bool:
    base = _base_name(path.name)
    return base.endswith(_DATA_SUFFIXES) and base not in _NOT_DATA


@dataclass(frozen=True)
class Discovery:
    """What :func:`discover` found under a data directory, as sorted POSIX paths relative to
    it: the data files, the other files (``ignored``), and the entries named like data files
    that are not regular files (``unusable``: ``(path, what it is)``)."""

    data: list[str]
    ignored: list[str]
    unusable: list[tuple[str, str]]


def discover(data_dir: Path) -> Discovery:
    """Every entry under ``data_dir`` (symbolic links to directories followed, each directory
    once), sorted into data files, ignored files and unusable ones (see :class:`Discovery`).

    An unlistable directory is an error naming it (``os.walk`` would skip it silently).
    """
    if not data_dir.is_dir():
        state = "is not a directory" if data_dir.exists() else "does not exist"
        raise ValueError(
            f"data directory {data_dir} {state}; pass --data-dir or set REGIME_DATA_DIR"
        )

    def fail(err: OSError) -> None:
        raise ValueError(os_error_message(err, err.filename or data_dir, "list"))

    data: list[str] = []
    ignored: list[str] = []
    unusable: list[tuple[str, str]] = []
    seen: set[tuple[int, int]] = set()
    for top, dirs, files in os.walk(data_dir, onerror=fail, followlinks=True):
        here = Path(top)
        info = os.stat(here)
        if (info.st_dev, info.st_ino) in seen:  # a link back up the tree: walked already
            dirs[:] = []
            continue
        seen.add((info.st_dev, info.st_ino))
        for name in dirs:
            if is_data_file(here / name):
                unusable.append(((here / name).relative_to(data_dir).as_posix(), "a directory"))
        for name in files:
            path = here / name
            rel = path.relative_to(data_dir).as_posix()
            if not is_data_file(path):
                ignored.append(rel)
                continue
            problem = _unusable(path)
            if problem is None:
                data.append(rel)
            else:
                unusable.append((rel, problem))
    return Discovery(
        sorted(data, key=_parts),
        sorted(ignored, key=_parts),
        sorted(unusable, key=lambda item: _parts(item[0])),
    )


def _parts(rel: str) -> list[str]:
    """The order of paths part by part (``a/b`` before ``a-c``), as ``sorted(Path...)`` has."""
    return rel.split("/")


def _unusable(path: Path) -> str | None:
    """Why the data file ``path`` cannot be read as one (None: it is a regular file)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return f"a symbolic link to {os.readlink(path)}, which does not exist"
    except OSError as err:
        return os_error_message(err, path, "read").split(": ", 1)[-1]
    if not stat.S_ISREG(info.st_mode):
        return file_kind(info.st_mode)
    return None


def check_splits(splits: Mapping[str, str], found: Discovery, data_dir: Path) -> None:
    """Every ``--split PATH=SPLIT`` must name a data file of the directory (or one excluded as
    unreadable) and a known split, and agree with the registry: none is ignored."""
    known = set(found.data) | {rel for rel, _ in found.unusable}
    for rel, split in splits.items():
        if split not in SPLITS:
            raise ValueError(f"--split {rel}={split}: the split must be one of {SPLITS}")
        if rel not in known:
            hint = (
                "it is not a data file (*.json, *.jsonl, compressed or not)"
                if rel in found.ignored
                else f"no such file under {data_dir}"
            )
            raise ValueError(
                f"--split {rel}={split}: {hint}; paths are relative to the data directory "
                f"(its data files: {', '.join(found.data[:6]) or 'none'}"
                f"{', ...' if len(found.data) > 6 else ''})"
            )
        registered = KNOWN_FILES.get(rel)
        if registered is not None and registered.split != split:
            raise ValueError(
                f"--split {rel}={split}: the registry knows this file as the "
                f"{registered.split} split of {registered.dataset}; drop the option"
            )


def resolve_split(rel: str, splits: Mapping[str, str] | None = None) -> str | None:
    """The split of a file (see the module docstring), or None when nothing says."""
    if rel in KNOWN_FILES:
        return KNOWN_FILES[rel].split
    if splits and rel in splits:
        split = splits[rel]
        if split not in SPLITS:
            raise ValueError(f"split for {rel} is {split!r}, not one of {SPLITS}")
        return split
    return OFFICIAL_SPLITS.get(_base_name(rel.rsplit("/", 1)[-1]))


@dataclass(frozen=True)
class DataDirRead:
    """What :func:`read_data_dir` read: the files of the requested datasets, the files it did
    not read (``ignored``), and the data files excluded as unreadable (``(path, reason)``)."""

    reads: list[FileRead]
    ignored: list[str]
    unreadable: list[tuple[str, str]]


def read_data_dir(
    data_dir: Path,
    datasets: Sequence[str],
    *,
    splits: Mapping[str, str] | None = None,
    strict: bool = True,
    exclude_unreadable: bool = False,
) -> DataDirRead:
    """Read every data file of the requested datasets.

    A data file that cannot be read (:class:`Discovery`'s unusable ones, or one whose read
    fails: no permission) is a ``ValueError`` naming it, or with ``exclude_unreadable`` an
    entry of ``unreadable``; ``splits`` is checked by :func:`check_splits`.
    """
    found = discover(data_dir)
    check_splits(splits or {}, found, data_dir)
    unreadable = list(found.unusable)
    if unreadable and not exclude_unreadable:
        rel, reason = unreadable[0]
        raise ValueError(
            f"{data_dir / rel}: a data file that cannot be read ({reason}); remove or repair "
            "it, or pass --exclude-unreadable to leave it out (it is then listed in the "
            f"manifest's {UNREADABLE_KEY})"
            + (f"; {len(unreadable) - 1} more like it" if len(unreadable) > 1 else "")
        )
    reads = []
    for rel in found.data:
        path = data_dir / rel
        try:
            raw = read_bytes(path)
        except (OSError, ValueError) as err:
            if not exclude_unreadable:
                raise
            unreadable.append((rel, str(err).split(": ", 1)[-1]))
            continue
        known = KNOWN_FILES.get(rel)
        dataset = known.dataset if known else FORMATS[records_and_format(raw, rel)[1]]
        if dataset not in datasets:
            continue
        split = resolve_split(rel, splits)
        if split is None:
            raise ValueError(
                f"{rel}: cannot tell its split ({dataset}); it is neither a known subset nor an "
                f"official file name — pass --split {rel}=dev (or =train)"
            )
        reads.append(
            read_file(
                path, split=split, display=rel, expect_dataset=dataset, strict=strict, raw=raw
            )
        )
    return DataDirRead(reads, found.ignored, sorted(unreadable))


# --- summaries -------------------------------------------------------------------------------


def _count(values: Iterable[str]) -> dict[str, int]:
    return dict(sorted(Counter(values).items()))


def _per_split(items: Iterable[str]) -> dict[str, int]:
    counts = Counter(items)
    return {split: counts.get(split, 0) for split in SPLITS}


def summarise(
    dataset: str, reads: Sequence[FileRead], conversions: Sequence[Conversion]
) -> dict[str, Any]:
    """The manifest entry of one dataset (pure)."""
    examples = [c.example for c in conversions if c.example is not None]
    excluded = [c for c in conversions if c.excluded is not None]
    pids = {p.pid for ex in examples for p in ex.pool}
    return {
        "questions": _per_split(c.raw.split for c in conversions),
        "two_hop": _per_split(ex.split for ex in examples),
        "by_type": _count(ex.native_type for ex in examples),
        "parallel": sum(ex.parallel for ex in examples),
        "excluded": _count(c.excluded or "" for c in excluded),
        "excluded_by_split": {
            split: _count(c.excluded or "" for c in excluded if c.raw.split == split)
            for split in SPLITS
        },
        "hop_order_rules": _count(ex.hop_order_rule for ex in examples),
        "relation_sources": _count(ex.relation_source for ex in examples),
        "type_rules": _count(c.notes["type_rule"] for c in conversions if "type_rule" in c.notes),
        "title_match": _count(
            c.notes["title_match"] for c in conversions if "title_match" in c.notes
        ),
        "records_read": sum(len(r.questions) for r in reads),
        "corpus_passages": len(pids),
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


def _valid_cache_entries(payload: Any) -> bool:
    return isinstance(payload, dict) and all(
        isinstance(v, list) and all(isinstance(s, str) for s in v) for v in payload.values()
    )


def _read_sentence_cache(path: Path) -> dict[str, list[str]]:
    """The cache's entries, verified against the sha256 its writer sealed it with.

    A damaged cache (bit flip, bad byte, truncation, older unsealed format) is rebuilt with a
    warning naming it: its entries are never used, since they would change passage text.
    """
    try:
        payload = open_sealed_json(path, "it is rebuilt")
        if not _valid_cache_entries(payload):
            raise DamagedFileError(f"{path} is damaged (entries are not lists of sentences)")
    except DamagedFileError as err:
        warnings.warn(f"sentence cache: {err}; rebuilding it", stacklevel=3)
        return {}
    return dict(payload)


def examples_jsonl(examples: Iterable[Example]) -> bytes:
    lines = [
        json.dumps(ex.to_dict(), ensure_ascii=False, separators=(",", ":"))
        for ex in sorted(examples, key=lambda e: e.id)
    ]
    return ("\n".join(lines) + "\n" if lines else "").encode("utf-8")


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
    previous = _read_manifest_if_compatible(manifest_path)
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
        "schema": MANIFEST_SCHEMA,
        "version": package_version(),
        "strict": strict,
        "datasets": dict(sorted(entries.items())),
        "ignored_files": found.ignored,
    }
    if found.unreadable:
        manifest[UNREADABLE_KEY] = [{"path": p, "reason": r} for p, r in found.unreadable]
    return write_manifest(manifest_path, manifest)


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


def write_prepared_examples(out_dir: Path, dataset: str, payload: bytes) -> Path:
    """Write ``<dataset>.jsonl`` as given and record its sha256 in the manifest.

    For examples built by hand (tests, teaching material); ``prepare`` is the usual writer.
    The manifest keeps its other entries (a new one is started if there is none).
    """
    if dataset not in PREPARED_DATASETS:
        raise ValueError(f"unknown dataset {dataset!r}; prepared datasets: {PREPARED_DATASETS}")
    out_dir = Path(out_dir)
    with directory_lock(out_dir, what="writing prepared examples"):
        manifest_path = out_dir / MANIFEST_NAME
        manifest = _read_manifest_if_compatible(manifest_path) or new_manifest()
        target = out_dir / f"{dataset}.jsonl"
        write_if_changed(target, payload)
        entry = manifest["datasets"].setdefault(dataset, {})
        entry["examples_file"] = {"path": target.name, "sha256": sha256_hex(payload)}
        write_manifest(manifest_path, manifest)
    return target


def _read_manifest_if_compatible(path: Path) -> dict[str, Any]:
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
    if not isinstance(manifest, dict):
        raise DamagedFileError(f"{path} is damaged (not a JSON object); {rebuild}")
    recorded = manifest.pop(MANIFEST_HASH_KEY, None)
    if recorded != sha256_hex(canonical_bytes(manifest)):
        problem = (
            "it has no sha256: written by an older version, or edited"
            if recorded is None
            else "it does not match its sha256"
        )
        raise DamagedFileError(f"{path} is damaged or edited ({problem}); {rebuild}")
    manifest[MANIFEST_HASH_KEY] = recorded
    _check_manifest_fields(path, manifest, rebuild)
    return manifest


def _check_manifest_fields(path: Path, manifest: dict[str, Any], rebuild: str) -> None:
    """The fields every reader of a manifest relies on have their types (a manifest is sealed,
    but a seal only proves the content was not changed after a writer hashed it)."""

    def fail(field: str, problem: str) -> DamagedFileError:
        return DamagedFileError(f"{path}: field {field!r} {problem}; {rebuild}")

    datasets = manifest.get("datasets")
    if not isinstance(datasets, dict):
        raise fail("datasets", "must be an object of dataset entries")
    for name, entry in datasets.items():
        if not isinstance(entry, dict):
            raise fail(f"datasets.{name}", "must be an object")
        examples_file = entry.get("examples_file")
        if examples_file is not None and not (
            isinstance(examples_file, dict)
            and isinstance(examples_file.get("path"), str)
            and isinstance(examples_file.get("sha256"), str)
        ):
            raise fail(f"datasets.{name}.examples_file", "must be {path, sha256} strings")
        files = entry.get("files", [])
        if not isinstance(files, list) or not all(
            isinstance(f, dict) and isinstance(f.get("path"), str) for f in files
        ):
            raise fail(f"datasets.{name}.files", "must be a list of {path, ...} objects")
    ignored = manifest.get("ignored_files", [])
    if not isinstance(ignored, list) or not all(isinstance(f, str) for f in ignored):
        raise fail("ignored_files", "must be a list of paths")


# --- loading ---------------------------------------------------------------------------------


def known_datasets(work: Path | str | None = None) -> tuple[str, ...]:
    """Every name a command or an experiment accepts as a dataset: the built-in ones
    (``schema.DATASETS``: the three prepared datasets and ``toyworld``, prepared or not), then
    the datasets of one's own prepared under ``work`` (``regime data prepare --jsonl FILE
    --name NAME``), sorted. A damaged manifest is an error naming it."""
    path = paths.prepared_dir(work) / MANIFEST_NAME
    if not os.path.lexists(path):
        return DATASETS
    custom = [name for name in _read_verified_manifest(path)["datasets"] if name not in DATASETS]
    return (*DATASETS, *sorted(custom))


def _rebuild_hint(dataset: str, entry: Any = None) -> str:
    """The command that prepares ``dataset`` (again)."""
    if isinstance(entry, dict) and entry.get("origin") == "jsonl":
        files = entry.get("files") or [{}]
        source = files[0].get("source", "FILE") if isinstance(files[0], dict) else "FILE"
        return f"regime data prepare --jsonl {source} --name {dataset}"
    if dataset in PREPARED_DATASETS:
        return f"regime data prepare --dataset {dataset}"
    return f"regime data prepare --jsonl FILE --name {dataset}"


def _unknown_dataset(dataset: str, known: Sequence[str]) -> ValueError:
    return ValueError(
        f"unknown dataset {dataset!r}; known datasets: {', '.join(known)} (prepare one of your "
        "own with `regime data prepare --jsonl FILE --name NAME`)"
    )


def _check_dataset(dataset: str, work: Path | str | None = None) -> None:
    """``dataset`` is built in, or prepared under ``work`` from a file of one's own."""
    if dataset in DATASETS:
        return
    problem = dataset_name_problem(dataset)
    known = known_datasets(work)
    if problem is not None or dataset not in known:
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
        try:
            record = parse_json(line, where)
        except JSONProblem as err:
            raise ValueError(f"{where}: {err.problem}") from err
        ex = Example.from_dict(record, where)
        if ex.dataset != dataset:
            raise DamagedFileError(
                f"{where}: field 'dataset' is {ex.dataset!r}, in the file of {dataset!r}; "
                f"rebuild it with `{_rebuild_hint(dataset)}`"
            )
        if split is None or ex.split == split:
            examples.append(ex)
    return examples


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
        described = manifest.get("datasets", {}).get(dataset, {})
        rebuild = f"rebuild it with `{_rebuild_hint(dataset, described)}`"
        entry = described.get("examples_file", {})
        expected = entry.get("sha256") if isinstance(entry, dict) else None
        if not isinstance(expected, str):
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
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as err:  # pragma: no cover - the hash matched what prepare wrote
        raise DamagedFileError(f"{path} is not UTF-8 (byte {err.start}); {rebuild}") from err
    return raw


def _toyworld_examples(split: str | None) -> list[Example]:
    from regime_core.data import toyworld

    splits = SPLITS if split is None else (split,)
    return [ex for s in splits for ex in toyworld.load_examples(split=s)]


def toyworld_stats() -> dict[str, Any]:
    """The ``dataset_stats`` keys for the generated ``toyworld`` (both splits; nothing is
    excluded, so ``questions`` equals ``two_hop``)."""
    examples = _toyworld_examples(None)
    per_split = _per_split(ex.split for ex in examples)
    return {
        "dataset": TOYWORLD,
        "questions": per_split,
        "two_hop": dict(per_split),
        "by_type": _count(ex.native_type for ex in examples),
        "parallel": sum(ex.parallel for ex in examples),
        "excluded": {},
        "excluded_by_split": {split: {} for split in SPLITS},
        "hop_order_rules": _count(ex.hop_order_rule for ex in examples),
        "relation_sources": _count(ex.relation_source for ex in examples),
        "corpus_passages": len(corpus_passages(examples)),
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
            "examples were written by write_prepared_examples (built by hand), not read from "
            f"the raw files; {rebuild} for the counts"
        )
    stats: dict[str, Any] = {"dataset": dataset}
    stats.update({k: entry[k] for k in STATS_KEYS if k in entry})
    stats["files"] = [f["path"] for f in entry.get("files", [])]
    stats["version"] = manifest.get("version")
    return stats
