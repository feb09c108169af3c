"""Build the Jupyter Book: ``jupyter-book build`` with warnings as errors, after checking the toc.

The book never executes notebooks (``execute_notebooks: "off"``); ``regime reproduce`` does, and
copies them to ``<work>/book/executed/``. :func:`build_book` first stages the work directory's
executed pages into the book's ``book/executed/`` (:func:`stage_executed`: each checked against
its run's stamp, and no page of another work directory left there), checks that every page the
toc names exists, so a missing executed notebook is reported as "run ``regime reproduce``" rather
than as a Sphinx error, then runs::

    jupyter-book build <root> --warningiserror --nitpick --keep-going [--all] [--path-output OUT]

in a child process (Sphinx keeps global state; a child keeps every build independent). The
``{rec}`` role reads records from ``REGIME_WORK_DIR``, which ``work`` sets for the child; a
record that is not its run stamp's stops the build before it starts (:func:`check_records`).
Pages are read again when a record they read changes content, whatever its modification time
(``regime_book.records``), and every page after a build that did not pass strictly
(one that warned or stopped, or a ``strict=False`` one), so a failed strict build fails again
until the page is fixed (``regime_book.strict_pass``). ``timing`` (``regime book
--timing FILE``) sets ``REGIME_BOOK_TIMING`` for the child, so the build writes its phases'
seconds to that file (``regime_book.timing``; ``benchmarks/bench_build.py`` prints
them).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from regime_core import paths
from regime_core.locks import records_lock
from regime_core.runner.stamps import verify_record

_ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")  # Sphinx colours its warnings
PAGE_SUFFIXES: tuple[str, ...] = (".md", ".ipynb", ".rst")
EXECUTED_PREFIX = f"{paths.BOOK_EXECUTED_DIR}/"
#: names the JSON file the build writes its phases' seconds to (regime_book.timing)
TIMING_ENV = "REGIME_BOOK_TIMING"
#: in ``<work>/book`` from the start of each build until one passes strictly: the strict-pass
#: marker, which the book's extension writes and removes and this module checks before a build
MARKER = "regime-unclean"


@dataclass(frozen=True)
class BookBuild:
    """The outcome of :func:`build_book`."""

    returncode: int
    seconds: float
    html_dir: Path
    log: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def warnings(self) -> list[str]:
        """The WARNING/ERROR lines of the build log."""
        plain = _ANSI_ESCAPE.sub("", self.log)
        return [ln for ln in plain.splitlines() if "WARNING" in ln or "ERROR" in ln]


def toc_files(toc: Path) -> list[str]:
    """Every page a Jupyter Book toc names, in order, without suffixes, read as Jupyter Book
    reads it (``sphinx_external_toc``); ``ValueError`` naming the toc when it is malformed."""
    from sphinx_external_toc.parsing import MalformedError, parse_toc_yaml

    try:
        site_map = parse_toc_yaml(toc)
    except MalformedError as err:
        raise ValueError(f"{toc}: {err}") from err
    return [_strip_suffix(docname) for docname in site_map]


def _strip_suffix(entry: str) -> str:
    for suffix in PAGE_SUFFIXES:
        if entry.endswith(suffix):
            return entry[: -len(suffix)]
    return entry


def missing_pages(root: Path) -> list[str]:
    """Toc entries with no ``.md``, ``.ipynb`` or ``.rst`` file under ``root``."""
    return [
        entry
        for entry in toc_files(root / "_toc.yml")
        if not any((root / f"{entry}{suffix}").is_file() for suffix in PAGE_SUFFIXES)
    ]


def _jupyter_book_executable() -> str:
    beside = Path(sys.executable).parent / "jupyter-book"
    if beside.is_file():
        return str(beside)
    found = shutil.which("jupyter-book")
    if found is None:
        raise FileNotFoundError(
            "jupyter-book is not installed; install the book extra: pip install -e '.[book]'"
        )
    return found


def check_outputs(work: Path, output: Path | None, timing: str | None) -> None:
    """``ValueError`` naming the path, before any work starts, unless the build could write
    its outputs: ``output`` (``--output``) a directory or nothing yet, the timing report
    (``--timing`` / ``REGIME_BOOK_TIMING``) a file the writers' rule accepts, the strict-pass
    marker a regular file or nothing."""
    from regime_core.integrity import check_writable

    for folder in (output, output / "_build") if output is not None else ():
        # a directory a build made before is written into again, as jupyter-book does
        if os.path.lexists(folder) and not folder.is_dir():
            raise ValueError(f"--output {output}: {folder} exists and is not a directory")
    if timing is not None:
        check_writable(timing, f"--timing (or {TIMING_ENV})")
    check_marker(paths.book_state_dir(work) / MARKER)


def check_marker(marker: Path) -> None:
    """``ValueError`` naming the marker unless a build could write and remove it: nothing or
    a regular file is there (checked before a build starts, not at its end)."""
    if os.path.lexists(marker) and not (marker.is_file() and not marker.is_symlink()):
        kind = "a symbolic link" if marker.is_symlink() else "not a regular file"
        raise ValueError(
            f"the strict-pass marker {marker} is {kind}; a build writes and removes it: "
            "remove it by hand"
        )


def build_command(
    root: Path, *, output: Path | None = None, strict: bool = True, all_pages: bool = False
) -> list[str]:
    """The ``jupyter-book build`` command line :func:`build_book` runs."""
    command = [_jupyter_book_executable(), "build", str(root)]
    if strict:
        command += ["--warningiserror", "--nitpick", "--keep-going"]
    if all_pages:
        command.append("--all")
    if output is not None:
        command += ["--path-output", str(output)]
    return command


def _records_dir(book_root: Path, work: Path | str | None) -> Path:
    """The work directory the ``{rec}`` role will read: ``work``, else ``REGIME_WORK_DIR``,
    else ``_build/regime``, a relative default taken relative to the book's root."""
    if work is not None:
        return Path(work).resolve()
    default = paths.work_dir(None)
    return default if default.is_absolute() else book_root / default


def check_records(work: Path) -> None:
    """Refuse to build over any record under ``<work>/results`` that is not the one its run's
    stamp recorded (:func:`~regime_core.runner.stamps.verify_record`): ``ValueError`` naming
    the record and the stamp, before Sphinx starts."""
    for file in sorted(paths.results_dir(work).glob("*/record.json")):
        verify_record(work, file.parent.name)


def stage_executed(book_root: Path, work: Path) -> list[Path]:
    """Make the book's ``book/executed`` hold exactly ``<work>/book/executed``'s pages, each
    checked first against its run's stamp in ``work`` (``ValueError`` naming the page and the
    command that remakes it: a page whose executed notebook is not the one the run stamped, or
    whose run has no stamp). A page whose bytes are already there is left untouched (Sphinx
    reads it again only when it changed); a page no run of ``work`` made is removed, so a build
    never renders another work directory's page. Returns the staged pages."""
    from regime_core.integrity import write_if_changed
    from regime_core.runner.stamps import read_stamp
    from regime_core.strict_json import read_json_file

    source = paths.book_executed_dir(work)
    target = book_root / paths.BOOK_EXECUTED_DIR
    pages = sorted(source.glob("*.ipynb"))
    for page in pages:
        run_id = page.stem
        rerun = f"rerun it with `regime reproduce --only {run_id} --force --work {work}`"
        stamp = read_stamp(work, run_id)
        outputs = stamp.get("outputs") if stamp is not None else None
        stamped = outputs.get("executed") if isinstance(outputs, dict) else None
        meta = read_json_file(page).get("metadata", {}).get("regime", {})
        held = meta.get("executed_sha256") if isinstance(meta, dict) else None
        if stamped is None or held != stamped:
            why = (
                "its run has no stamp"
                if stamped is None
                else "it is not the notebook its run stamped"
            )
            raise ValueError(f"{page}: {why} (metadata.regime.executed_sha256); {rerun}")
    target.mkdir(parents=True, exist_ok=True)
    names = {page.name for page in pages}
    for old in sorted(target.glob("*.ipynb")):
        if old.name not in names:
            old.unlink()
    for page in pages:
        write_if_changed(target / page.name, page.read_bytes())
    return [target / page.name for page in pages]


def build_book(
    root: Path | str = paths.REPO_ROOT,
    *,
    output: Path | str | None = None,
    work: Path | str | None = None,
    strict: bool = True,
    all_pages: bool = False,
    timing: Path | str | None = None,
) -> BookBuild:
    """Build the book at ``root`` (which holds ``_config.yml`` and ``_toc.yml``).

    HTML lands in ``<output or root>/_build/html``. ``work`` is the directory the records are
    read from (default: ``REGIME_WORK_DIR``, else ``_build/regime`` under ``root``). Raises
    ``ValueError`` if a toc page is missing (naming it, and ``regime reproduce`` for executed
    notebooks) or a record does not match its run's stamp (:func:`check_records`); returns the
    build's exit code and log otherwise. ``timing``: a JSON file the build writes its phases'
    seconds to (``regime_book.timing``); a relative one is taken from the current
    directory (``REGIME_BOOK_TIMING`` in the environment does the same for any build).
    """
    book_root = Path(root).resolve()
    for required in ("_config.yml", "_toc.yml"):
        if not (book_root / required).is_file():
            raise FileNotFoundError(f"{book_root / required} is missing; is {book_root} a book?")
    records = _records_dir(book_root, work)
    # the last committed records and pages, for the whole build: a running reproduce commits
    # each run under this lock, so its next commit waits for the build, never the reverse
    with records_lock(records, what="regime book", shared=True):
        return _build(book_root, records, output, strict, all_pages, timing)


def _build(
    book_root: Path,
    records: Path,
    output: Path | str | None,
    strict: bool,
    all_pages: bool,
    timing: Path | str | None,
) -> BookBuild:
    env = dict(os.environ)
    # the child reads the same work directory's records and keeps its strict-pass mark there
    env["REGIME_WORK_DIR"] = str(records)
    # absolute, links kept: the writers' rule decides where a link may lead
    if timing is not None:
        env[TIMING_ENV] = str(Path(timing).absolute())
    elif env.get(TIMING_ENV, "").strip():  # the child runs in the book's root, not here
        env[TIMING_ENV] = str(Path(env[TIMING_ENV].strip()).absolute())
    out = Path(output).resolve() if output is not None else None
    # every output path before any work starts (an unwritable report used to fail at the end)
    check_outputs(records, out, env.get(TIMING_ENV, "").strip() or None)
    check_records(records)  # the records first: a page's stamp is checked when it is staged
    stage_executed(book_root, records)
    missing = missing_pages(book_root)
    if missing:
        executed = [m for m in missing if m.startswith(EXECUTED_PREFIX)]
        hint = (
            f"; executed notebooks {executed} come from `regime reproduce`, run it first"
            if executed
            else ""
        )
        raise ValueError(f"{book_root / '_toc.yml'} names missing pages {missing}{hint}")
    command = build_command(book_root, output=out, strict=strict, all_pages=all_pages)
    started = time.perf_counter()
    completed = subprocess.run(
        command,
        cwd=book_root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - started
    html_dir = (out if out is not None else book_root) / "_build" / "html"
    return BookBuild(
        returncode=completed.returncode,
        seconds=seconds,
        html_dir=html_dir,
        log=completed.stdout + completed.stderr,
    )
