"""The browser checks of the rendered book (regime_core.book.browser) in headless Chromium, on the
small pages of ``book_build`` (conftest, made from ``tests/fixtures``): ``overflow.html`` and
``math.html``/``nomathjax.html`` hold one kind of problem each; ``good.html`` holds the near misses
(a wide table that scrolls in its box, an off-canvas drawer, typeset maths, prices in dollars).

Chromium is the Debian package ``chromium``; without it these tests are skipped, unless
``REGIME_REQUIRE_CHROMIUM=1`` (CI sets it), when they fail.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from regime_core.book.browser import (
    BrowserReport,
    PageView,
    check_in_browser,
    find_chromium,
    launch,
    screenshot_path,
)
from regime_core.book.check import Problem


@pytest.fixture(scope="module")
def report(
    chromium: str, book_build: Path, tmp_path_factory: pytest.TempPathFactory
) -> BrowserReport:
    shots = tmp_path_factory.mktemp("screenshots")
    # a short timeout: nomathjax.html waits half of it for a MathJax that never comes
    return check_in_browser(book_build, screenshots=shots, chromium=chromium, timeout=4)


def _details(report: BrowserReport, page: str) -> list[str]:
    return [p.detail for p in report.problems if p.page == page]


def _view(report: BrowserReport, page: str, width: int) -> PageView:
    return next(v for v in report.views if v.page == page and v.width == width)


def test_each_bad_page_shows_its_kind_and_the_good_pages_nothing(report: BrowserReport) -> None:
    assert {(p.page, p.kind) for p in report.problems} == {
        ("overflow.html", "overflow"),
        ("math.html", "math"),
        ("nomathjax.html", "math"),
        ("script.html", "console"),  # the second declaration throws
        ("link.html", "console"),  # its missing image fails to load
    }


def test_console_errors_are_named_at_each_width(report: BrowserReport) -> None:
    details = _details(report, "script.html")
    assert sorted(d.split(":", 1)[0] for d in details) == ["1366 px", "390 px"]
    assert all("THEBE_JS_URL" in d and "already been declared" in d for d in details)
    assert all("404" in d for d in _details(report, "link.html"))


def test_figure_text_is_measured_as_drawn(tmp_path: Path) -> None:
    from PIL import Image
    from test_book_figures import _shares

    from regime_core.book.browser import figure_text_px
    from regime_core.book.figures import regime_shares

    fig = regime_shares(_shares())
    png = fig.save(tmp_path)
    fig.close()
    natural = Image.open(png).size[0]
    full = figure_text_px(png, natural, natural)
    assert full == pytest.approx(10.5 * 150 / 72, rel=1e-3)  # 10.5 pt at 150 dpi
    assert figure_text_px(png, natural, natural / 2) == pytest.approx(full / 2)
    assert figure_text_px(Path(__file__), 10, 10) is None  # not a book figure


def test_overflow_of_a_box_of_a_long_line_and_of_a_cut_off_print(report: BrowserReport) -> None:
    details = _details(report, "overflow.html")
    assert len(details) == 3
    assert any(
        d.startswith("390 px: div#wide-block reaches 612 px (the page scrolls") for d in details
    )
    assert any(d.startswith("390 px: pre#long-line") and "scrolls sideways" in d for d in details)
    assert any(d.startswith("390 px: pre#cut-off") and "(cut off)" in d for d in details)
    # at 1366 px nothing is too wide, and overflow is only judged at a phone's width anyway
    assert _view(report, "overflow.html", 1366).overflow == ()
    assert _view(report, "overflow.html", 390).scroll_width > 390


def test_maths_as_source_not_typeset_in_error_or_without_mathjax(report: BrowserReport) -> None:
    assert sorted(_details(report, "math.html")) == [
        "MathJax error: Undefined control sequence \\foo",
        "maths as source: Dollar maths MathJax never saw: the AUC is $\\Phi(m/s)$ here.",
        "maths not typeset: AUC",
    ]
    assert sorted(_details(report, "nomathjax.html")) == [
        "MathJax not loaded on a page with maths",
        "maths as source: \\(m = s_t - \\overline{s_n}\\)",
    ]
    assert _view(report, "good.html", 390).mathjax == "typeset"
    assert _view(report, "overflow.html", 390).mathjax == "no maths"


def test_screenshots_are_real_renderings_at_each_width(report: BrowserReport) -> None:
    from PIL import Image

    assert len(report.views) == 2 * len({v.page for v in report.views})
    for view in report.views:
        assert view.screenshot == screenshot_path(report.screenshots, view.width, view.page)
        with Image.open(view.screenshot) as image:
            assert image.width == view.width
            assert image.height >= 600  # at least the viewport
            low, high = image.convert("L").getextrema()
            assert high - low > 100, f"{view.screenshot} is blank"
    assert screenshot_path(Path("s"), 390, "sub/index.html") == Path("s/390/sub/index.png")


def test_the_js_side_results_are_saved_as_json(report: BrowserReport) -> None:
    saved = json.loads((report.screenshots / "report.json").read_text(encoding="utf-8"))
    assert saved["problems"] == [p.as_dict() for p in report.problems]
    assert {(v["page"], v["width"]) for v in saved["views"]} == {
        (v.page, v.width) for v in report.views
    }


def test_every_page_is_loaded_but_redirects(report: BrowserReport) -> None:
    pages = {v.page for v in report.views}
    assert "index.html" not in pages  # it only redirects to good.html
    assert {"good.html", "warning.html", "sub/index.html"} <= pages
    assert "genindex.html" not in pages


def test_a_page_that_does_not_load_is_a_problem() -> None:
    view = PageView("p.html", 390, None, "", 0, 0, (), (), 0.1, error="net::ERR_FAILED")
    report = BrowserReport((view,), Path("s"), 0.1)
    assert report.problems == [Problem("p.html", "load", "390 px: net::ERR_FAILED")]


def _descendants() -> set[int]:
    """The processes this test process started, directly or not (read from /proc)."""
    parents = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # it ended meanwhile
        parents[int(stat.parent.name)] = int(fields[1])
    found, frontier = set(), {os.getpid()}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def test_the_browser_is_chromium_and_ends_with_its_driver(chromium: str) -> None:
    before = _descendants()
    with launch(chromium) as browser:
        assert browser.version.split(".")[0].isdigit()
        assert len(_descendants() - before) >= 2  # Playwright's driver and Chromium
    assert _descendants() - before == set()  # nothing left running


def test_without_chromium_the_check_says_how_to_get_it(tmp_path: Path, book_build: Path) -> None:
    assert find_chromium(tmp_path / "no-such-browser") is None
    with pytest.raises(FileNotFoundError, match="apt-get install chromium"):
        check_in_browser(book_build, chromium=str(tmp_path / "no-such-browser"))
