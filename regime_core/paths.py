"""Where data, caches and outputs live. The only module that reads path environment variables.

- ``REGIME_DATA_DIR``: the raw datasets (default: ``../shared/data`` next to the repository if it
  exists, else ``./data``).
- ``REGIME_WORK_DIR``: everything the pipeline writes (prepared examples, embeddings, runs,
  executed notebooks, records); default ``_build/regime`` under the current directory. It is
  outside git.

The work directory is found by one rule, the same for every command and notebook
(:func:`work_dir`); a command or notebook names its choice once, when it starts, so every part of
the package that looks for it without being handed one finds the same directory.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
#: Where the book's executed pages are: ``regime reproduce`` writes them there under the work
#: directory (:func:`book_executed_dir`), and ``regime book`` stages that work directory's copies
#: there under the book's root, where ``_toc.yml`` names them.
BOOK_EXECUTED_DIR = "book/executed"
#: Where a built package (a wheel, ``pip install git+URL``, Binder) holds its copies of the
#: checkout's files the runner needs (:data:`SHIPPED_FILES`): ``setup.py`` copies them there
#: when it builds, so ``notebooks/`` and the two YAML files stay at the repository's top.
#:
#: :meta hide-value:
SHIPPED_DIR = Path(__file__).resolve().parent / "_shipped"
#: the checkout's files (relative to its top) that every install needs: the run declarations,
#: the paper's claims, the notebooks the declarations name, and the quick profile's frozen
#: numbers (so `regime expected check` works in an install too)
SHIPPED_FILES: tuple[str, ...] = (
    "reproduce.yml",
    "paper_claims.yml",
    "notebooks",
    "expected_numbers.yml",
)


def source_root() -> Path:
    """Where the run declarations, the claims and the notebooks are: the checkout's top when the
    package runs from a checkout (an editable install, the tests), else the copy a built package
    ships inside itself (:data:`SHIPPED_DIR`). Whichever it is holds them all, so the
    declarations' relative notebook paths hold in both."""
    if (REPO_ROOT / "reproduce.yml").is_file() or not SHIPPED_DIR.is_dir():
        return REPO_ROOT
    return SHIPPED_DIR


#: The project file holding the repository's address (``[project.urls] Repository``), at the
#: repository's top.
#:
#: :meta hide-value:


def explicit_path(value: str | os.PathLike[str], what: str) -> Path:
    """``value`` as a path, or ``ValueError`` naming ``what`` when it is empty (``Path("")`` would
    silently mean the current directory) or holds a NUL character (which no file name can).

    >>> explicit_path("w", "--work")
    PosixPath('w')
    """
    text = os.fspath(value)
    if isinstance(text, bytes):
        text = os.fsdecode(text)
    if not text.strip():
        raise ValueError(f"{what} is empty; name a directory (an empty path is not a place)")
    if "\0" in text:
        raise ValueError(f"{what} {text!r} holds a NUL character, which no path can")
    return Path(text)


def data_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """The directory holding the raw dataset files."""
    if override is not None:
        return explicit_path(override, "the data directory")
    env = os.environ.get("REGIME_DATA_DIR")
    if env:
        return Path(env)
    shared = REPO_ROOT.parent / "shared" / "data"
    return shared if shared.is_dir() else Path("data")


#: The work directory this command or notebook named explicitly (``--work``, ``work_dir``), set
#: by :func:`use_work_dir` or :func:`choose_work_dir`; ``None``: none was named.
_chosen_work: Path | None = None


def work_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """The root of every generated artefact, by the one rule of every command and notebook:

    1. ``override``, the directory named explicitly (``--work``, a notebook's ``work_dir``);
    2. else the one the running command or notebook named when it started
       (:func:`use_work_dir`, :func:`choose_work_dir`);
    3. else ``REGIME_WORK_DIR``;
    4. else ``_build/regime`` under the current directory.

    >>> with use_work_dir("w"):
    ...     work_dir(), work_dir("v")
    (PosixPath('w'), PosixPath('v'))
    """
    if override is not None:
        return explicit_path(override, "the work directory")
    if _chosen_work is not None:
        return _chosen_work
    env = os.environ.get("REGIME_WORK_DIR")
    return Path(env) if env else Path("_build") / "regime"


def choose_work_dir(override: str | os.PathLike[str] | None) -> Path:
    """Name the work directory for the rest of the process (a notebook's kernel: its
    ``work_dir`` parameter), so that :func:`work_dir` without an argument returns it; ``None``
    names nothing (``REGIME_WORK_DIR`` or the default then apply). Returns :func:`work_dir`."""
    global _chosen_work
    if override is not None:
        _chosen_work = explicit_path(override, "the work directory")
    return work_dir()


@contextlib.contextmanager
def use_work_dir(override: str | os.PathLike[str] | None) -> Iterator[Path]:
    """:func:`choose_work_dir` for the duration of a block (a command's ``--work``), then the
    previous choice again; yields the work directory."""
    global _chosen_work
    previous = _chosen_work
    try:
        yield choose_work_dir(override)
    finally:
        _chosen_work = previous


def prepared_dir(work: str | os.PathLike[str] | None = None) -> Path:
    return work_dir(work) / "prepared"


def embeddings_dir(work: str | os.PathLike[str] | None = None) -> Path:
    return work_dir(work) / "embeddings"


def results_dir(work: str | os.PathLike[str] | None = None) -> Path:
    return work_dir(work) / "results"


def book_executed_dir(work: str | os.PathLike[str] | None = None) -> Path:
    """The executed notebooks the book renders, as ``regime reproduce`` left them for it:
    ``<work>/book/executed`` (``regime book --work`` stages them into the book's root).

    >>> book_executed_dir("w")
    PosixPath('w/book/executed')
    """
    return work_dir(work) / BOOK_EXECUTED_DIR


def book_state_dir(work: str | os.PathLike[str] | None = None) -> Path:
    """What the book's builds keep between builds of a work directory's pages (the mark of a
    build that did not pass strictly): ``<work>/book``."""
    return work_dir(work) / "book"


def variants_dir(work: str | os.PathLike[str] | None = None) -> Path:
    """Where notebooks run by hand write their records: ``<work>/variants``."""
    return work_dir(work) / "variants"


def variant_dir(run_id: str, config_hash: str, work: str | os.PathLike[str] | None = None) -> Path:
    """The one output folder of a notebook run by hand (papermill without ``-p output_dir``):
    ``<work>/variants/<run_id>/<config_hash>``, so a variant never overwrites the default record
    (``<work>/results/<run_id>``, written by ``regime reproduce``) nor another variant, and the
    same parameters always land in the same folder.

    >>> variant_dir("t3_brel_knockout", "0123456789ab", "w")
    PosixPath('w/variants/t3_brel_knockout/0123456789ab')
    """
    return variants_dir(work) / run_id / config_hash
