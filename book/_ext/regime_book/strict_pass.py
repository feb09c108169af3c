"""After a build that did not pass strictly, the next reads every page, so a failure repeats.

Sphinx reads a page again only when it, or a file it depends on, changed (``env-get-outdated``;
:mod:`regime_book.records` adds a record's change of content). A page it does not
read keeps its pickled doctree in the doctree directory and gives no warning, so a strict build
that failed on a page's warning used to pass when run again over the same files.

The rule, kept by this extension so that a plain ``jupyter-book build`` follows it too:

- before Sphinx reads a page, a build leaves :data:`MARKER` in the work directory whose records
  it reads (``<work>/book``: all state of a work directory stays in it), and notes that work
  directory beside the pickled environment (:data:`CACHE_OWNER`);
- at ``build-finished`` it removes the marker only if it was strict (warnings are errors, and
  ``nitpicky`` is on), gave no warning and raised nothing: a failed strict build, a build that
  stopped or was killed, and a ``--no-strict`` build (which skips nitpick) all leave it;
- a build that finds the marker reads every page again, as ``--all`` does, and says so once; so
  does a build whose pickled pages were read for another work directory.

Why: noting which pages warned and reading only those again needs Sphinx's internals (the page
in hand while reading, resolving and writing each page), which can change. This rule's price is
one full read after a build that did not pass (the real book on 2 busy cores: 71 s, against 10 s
reading the one page that warned); builds after a strict pass stay incremental. Sphinx 7.4
says a build is strict in its public ``warningiserror`` and ``keep_going`` (``--keep-going``
turns the first off, the second on) but counts warnings only in its private ``_warncount``: a
Sphinx without it keeps the marker, so every build reads every page rather than let a warning
pass unseen.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.util import logging

from regime_core import paths
from regime_core.book.build import MARKER  # the package's: `regime book` checks it, no Sphinx
from regime_core.integrity import atomic_write_bytes, make_directory, read_text, remove_file

logger = logging.getLogger(__name__)

#: in the doctree directory: the work directory whose records its pickled pages were read with
CACHE_OWNER = "regime-work"
READ_EVERY_PAGE = "reading every page again: the last build did not pass strictly"
OTHER_WORK = "reading every page again: the last build read another work directory"


def build_work_dir(app: Sphinx) -> Path:
    """The work directory whose records the build reads: ``regime_work_dir`` (a Sphinx without
    the records extension has none), else :func:`regime_core.paths.work_dir`'s rule; relative to
    the book's root, resolved."""
    work = paths.work_dir(getattr(app.config, "regime_work_dir", None) or None)
    return (work if work.is_absolute() else Path(app.srcdir) / work).resolve()


def marker_path(app: Sphinx) -> Path:
    """The marker of the work directory the build reads (:func:`build_work_dir`)."""
    return paths.book_state_dir(build_work_dir(app)) / MARKER


def passed_strictly(app: Sphinx, exception: BaseException | None) -> bool:
    """Whether ``app``'s build was strict, gave no warning and raised nothing."""
    strict = (app.warningiserror or app.keep_going) and app.config.nitpicky
    return bool(strict) and exception is None and getattr(app, "_warncount", 1) == 0


def read_every_page_after_a_failure(
    app: Sphinx, env: Any, added: set[str], changed: set[str], removed: set[str]
) -> list[str]:
    """``env-get-outdated``: every page when the marker is there; then leave it for this build."""
    marker = marker_path(app)
    unclean = os.path.lexists(marker)  # a dangling link counts: the write below names it
    make_directory(marker.parent)
    atomic_write_bytes(marker, b"")  # a directory, FIFO or dangling link there is refused
    owner_file = Path(app.doctreedir) / CACHE_OWNER
    work = str(build_work_dir(app))
    owner = read_text(owner_file) if os.path.lexists(owner_file) else None
    moved = owner is not None and owner != work
    make_directory(owner_file.parent)
    atomic_write_bytes(owner_file, work.encode("utf-8"))
    pages = sorted(env.found_docs - added) if unclean or moved else []
    if pages:  # on Sphinx's own line, as its reasons: "[...] 0 added, N changed, 0 removed"
        logger.info(f"[regime: {READ_EVERY_PAGE if unclean else OTHER_WORK}] ", nonl=True)
    return pages


def remove_marker_after_a_strict_pass(app: Sphinx, exception: BaseException | None) -> None:
    """``build-finished``: the next build may read only what changed."""
    if passed_strictly(app, exception):
        remove_file(marker_path(app))


def setup_strict_pass(app: Sphinx) -> None:
    """Register the hooks above."""
    app.connect("env-get-outdated", read_every_page_after_a_failure)
    # after the other handlers, whose warnings count too
    app.connect("build-finished", remove_marker_after_a_strict_pass, priority=900)
