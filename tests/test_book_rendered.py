"""The rendered book as its readers meet it (issue 12): the book built over the quick profile's
records (``quick_book`` in conftest.py) is checked page by page at HTML level
(regime_core.book.check) and in headless Chromium at 1366 px and 390 px
(regime_core.book.browser), whose screenshots land in ``_build/screenshots`` beside the build.

Every kind of problem is its own test, so a failure names what a reader would meet and where.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from regime_core.book.browser import BROWSER_KINDS, WIDTHS, BrowserReport
from regime_core.book.check import HTML_KINDS, Problem, check_html, format_report

pytestmark = [pytest.mark.realdata, pytest.mark.slow]

# Kinds the quick book still shows while issue 12's content fixes land, with what they were when
# this test was written (tests/test_book_rendered.py, branch issue12-booktests). strict: once a
# kind is fixed its test XPASSes, which fails, and its entry here must go.
STILL_FAILING: dict[str, str] = {}  # kind -> why it still fails (none: issue 12 fixed them)


def _kinds(kinds: tuple[str, ...]) -> list[Any]:
    return [
        pytest.param(kind, marks=pytest.mark.xfail(strict=True, reason=STILL_FAILING[kind]))
        if kind in STILL_FAILING
        else kind
        for kind in kinds
    ]


@pytest.fixture(scope="module")
def html(quick_book: Any) -> Path:
    assert quick_book.ok, "\n".join(quick_book.warnings()) or quick_book.log[-3000:]
    return Path(quick_book.html_dir)


@pytest.fixture(scope="module")
def html_problems(html: Path, quick_run: Any) -> list[Problem]:
    problems = check_html(html, results_dir=quick_run.work / "results")
    print(f"\nHTML checks of the quick book:\n{format_report(problems)}")
    return problems


@pytest.fixture(scope="module")
def browser(chromium: str, html: Path, quick_run: Any) -> BrowserReport:
    from regime_core.book.browser import check_in_browser

    vendored = quick_run.work / "vendor" / "mathjax" / "tex-chtml.js"
    if not vendored.is_file():  # conftest's quick_book vendors it with npm, as `regime book` does
        print(f"\n{vendored} is missing: the pages load MathJax from its CDN, which is offline")
    started = time.perf_counter()
    report = check_in_browser(html, screenshots=html.parent / "screenshots")
    print(
        f"\nbrowser checks of the quick book: {time.perf_counter() - started:.0f} s "
        f"({len(report.views)} page views), screenshots in {report.screenshots}\n"
        f"{format_report(report.problems)}"
    )
    return report


@pytest.mark.parametrize("kind", _kinds(HTML_KINDS))
def test_no_page_shows(kind: str, html_problems: list[Problem]) -> None:
    assert [str(p) for p in html_problems if p.kind == kind] == []


@pytest.mark.parametrize("kind", _kinds((*BROWSER_KINDS, "load")))
def test_in_a_browser_no_page_shows(kind: str, browser: BrowserReport) -> None:
    assert [str(p) for p in browser.problems if p.kind == kind] == []


def test_every_page_has_a_screenshot_at_each_width(browser: BrowserReport, html: Path) -> None:
    from PIL import Image

    from regime_core.book.check import book_pages, redirect_target

    pages = {p.relative_to(html).as_posix() for p in book_pages(html) if not redirect_target(p)}
    for width in WIDTHS:
        views = [v for v in browser.views if v.width == width]
        assert {v.page for v in views} == pages
        for view in views:
            assert view.screenshot is not None, view.page
            with Image.open(view.screenshot) as image:  # reads the header only
                assert (image.format, image.width) == ("PNG", width), view.page
                assert image.height >= 600, view.page
            # a blank page compresses to a few kB (tests/test_book_browser.py decodes the pixels)
            assert view.screenshot.stat().st_size > 8000, f"{view.screenshot} looks blank"
    assert (browser.screenshots / "report.json").is_file()
