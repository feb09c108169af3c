"""Pages that warned are read again (regime_core.book.sphinx.warned_pages): the warnings Sphinx
logs are noted against the page being read or written, the state a build leaves names the pages
the next reads again (or every page, and why), and a clean build leaves nothing to read again.
Without building a book: tests/test_book_build.py builds one twice."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from sphinx.application import ENV_PICKLE_FILENAME
from sphinx.util import logging as sphinx_logging
from sphinx.util.build_phase import BuildPhase

from regime_core.book.sphinx import warned_pages as wp
from regime_core.book.sphinx.warned_pages import (
    NO_RECORD,
    OTHER_WRITER,
    STATE_FILE,
    STOPPED,
    UNFINISHED,
    BuildWarnings,
    WarnedPages,
    WarningWatch,
    next_state,
    pages_to_read_again,
    read_state,
    warning_settings,
    write_state,
)

STRICT = {
    "nitpicky": True,
    "nitpick_ignore": [],
    "nitpick_ignore_regex": [],
    "suppress_warnings": ["myst.domains"],
}
PAGES = {"index", "claims", "bad"}
log = sphinx_logging.getLogger("regime_core.tests")


def test_a_fresh_environment_reads_every_page_anyway() -> None:
    assert pages_to_read_again(None, STRICT, set(), "") == ([], "")


def test_the_pages_that_warned_are_read_again() -> None:
    last = WarnedPages(pages={"bad": "no key", "gone": "no key"}, settings=STRICT)
    assert pages_to_read_again(last, STRICT, PAGES, "") == (
        ["bad"],
        "they warned in the last build",
    )
    assert pages_to_read_again(WarnedPages(settings=STRICT), STRICT, PAGES, "") == ([], "")


@pytest.mark.parametrize(
    ("last", "why"),
    [
        (None, NO_RECORD),
        (WarnedPages(every_page=UNFINISHED, settings=STRICT), UNFINISHED),
        (
            WarnedPages(pages={"bad": "x"}, settings={**STRICT, "nitpicky": False}),
            "the warning settings changed (nitpicky)",
        ),
        (WarnedPages(settings=STRICT, environment="1:2"), OTHER_WRITER),
    ],
)
def test_every_page_is_read_again_when_the_last_build_cannot_say(
    last: WarnedPages | None, why: str
) -> None:
    assert pages_to_read_again(last, STRICT, PAGES, "") == (sorted(PAGES), why)


def test_the_next_state_names_the_pages_that_warned() -> None:
    warnings = BuildWarnings(read={"bad", "index"})
    warnings.note("bad", "first")
    warnings.note("bad", "second")
    state = next_state(None, warnings, settings=STRICT, known=PAGES, failed=False)
    assert state == WarnedPages(pages={"bad": "first"}, settings=STRICT)
    # fixed: read again, clean, and a page of the last state this build did not read is kept
    last = WarnedPages(pages={"bad": "first", "claims": "old"}, settings=STRICT)
    clean = next_state(
        last, BuildWarnings(read={"bad"}), settings=STRICT, known=PAGES, failed=False
    )
    assert clean == WarnedPages(pages={"claims": "old"}, settings=STRICT)
    nothing = next_state(
        clean, BuildWarnings(read={"claims"}), settings=STRICT, known=PAGES, failed=False
    )
    assert nothing == WarnedPages(settings=STRICT)


def test_the_next_state_asks_for_every_page_when_a_warning_is_of_no_page() -> None:
    warnings = BuildWarnings(read=set(PAGES))
    warnings.note(None, "document isn't included in any toctree")
    state = next_state(None, warnings, settings=STRICT, known=PAGES, failed=False)
    assert state.every_page == (
        "the last build warned outside any page: document isn't included in any toctree"
    )
    assert (
        next_state(None, BuildWarnings(), settings=STRICT, known=PAGES, failed=True).every_page
        == STOPPED
    )
    # every page asked for and not all read (no build does, but no page is let go)
    last = WarnedPages(every_page=UNFINISHED, settings=STRICT)
    partly = BuildWarnings(read={"bad"})
    assert (
        next_state(last, partly, settings=STRICT, known=PAGES, failed=False).every_page
        == UNFINISHED
    )
    whole = BuildWarnings(read=set(PAGES))
    assert next_state(last, whole, settings=STRICT, known=PAGES, failed=False).every_page == ""


def test_the_state_file_round_trip_and_a_damaged_one(tmp_path: Path) -> None:
    file = tmp_path / "doctrees" / STATE_FILE
    assert read_state(file) is None
    state = WarnedPages(pages={"bad": "run 'demo', key 'x'"}, settings=STRICT)
    write_state(file, state)
    assert read_state(file) == state
    assert json.loads(file.read_text(encoding="utf-8"))["format"] == "regime-warned-pages/1"
    for damaged in ("{", '{"format": "other"}', '{"format": "regime-warned-pages/1", "pages": []}'):
        file.write_text(damaged, encoding="utf-8")
        assert read_state(file) is None  # unknown: every page is read again
    with pytest.raises(ValueError, match=r"x\.json: field 'pages'"):
        WarnedPages.from_json({"format": "regime-warned-pages/1", "pages": [1]}, "x.json")


def test_warning_settings_are_kept_as_json_keeps_them() -> None:
    config = SimpleNamespace(
        nitpicky=True,
        nitpick_ignore={("py:class", "B"), ("py:class", "A")},
        nitpick_ignore_regex=[("py:.*", "np")],
        suppress_warnings=("x.y",),
    )
    settings = warning_settings(config)
    assert settings == {
        "nitpicky": True,
        "nitpick_ignore": [["py:class", "A"], ["py:class", "B"]],
        "nitpick_ignore_regex": [["py:.*", "np"]],
        "suppress_warnings": ["x.y"],
    }
    assert json.loads(json.dumps(settings)) == settings


# --- the watch on Sphinx's logger, and a build's hooks, on a stand-in application ---------------


class _Builder:
    def __init__(self) -> None:
        self.written: list[str] = []

    def write_doc_serialized(self, docname: str, doctree: Any) -> None:
        pass

    def write_doc(self, docname: str, doctree: Any) -> None:
        self.written.append(docname)
        log.warning("could not lex a code cell", type="misc", subtype="highlighting_failure")


def _app(tmp_path: Path, pages: set[str], **settings: Any) -> Any:
    config = SimpleNamespace(**{**STRICT, **settings})
    env = SimpleNamespace(all_docs=dict.fromkeys(pages, 0), temp_data={})
    return SimpleNamespace(
        doctreedir=str(tmp_path / ".doctrees"),
        config=config,
        env=env,
        builder=_Builder(),
        phase=BuildPhase.INITIALIZATION,
    )


def _read(app: Any, docname: str, *messages: str) -> None:
    """What Sphinx does while it reads a page: its name in ``temp_data``, warnings held back."""
    with sphinx_logging.pending_warnings():
        app.env.temp_data["docname"] = docname
        for message in messages:
            log.warning(message, type="regime", subtype="record")
        app.env.temp_data.clear()
    app.env.all_docs[docname] = 1


def test_the_watch_notes_each_warning_once_against_its_page(tmp_path: Path) -> None:
    app = _app(tmp_path, PAGES)
    watch = WarningWatch(app)
    logging.getLogger(sphinx_logging.NAMESPACE).addHandler(watch)
    try:
        log.warning("a configuration warning")  # initialisation: every build gives it again
        app.phase = BuildPhase.READING
        _read(app, "bad", "run 'demo', key 'fit.slop'", "another")
        log.warning("hidden", type="myst", subtype="domains")  # suppress_warnings
        app.phase = BuildPhase.WRITING
        watch.writing_page(app.builder.write_doc)("claims", None)
        with sphinx_logging.pending_warnings():
            log.warning("document isn't included in any toctree", location="index")
    finally:
        logging.getLogger(sphinx_logging.NAMESPACE).removeHandler(watch)
    assert watch.warnings.pages == {
        "bad": "run 'demo', key 'fit.slop'",
        "claims": "could not lex a code cell",
    }
    assert watch.warnings.outside == ["document isn't included in any toctree"]
    assert watch.writing is None


def _build(
    app: Any, book: dict[str, list[str]], changed: set[str], *, finish: bool = True
) -> list[str]:
    """One build through the module's hooks over ``book`` (each page: the warnings reading it
    gives): Sphinx reads the ``changed`` pages and those the module asks for; returns these."""
    wp._start(app)
    app.phase = BuildPhase.READING
    again = wp.read_again(app, app.env, set(), changed, set())
    docnames = sorted(changed | set(again))
    wp._note_read(app, app.env, docnames)
    for docname in docnames:
        _read(app, docname, *book[docname])
    if finish:
        wp._finish(app, None)
    else:  # killed: the watch stays behind in this process only
        logging.getLogger(sphinx_logging.NAMESPACE).removeHandler(wp._build(app).watch)
    app.phase = BuildPhase.INITIALIZATION
    return again


def test_a_page_that_warned_is_read_until_it_reads_clean(tmp_path: Path) -> None:
    app = _app(tmp_path, set())
    book: dict[str, list[str]] = {"index": [], "bad": ["no key 'fit.slop'"]}
    assert _build(app, book, set(book)) == []  # a fresh environment: every page read
    state = read_state(tmp_path / ".doctrees" / STATE_FILE)
    assert state is not None and state.pages == {"bad": "no key 'fit.slop'"}
    assert _build(app, book, set()) == ["bad"]  # nothing changed: read, and warns, again
    assert _build(app, book, set()) == ["bad"]
    book["bad"] = []  # fixed (a page changed is read by Sphinx itself)
    assert _build(app, book, {"bad"}) == []
    assert _build(app, book, set()) == []  # nothing left to read again
    assert read_state(tmp_path / ".doctrees" / STATE_FILE) == WarnedPages(settings=STRICT)


def test_a_build_that_never_finished_or_another_strictness_reads_every_page(
    tmp_path: Path,
) -> None:
    app = _app(tmp_path, set())
    book: dict[str, list[str]] = {"index": [], "bad": []}
    _build(app, book, set(book))
    assert _build(app, book, set(), finish=False) == []
    assert _build(app, book, set()) == ["bad", "index"]  # the last build did not finish
    assert _build(app, book, set()) == []
    app.config.nitpicky = False  # regime book --no-strict
    assert _build(app, book, set()) == ["bad", "index"]
    app.config.nitpicky = True
    assert _build(app, book, set()) == ["bad", "index"]
    assert _build(app, book, set()) == []
    (tmp_path / ".doctrees" / ENV_PICKLE_FILENAME).write_bytes(b"pickled by another version")
    assert _build(app, book, set()) == ["bad", "index"]
    assert _build(app, book, set()) == []
    (tmp_path / ".doctrees" / STATE_FILE).unlink()  # an environment pickled before this module
    assert _build(app, book, set()) == ["bad", "index"]
