"""Where data, caches and outputs live. The only module that reads path environment variables.

- ``REGIME_DATA_DIR``: the raw datasets (default: ``../shared/data`` next to the repository if it
  exists, else ``./data``).
- ``REGIME_WORK_DIR``: everything the pipeline writes (prepared examples, embeddings, runs,
  executed notebooks, records); default ``_build/regime`` under the current directory. It is
  outside git.

It also holds the one setting for where the companion is published, :func:`repository_url`
(``[project.urls] Repository`` in ``pyproject.toml``), which the book's buttons, ``CITATION.cff``
and the README follow.

A path given explicitly (an ``override``: ``--work``, ``--data-dir``, a notebook's ``work_dir``)
must not be empty: ``Path("")`` is the current directory, so an empty value would read or write
there instead of being refused.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from urllib.parse import urlsplit

REPO_ROOT = Path(__file__).resolve().parent.parent
#: Where ``regime reproduce`` copies each executed notebook for the book (relative to the
#: declarations file, the repository's top; ``_toc.yml`` names its pages there).
BOOK_EXECUTED_DIR = "book/executed"
#: The project file holding the repository's address (``[project.urls] Repository``), at the
#: repository's top.
#:
#: :meta hide-value:
PYPROJECT = REPO_ROOT / "pyproject.toml"


def explicit_path(value: str | os.PathLike[str], what: str) -> Path:
    """``value`` as a path, or ``ValueError`` naming ``what`` when it is empty (which would mean
    the current directory) or holds a NUL character (which no file name can).

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


def work_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """The root of every generated artefact."""
    if override is not None:
        return explicit_path(override, "the work directory")
    env = os.environ.get("REGIME_WORK_DIR")
    return Path(env) if env else Path("_build") / "regime"


def prepared_dir(work: str | os.PathLike[str] | None = None) -> Path:
    return work_dir(work) / "prepared"


def embeddings_dir(work: str | os.PathLike[str] | None = None) -> Path:
    return work_dir(work) / "embeddings"


def results_dir(work: str | os.PathLike[str] | None = None) -> Path:
    return work_dir(work) / "results"


def repository_url(pyproject: str | os.PathLike[str] | None = None) -> str | None:
    """The companion's public repository (``[project.urls] Repository`` of ``pyproject.toml``),
    or None while it is unset (the companion is not published yet).

    The book shows its repository, issue and launch buttons only when it is set, and
    ``regime citation --sync`` writes it into ``CITATION.cff`` and the README. Without the
    project file (an installed, not editable, package) the installed metadata's
    ``Project-URL: Repository`` is read instead. Raises ``ValueError`` naming the file and the
    field when the value is not an ``https://`` address.
    """
    file = Path(pyproject) if pyproject is not None else PYPROJECT
    if file.is_file():
        with file.open("rb") as handle:
            project = tomllib.load(handle).get("project", {})
        url = (project.get("urls") or {}).get("Repository")
        where = f"{file}: [project.urls] Repository"
    elif pyproject is None:
        url, where = _installed_repository_url(), "the installed metadata's Project-URL"
    else:
        raise FileNotFoundError(f"{file} does not exist; it should hold [project.urls]")
    if url is None:
        return None
    parts = urlsplit(str(url))
    if not isinstance(url, str) or parts.scheme != "https" or not parts.netloc:
        raise ValueError(f"{where} = {url!r} is not an https:// address; fix or remove it")
    return url.rstrip("/")


def _installed_repository_url() -> str | None:
    from importlib import metadata

    try:
        entries = metadata.metadata("regime-core").get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        return None
    for entry in entries:
        label, _, url = entry.partition(",")
        if label.strip().lower() == "repository":
            return url.strip()
    return None
