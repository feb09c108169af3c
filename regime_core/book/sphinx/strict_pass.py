"""After a build that did not pass strictly, the next reads every page, so a failure repeats.

Sphinx reads a page again only when it, or a file it depends on, changed (``env-get-outdated``;
:mod:`regime_core.book.sphinx.records` adds a record's change of content). A page it does not
read keeps its pickled doctree in the doctree directory and gives no warning, so a strict build
that failed on a page's warning used to pass when run again over the same files.

The rule, kept by this extension so that a plain ``jupyter-book build`` follows it too:

- before Sphinx reads a page, a build leaves :data:`MARKER` beside the pickled environment;
- at ``build-finished`` it removes the marker only if it was strict (warnings are errors, and
  ``nitpicky`` is on), gave no warning and raised nothing: a failed strict build, a build that
  stopped or was killed, and a ``--no-strict`` build (which skips nitpick) all leave it;
- a build that finds the marker reads every page again, as ``--all`` does, and says so once.

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

from regime_core.integrity import atomic_write_bytes, make_directory, remove_file

logger = logging.getLogger(__name__)

#: in the doctree directory from the start of each build until one passes strictly
MARKER = "regime-unclean"
READ_EVERY_PAGE = "reading every page again: the last build did not pass strictly"


def passed_strictly(app: Sphinx, exception: BaseException | None) -> bool:
    """Whether ``app``'s build was strict, gave no warning and raised nothing."""
    strict = (app.warningiserror or app.keep_going) and app.config.nitpicky
    return bool(strict) and exception is None and getattr(app, "_warncount", 1) == 0


def read_every_page_after_a_failure(
    app: Sphinx, env: Any, added: set[str], changed: set[str], removed: set[str]
) -> list[str]:
    """``env-get-outdated``: every page when the marker is there; then leave it for this build."""
    marker = Path(app.doctreedir) / MARKER
    unclean = os.path.lexists(marker)  # a dangling link counts: the write below names it
    make_directory(marker.parent)
    atomic_write_bytes(marker, b"")  # a directory, FIFO or dangling link there is refused
    pages = sorted(env.found_docs - added) if unclean else []
    if pages:  # on Sphinx's own line, as its reasons: "[...] 0 added, N changed, 0 removed"
        logger.info(f"[regime: {READ_EVERY_PAGE}] ", nonl=True)
    return pages


def remove_marker_after_a_strict_pass(app: Sphinx, exception: BaseException | None) -> None:
    """``build-finished``: the next build may read only what changed."""
    if passed_strictly(app, exception):
        remove_file(Path(app.doctreedir) / MARKER)


def check_marker(doctree_dir: Path | str) -> None:
    """``ValueError`` naming the marker unless a build could write and remove it: nothing or
    a regular file is there (checked before a build starts, not at its end)."""
    marker = Path(doctree_dir) / MARKER
    if os.path.lexists(marker) and not (marker.is_file() and not marker.is_symlink()):
        kind = "a symbolic link" if marker.is_symlink() else "not a regular file"
        raise ValueError(
            f"the strict-pass marker {marker} is {kind}; a build writes and removes it: "
            "remove it by hand"
        )


def setup_strict_pass(app: Sphinx) -> None:
    """Register the hooks above."""
    app.connect("env-get-outdated", read_every_page_after_a_failure)
    # after the other handlers, whose warnings count too
    app.connect("build-finished", remove_marker_after_a_strict_pass, priority=900)
