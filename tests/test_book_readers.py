"""The book in a browser, as its readers meet it (issue 43): every page of the quick book
(``quick_book`` in conftest.py) is read in headless Chromium (tools.bookcheck.browser) at a
phone's, a tablet's, a laptop's and a desktop's width (its ``WIDTHS``), and the
screenshots it judged are saved in ``_build/screenshots`` beside the build, with ``report.json``.

A page shows no table cell cut off or out of view without a hint, no figure text below
``MIN_FIGURE_TEXT_PX``, no source markup as text, no horizontal overflow on a phone, no
maths left as source, no console error; the landing page keeps its budgets of words and height
(``LANDING_MAX_WORDS``, ``LANDING_MAX_HEIGHT_PX``). Every kind is its own test, so a
failure names what a reader would meet and where.

``REGIME_TEST_BOOK_HTML=DIR`` reads a book already built (``_build/html`` after ``regime book``)
instead of building the quick one, whose screenshots then land in ``DIR/../screenshots``.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tools.bookcheck.browser import (
    BROWSER_KINDS,
    LANDING_MAX_HEIGHT_PX,
    WIDTHS,
    BrowserReport,
    check_in_browser,
)
from tools.bookcheck.check import book_pages, format_report, redirect_target

pytestmark = [pytest.mark.realdata, pytest.mark.slow]


@pytest.fixture(scope="module")
def html(request: pytest.FixtureRequest) -> Path:
    built = os.environ.get("REGIME_TEST_BOOK_HTML")
    if built:
        return Path(built).resolve()
    quick_book = request.getfixturevalue("quick_book")
    assert quick_book.ok, "\n".join(quick_book.warnings()) or quick_book.log[-3000:]
    return Path(quick_book.html_dir)


@pytest.fixture(scope="module")
def readers(chromium: str, html: Path) -> BrowserReport:
    started = time.perf_counter()
    report = check_in_browser(html, screenshots=html.parent / "screenshots", widths=WIDTHS)
    print(
        f"\nthe book in a browser: {time.perf_counter() - started:.0f} s "
        f"({len(report.views)} page views), screenshots in {report.screenshots}\n"
        f"{format_report(report.problems)}"
    )
    return report


@pytest.mark.parametrize("kind", (*BROWSER_KINDS, "load"))
def test_no_page_shows(kind: str, readers: BrowserReport) -> None:
    assert [str(p) for p in readers.problems if p.kind == kind] == []


@pytest.mark.parametrize("width", WIDTHS)
def test_every_page_is_judged_and_its_screenshot_saved(
    width: int, readers: BrowserReport, html: Path
) -> None:
    from PIL import Image

    pages = {p.relative_to(html).as_posix() for p in book_pages(html) if not redirect_target(p)}
    views = [v for v in readers.views if v.width == width]
    assert {v.page for v in views} == pages
    for view in views:
        assert view.screenshot is not None, view.page
        assert view.screenshot.is_relative_to(html.parent / "screenshots")
        with Image.open(view.screenshot) as image:  # reads the header only
            assert (image.format, image.width) == ("PNG", width), view.page
            assert image.height >= 600, view.page
        # a blank page compresses to a few kB (tests/test_bookcheck_browser.py decodes the pixels)
        assert view.screenshot.stat().st_size > 8000, f"{view.screenshot} looks blank"
    assert (readers.screenshots / "report.json").is_file()


def test_the_landing_page_is_read_at_every_width(readers: BrowserReport) -> None:
    assert readers.landing is not None
    views = {v.width: v for v in readers.views if v.page == readers.landing}
    assert set(views) == set(WIDTHS)
    assert set(LANDING_MAX_HEIGHT_PX) <= set(views)  # each budget is measured
    assert all(v.words > 0 and v.height > 0 for v in views.values())
