"""Which raw files a data directory holds, which split each is, and reading them.

Which split a file holds:

1. ``KNOWN_FILES``: the shared subsets, by path relative to the data directory;
2. else the caller's ``splits`` mapping (relative path -> split; CLI ``--split PATH=SPLIT``);
3. else the official file name (``fetch.OFFICIAL_SPLITS``, compression suffix ignored), e.g.
   ``hotpot_dev_distractor_v1.json`` -> dev, ``musique_ans_v1.0_train.jsonl`` -> train;
4. else ``ValueError`` asking for ``--split``.

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

import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from regime_core.data.containers import records_and_format
from regime_core.data.fetch import OFFICIAL_SPLITS
from regime_core.data.prepared import MANIFEST_NAME
from regime_core.data.readers import FORMATS, FileRead, read_file
from regime_core.integrity import file_kind, os_error_message, read_bytes
from regime_core.schema import SPLITS

#: the manifest key listing the data files excluded because they cannot be read (present only
#: when some are: ``prepare(exclude_unreadable=True)``)
UNREADABLE_KEY = "unreadable_files"
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
    """The split of a file (see the module docstring), or None when nothing says; ``splits``
    were checked by :func:`check_splits`."""
    if rel in KNOWN_FILES:
        return KNOWN_FILES[rel].split
    if splits and rel in splits:
        return splits[rel]
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
