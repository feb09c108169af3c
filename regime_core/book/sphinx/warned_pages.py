"""Pages read again while they warn, so that an incremental build warns as a full one does.

Sphinx reads a page again only when it, or a file it noted as a dependency, changed
(``env-get-outdated``; :mod:`regime_core.book.sphinx.records` adds a change of content). A page
it does not read again keeps its pickled doctree under ``<output>/_build/.doctrees`` and gives
no warning. So a strict build that failed on a warning in a page passed on the next run over
the same files, which did not read that page again: only ``--all`` (a fresh environment) found
the warning again.

What this module does:

- While Sphinx reads a page, resolves its references (where ``--nitpick`` warns) or writes it,
  every warning it counts (those ``suppress_warnings`` does not hide) is noted against it:
  a handler on Sphinx's logger, knowing the page from ``env.temp_data['docname']`` (set by
  Sphinx while it reads and post-transforms a page) and from the builder's ``write_doc``.
- At ``build-finished`` the build writes what it noted to :data:`STATE_FILE` beside the pickled
  environment; on the next build ``env-get-outdated`` returns the pages that warned, so Sphinx
  reads them again and gives their warnings again itself. A strict build that failed fails again
  on the same warning, every build, until the page is fixed; then the page reads clean, and the
  file lists no page. A build without warnings leaves that empty list, which forces nothing.
- Every page is read again (as ``--all`` would) when the last build's warnings cannot all be
  tied to pages, or its record cannot be trusted: a warning given outside every page (the
  consistency check, an index page, a page read by a parallel reader); a build that stopped with
  an error or never finished (the file says so from the start of each build to its end); a file
  missing or unreadable while the environment holds pages, or an environment pickled since the
  file was written (by a version of the book's code without this module); a change of the
  settings that decide which warnings are given (:data:`WARNING_SETTINGS`): a ``regime book
  --no-strict`` build does not ``--nitpick``, so the strict build after it resolves every page's
  references again. Warnings of a build's initialisation (configuration, extensions) and of
  ``build-finished`` handlers are not noted: those steps run in full on every build.

Why this design: a marker left by a failed strict build, making every strict build read every
page until one passes, is as safe but turns each build after a failure into a full one (the real
book over the default profile's records, on 2 shared cores: 210 to 220 s reading every page,
against 34 to 49 s for an incremental build, one that reads the warned page again included),
and, kept by the CLI, misses builds run otherwise. Replaying the stored warning texts of pages
that are not read again keeps builds fast but repeats a warning that may be gone (a duplicate
label removed from the other page) and must copy Sphinx's formatting and suppression. Reading
the warned pages again costs one page's reading and lets Sphinx itself say what is wrong now.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sphinx.application import ENV_PICKLE_FILENAME, Sphinx
from sphinx.util import logging as sphinx_logging
from sphinx.util.build_phase import BuildPhase

from regime_core.integrity import atomic_write_bytes
from regime_core.strict_json import read_json_file

logger = sphinx_logging.getLogger(__name__)

#: the file, in the build's doctree directory, that says which pages the next build reads again
STATE_FILE = "regime-warned-pages.json"
STATE_FORMAT = "regime-warned-pages/1"
#: the configuration values that decide which warnings a build gives: a change reads every page
WARNING_SETTINGS: tuple[str, ...] = (
    "nitpicky",
    "nitpick_ignore",
    "nitpick_ignore_regex",
    "suppress_warnings",
)
UNFINISHED = "the last build did not finish"
STOPPED = "the last build stopped with an error"
NO_RECORD = "no record of the last build's warnings"
OTHER_WRITER = "the environment was pickled by a build that noted no warnings here"
_SEEN = "regime_warned_pages_seen"  # marks a log record this module has noted
_SHOWN_PAGES = 10  # pages named in the build's log line


@dataclass(frozen=True)
class WarnedPages:
    """What a build leaves for the next one: the pages that warned (each with its first
    warning), why every page must be read again (empty when only ``pages``), the
    :data:`WARNING_SETTINGS` it was built with, and the pickled environment it left
    (:func:`environment_stamp`)."""

    pages: dict[str, str] = field(default_factory=dict)
    every_page: str = ""
    settings: dict[str, Any] = field(default_factory=dict)
    environment: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "format": STATE_FORMAT,
            "every_page": self.every_page,
            "pages": dict(sorted(self.pages.items())),
            "settings": self.settings,
            "environment": self.environment,
        }

    @classmethod
    def from_json(cls, data: Any, where: str) -> WarnedPages:
        """The state written by :meth:`to_json`; ``ValueError`` naming ``where`` and the field."""
        if not isinstance(data, dict) or data.get("format") != STATE_FORMAT:
            raise ValueError(f"{where}: not a {STATE_FORMAT} file")
        pages = data.get("pages")
        if not isinstance(pages, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in pages.items()
        ):
            raise ValueError(f"{where}: field 'pages' is not a mapping of page to warning")
        if not isinstance(data.get("settings"), dict):
            raise ValueError(f"{where}: field 'settings' is not a mapping")
        for name in ("every_page", "environment"):
            if not isinstance(data.get(name), str):
                raise ValueError(f"{where}: field {name!r} is not a string")
        return cls(pages, data["every_page"], data["settings"], data["environment"])


@dataclass
class BuildWarnings:
    """The warnings of the running build: the first of each page, those of no page, and the
    pages the build read."""

    pages: dict[str, str] = field(default_factory=dict)
    outside: list[str] = field(default_factory=list)
    read: set[str] = field(default_factory=set)

    def note(self, page: str | None, message: str) -> None:
        if page:
            self.pages.setdefault(page, message)
        else:
            self.outside.append(message)


def _plain(value: Any) -> Any:
    """A configuration value as JSON keeps it: tuples as lists, sets as sorted lists."""
    if isinstance(value, set | frozenset):
        return sorted((_plain(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def warning_settings(config: Any) -> dict[str, Any]:
    """The :data:`WARNING_SETTINGS` of a Sphinx configuration, as JSON keeps them."""
    return {name: _plain(getattr(config, name, None)) for name in WARNING_SETTINGS}


def environment_stamp(doctree_dir: Path) -> str:
    """The size and time of the pickled environment in ``doctree_dir`` (``""`` when there is
    none): a build that pickled it without this module (another version of the book's code)
    changes it without writing :data:`STATE_FILE`."""
    try:
        info = (doctree_dir / ENV_PICKLE_FILENAME).stat()
    except FileNotFoundError:
        return ""
    return f"{info.st_size}:{info.st_mtime_ns}"


def pages_to_read_again(
    last: WarnedPages | None, settings: dict[str, Any], known: Iterable[str], environment: str
) -> tuple[list[str], str]:
    """The pages of ``known`` (those the pickled environment holds) to read again, sorted, and
    why; none for a fresh environment, which reads every page anyway. ``environment`` is the
    :func:`environment_stamp` of the pickled environment now."""
    known = set(known)
    if not known:
        return [], ""
    if last is None:
        return sorted(known), NO_RECORD
    if last.every_page:
        return sorted(known), last.every_page
    if last.environment != environment:
        return sorted(known), OTHER_WRITER
    changed = [name for name in settings if last.settings.get(name) != settings[name]]
    if changed:
        return sorted(known), f"the warning settings changed ({', '.join(changed)})"
    pages = sorted(set(last.pages) & known)
    return pages, "they warned in the last build" if pages else ""


def next_state(
    last: WarnedPages | None,
    warnings: BuildWarnings,
    *,
    settings: dict[str, Any],
    known: Iterable[str],
    failed: bool,
    environment: str = "",
) -> WarnedPages:
    """What a finished build leaves for the next one: the pages that warned in it, and those of
    the last state it did not read (still holding their warnings); every page when a warning
    was of no page, when it ``failed``, or when the last state asked for every page and this
    build did not read them all."""
    known = set(known)
    pages = dict(warnings.pages)
    for page, message in (last.pages if last is not None else {}).items():
        if page in known and page not in warnings.read:
            pages.setdefault(page, message)
    every_page = ""
    if failed:
        every_page = STOPPED
    elif warnings.outside:
        every_page = f"the last build warned outside any page: {warnings.outside[0]}"
    elif last is not None and last.every_page and not known <= warnings.read:
        every_page = last.every_page
    return WarnedPages(pages, every_page, settings, environment)


def read_state(path: Path) -> WarnedPages | None:
    """The state at ``path``; ``None`` when it is missing or unreadable (said in the log)."""
    try:
        return WarnedPages.from_json(read_json_file(path), str(path))
    except FileNotFoundError:
        return None
    except ValueError as err:
        logger.info(f"regime: ignoring {path}: {err}")
        return None


def write_state(path: Path, state: WarnedPages) -> None:
    data = json.dumps(state.to_json(), indent=1, ensure_ascii=False) + "\n"
    atomic_write_bytes(path, data.encode("utf-8"))


class WarningWatch(logging.Handler):
    """Notes each warning Sphinx counts against the page being read, resolved or written
    (:class:`BuildWarnings`); on Sphinx's logger from ``builder-inited`` to ``build-finished``."""

    def __init__(self, app: Sphinx) -> None:
        super().__init__(level=logging.WARNING)
        self.app = app
        self.writing: str | None = None  # the page inside the builder's write_doc
        self.warnings = BuildWarnings()

    def emit(self, record: logging.LogRecord) -> None:
        if getattr(record, _SEEN, False):
            return  # Sphinx holds warnings back while it reads and writes, then logs them again
        setattr(record, _SEEN, True)
        if self.app.phase == BuildPhase.INITIALIZATION:
            return
        suppressed = self.app.config.suppress_warnings
        kind, subtype = getattr(record, "type", ""), getattr(record, "subtype", "")
        if sphinx_logging.is_suppressed_warning(kind, subtype, suppressed):
            return
        try:
            message = record.getMessage()
        except (TypeError, ValueError):
            message = str(record.msg)
        page = self.writing or self.app.env.temp_data.get("docname")
        self.warnings.note(page, message)

    def writing_page(self, method: Callable[[str, Any], Any]) -> Callable[[str, Any], Any]:
        """A builder's per-page ``method``, during which warnings are noted against its page."""

        def watched(docname: str, doctree: Any) -> Any:
            self.writing = docname
            try:
                return method(docname, doctree)
            finally:
                self.writing = None

        return watched


@dataclass
class _Build:
    state_file: Path
    last: WarnedPages | None
    settings: dict[str, Any]
    environment: str  # the pickled environment's stamp when the build started
    watch: WarningWatch
    said: str = ""  # which pages are read again, and why


def _build(app: Sphinx) -> _Build:
    build: _Build = app.__dict__["_regime_warned_pages"]
    return build


def _start(app: Sphinx) -> None:
    """``builder-inited``: read the last state, watch the warnings, and say in the file that a
    build is running (so that one that never finishes makes the next read every page)."""
    state_file = Path(app.doctreedir) / STATE_FILE
    last = read_state(state_file)
    settings = warning_settings(app.config)
    watch = WarningWatch(app)
    logging.getLogger(sphinx_logging.NAMESPACE).addHandler(watch)
    builder = app.builder
    for method in ("write_doc_serialized", "write_doc"):
        setattr(builder, method, watch.writing_page(getattr(builder, method)))
    environment = environment_stamp(Path(app.doctreedir))
    app.__dict__["_regime_warned_pages"] = _Build(state_file, last, settings, environment, watch)
    base = last if last is not None else WarnedPages(settings=settings)
    write_state(state_file, WarnedPages(base.pages, UNFINISHED, base.settings, base.environment))


def read_again(
    app: Sphinx, env: Any, added: set[str], changed: set[str], removed: set[str]
) -> list[str]:
    """``env-get-outdated``: the pages :func:`pages_to_read_again` names, said in the log."""
    build = _build(app)
    pages, why = pages_to_read_again(build.last, build.settings, env.all_docs, build.environment)
    pages = [p for p in pages if p not in added | changed | removed]
    if pages:
        shown = ", ".join(pages[:_SHOWN_PAGES]) + (", ..." if len(pages) > _SHOWN_PAGES else "")
        build.said = f"regime: reading {len(pages)} page(s) again ({why}): {shown}"
    return pages


def _note_read(app: Sphinx, env: Any, docnames: list[str]) -> None:
    """``env-before-read-docs``: note the pages read, and say which are read again (here, on a
    line of its own after Sphinx's count of the pages added, changed and removed)."""
    build = _build(app)
    build.watch.warnings.read.update(docnames)
    if build.said:
        logger.info(build.said)


def _finish(app: Sphinx, exception: BaseException | None) -> None:
    """``build-finished``: stop watching and write what the next build reads again."""
    build = _build(app)
    logging.getLogger(sphinx_logging.NAMESPACE).removeHandler(build.watch)
    state = next_state(
        build.last,
        build.watch.warnings,
        settings=build.settings,
        known=app.env.all_docs,
        failed=exception is not None,
        environment=environment_stamp(Path(app.doctreedir)),
    )
    write_state(build.state_file, state)


def setup_warned_pages(app: Sphinx) -> None:
    """Register the hooks above."""
    app.connect("builder-inited", _start)
    app.connect("env-get-outdated", read_again)
    # after every handler that may change the list of pages to read
    app.connect("env-before-read-docs", _note_read, priority=900)
    # before other handlers: what they warn, they warn on every build
    app.connect("build-finished", _finish, priority=100)
