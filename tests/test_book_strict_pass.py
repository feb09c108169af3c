"""After a build that did not pass strictly the next reads every page
(regime_book.strict_pass): which builds pass strictly, the marker's life over
successive builds on a stand-in application, and a real Sphinx 7.4 build of a two-page project
(its public ``warningiserror``/``keep_going`` and private ``_warncount`` as the module reads
them). tests/test_book_build.py builds a real book twice (slow)."""

from __future__ import annotations

from collections.abc import Collection
from io import StringIO
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from sphinx.application import Sphinx
from sphinx.util.docutils import docutils_namespace, patch_docutils

from regime_book.strict_pass import (
    MARKER,
    READ_EVERY_PAGE,
    passed_strictly,
    read_every_page_after_a_failure,
    remove_marker_after_a_strict_pass,
)

PAGES = {"index", "claims", "bad"}


def _app(tmp_path: Path, *, warnings: int = 0, work: str = "work", **flags: Any) -> Any:
    """What the module reads of a ``regime book`` (strict) build's application, reading the
    records of ``tmp_path / work``."""
    settings = {"warningiserror": False, "keep_going": True, "nitpicky": True, **flags}
    return SimpleNamespace(
        srcdir=str(tmp_path),
        doctreedir=str(tmp_path / ".doctrees"),
        warningiserror=settings["warningiserror"],
        keep_going=settings["keep_going"],
        config=SimpleNamespace(nitpicky=settings["nitpicky"], regime_work_dir=work),
        _warncount=warnings,
    )


@pytest.mark.parametrize(
    ("flags", "warnings", "exception", "passed"),
    [
        ({}, 0, None, True),  # --warningiserror --keep-going --nitpick, clean
        ({"warningiserror": True, "keep_going": False}, 0, None, True),  # -W alone
        ({}, 1, None, False),  # a strict build that warned
        ({}, 0, RuntimeError("stopped"), False),  # a build that raised
        ({"keep_going": False}, 0, None, False),  # --no-strict: warnings are not errors
        ({"nitpicky": False}, 0, None, False),  # strict, but references not nitpicked
    ],
)
def test_only_a_clean_strict_build_passes(
    tmp_path: Path,
    flags: dict[str, bool],
    warnings: int,
    exception: BaseException | None,
    passed: bool,
) -> None:
    app = _app(tmp_path, warnings=warnings, **flags)
    assert passed_strictly(app, exception) is passed


def test_a_sphinx_without_a_warning_count_never_passes(tmp_path: Path) -> None:
    app = _app(tmp_path)
    del app._warncount
    assert not passed_strictly(app, None)


def _build(
    app: Any, *, added: Collection[str] = (), exception: BaseException | None = None
) -> list[str]:
    """One build through the module's hooks over :data:`PAGES`; the pages it asks to read."""
    env = SimpleNamespace(found_docs=set(PAGES))
    pages = read_every_page_after_a_failure(app, env, set(added), set(), set())
    assert (Path(app.srcdir) / app.config.regime_work_dir / "book" / MARKER).is_file()
    remove_marker_after_a_strict_pass(app, exception)
    return pages


def test_the_marker_forces_every_page_until_a_strict_pass(tmp_path: Path) -> None:
    clean, warned, loose = _app(tmp_path), _app(tmp_path, warnings=2), _app(tmp_path)
    loose.keep_going = False
    marker = tmp_path / "work" / "book" / MARKER  # in the work directory, not the cache
    assert _build(clean, added=PAGES) == []  # a fresh environment reads every page anyway
    assert _build(clean) == [] and not marker.exists()
    assert _build(warned) == [] and marker.is_file()
    assert _build(warned) == sorted(PAGES)  # fails again: every page read
    assert _build(clean) == sorted(PAGES)  # fixed: passes, and removes the marker
    assert _build(clean) == [] and not marker.exists()
    assert _build(clean, exception=KeyboardInterrupt()) == []  # stopped
    assert _build(clean, added={"index"}) == ["bad", "claims"]  # Sphinx reads 'index' itself
    assert _build(loose) == [] and marker.is_file()  # --no-strict, even clean
    assert _build(clean) == sorted(PAGES) and not marker.exists()


def test_the_marker_is_the_work_directory_s_and_another_one_reads_every_page(
    tmp_path: Path,
) -> None:
    """Each work directory keeps its own marker; a build whose cached pages were read for
    another work directory reads every page (a page must not keep another one's numbers)."""
    first, other = _app(tmp_path), _app(tmp_path, work="other", warnings=1)
    assert _build(first, added=PAGES) == []
    assert _build(other) == sorted(PAGES)  # the cache was read for work/
    assert (tmp_path / "other" / "book" / MARKER).is_file()
    assert not (tmp_path / "work" / "book" / MARKER).exists()
    assert not (tmp_path / ".doctrees" / MARKER).exists()
    assert _build(first) == sorted(PAGES)  # back to work/: read again, and it passes
    assert _build(first) == []


def _sphinx_build(src: Path, **strictness: bool) -> tuple[int, str]:
    """A real Sphinx build of ``src`` with the module's hooks: its exit status and its log."""
    log = StringIO()
    with patch_docutils(src), docutils_namespace():
        app = Sphinx(
            src,
            src,
            src / "_build" / "out",
            src / "_build" / "doctrees",
            "dummy",
            status=log,
            warning=log,
            confoverrides={"nitpicky": True},
            **strictness,
        )
        app.build()
    return app.statuscode, log.getvalue()


def test_a_real_strict_build_fails_again_until_the_page_is_fixed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A nitpick warning is given when a page is resolved: Sphinx alone would not resolve the
    unchanged page again, and the second build would pass. The marker is the work
    directory's (REGIME_WORK_DIR, as ``regime book --work`` sets it for its child)."""
    monkeypatch.setenv("REGIME_WORK_DIR", str(tmp_path / "work"))
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text("from regime_book.strict_pass import setup_strict_pass as setup\n")
    (src / "index.rst").write_text("Index\n=====\n\n.. toctree::\n\n   bad\n")
    (src / "bad.rst").write_text("Bad\n===\n\nSee :py:func:`no_such_function`.\n")
    strict = {"warningiserror": True, "keep_going": True}
    marker = tmp_path / "work" / "book" / MARKER
    status, log = _sphinx_build(src, **strict)
    assert status == 1 and "no_such_function" in log and marker.is_file()
    status, log = _sphinx_build(src, **strict)  # nothing changed
    assert status == 1 and "no_such_function" in log
    assert log.count(READ_EVERY_PAGE) == 1 and "0 added, 2 changed, 0 removed" in log
    (src / "bad.rst").write_text("Bad\n===\n\nFixed.\n")
    status, log = _sphinx_build(src, **strict)
    assert status == 0 and not marker.exists()
    status, log = _sphinx_build(src, **strict)
    assert status == 0 and READ_EVERY_PAGE not in log and "0 added, 0 changed, 0 removed" in log
    status, log = _sphinx_build(src)  # --no-strict: passes, and leaves the next one reading all
    assert status == 0 and marker.is_file()
