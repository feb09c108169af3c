"""The browser checks of the rendered book (tools.bookcheck.browser) in headless Chromium, on the
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
from helpers import refused

from tools.bookcheck.browser import (
    BrowserReport,
    PageView,
    check_in_browser,
    find_chromium,
    launch,
    screenshot_path,
)
from tools.bookcheck.check import Problem


@pytest.fixture(scope="module")
def report(
    chromium: str, book_build: Path, tmp_path_factory: pytest.TempPathFactory
) -> BrowserReport:
    shots = tmp_path_factory.mktemp("screenshots")
    # a short timeout: nomathjax.html waits half of it for a MathJax that never comes
    return check_in_browser(
        book_build, screenshots=shots, widths=(1366, 390), chromium=chromium, timeout=4
    )


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
        ("markup.html", "raw-markup"),  # as the HTML check finds it (tests/test_bookcheck_check.py)
    }


def test_console_errors_are_named_at_each_width(report: BrowserReport) -> None:
    details = _details(report, "script.html")
    assert sorted(d.split(":", 1)[0] for d in details) == ["1366 px", "390 px"]
    assert all("THEBE_JS_URL" in d and "already been declared" in d for d in details)
    assert all("404" in d for d in _details(report, "link.html"))


def test_figure_text_is_measured_as_drawn(tmp_path: Path) -> None:
    from test_book_figures import _root_width_pt, _shares

    from regime_core.book.figures import regime_shares
    from tools.bookcheck.browser import figure_text_px

    fig = regime_shares(_shares())
    svg = fig.save(tmp_path)
    fig.close()
    natural = _root_width_pt(svg.read_bytes()) * 96 / 72  # its width attribute, in CSS px
    assert figure_text_px(svg, natural) == pytest.approx(10.5 * 96 / 72)  # 10.5 pt as drawn
    assert figure_text_px(svg, natural / 2) == pytest.approx(10.5 * 96 / 72 / 2)
    assert figure_text_px(svg, 390) == pytest.approx(10.5 * 390 / _root_width_pt(svg.read_bytes()))
    assert figure_text_px(Path(__file__), 10) is None  # not a book figure


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
    with refused(FileNotFoundError, names=("apt-get install chromium",)):
        check_in_browser(book_build, chromium=str(tmp_path / "no-such-browser"))


# --- what a reader meets: tables, markup, figures, the landing page's budgets --------------------

_HEAD = (
    '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
    '<meta name="viewport" content="width=device-width, initial-scale=1"><title>{title}</title>'
    '<link rel="stylesheet" href="_static/regime.css">{script}</head>'
    '<body><article class="bd-article"><h1>{title}</h1>{body}</article></body></html>'
)
_WIDE_TABLE = (
    '<table style="width: 900px"><tr><th>a wide table</th><td>its last cell</td></tr></table>'
)
# a displayed formula as MathJax leaves it, wider than a phone
_WIDE_FORMULA = (
    '<mjx-container class="MathJax" jax="CHTML" display="true" style="display: block">'
    '<span style="display: inline-block; width: 600px">a + b + c = a wide formula</span>'
    "</mjx-container>"
)
_READER_PAGES: dict[str, tuple[bool, str]] = {  # page -> (links regime.js, body)
    "landing.html": (
        True,
        "<p>" + " ".join(["word"] * 950) + '</p><div style="height: 9500px"></div>',
    ),
    "tables.html": (
        True,
        '<div id="rescued" style="overflow: hidden; width: 300px"><table style="width: 600px">'
        "<tr><td>a table wider than its clipping box</td><td>scrolls in a box of its own</td>"
        "</tr></table></div>"
        f'<div id="scrolls" style="overflow-x: auto">{_WIDE_TABLE}</div>'
        '<table><tr><td style="overflow: hidden; white-space: nowrap; max-width: 3rem">'
        "a long cell whose text is cut</td></tr></table>",
    ),
    "tables_bare.html": (
        False,
        '<div id="cut" style="overflow: hidden; width: 300px"><table style="width: 600px">'
        "<tr><td>a cell cut off by its box</td><td>the cut cell</td></tr></table></div>"
        f'<div id="bare" style="overflow-x: auto">{_WIDE_TABLE}</div>',
    ),
    "markup.html": (
        True,
        "<p>Run ``regime book`` and read **this** first.</p>"
        "<p>| a | b |\n|---|---|\n| 1 | 2 |</p>"
        "<p>The code <code>``fine``</code> and <code>[x](https://example.org)</code>, "
        "a set {a}, a price of $5 and a real <a href='https://example.org'>link</a>.</p>",
    ),
    "maths.html": (True, _WIDE_FORMULA),
    "maths_bare.html": (False, _WIDE_FORMULA),
    "figure.html": (  # a notebook's output, a figure drawn while the book is built
        True,
        '<div class="cell_output"><img alt="shares" src="_images/shares.svg"></div>'
        '<figure class="regime-figure"><img alt="shares" src="_images/shares.svg"></figure>',
    ),
    "figure_narrow.html": (
        False,
        '<div class="cell_output" style="width: 200px">'
        '<img alt="shares" src="_images/shares.svg" style="max-width: 100%"></div>',
    ),
}


@pytest.fixture(scope="module")
def reader_report(chromium: str, tmp_path_factory: pytest.TempPathFactory) -> BrowserReport:
    import shutil

    from test_book_figures import _shares

    from regime_book.site import STATIC_DIR
    from regime_core.book.figures import regime_shares

    html = tmp_path_factory.mktemp("reader") / "html"
    (html / "_static").mkdir(parents=True)
    for name in ("regime.css", "regime.js"):
        shutil.copy(STATIC_DIR / name, html / "_static" / name)
    fig = regime_shares(_shares())
    fig.name = "shares"
    fig.save(html / "_images")
    fig.close()
    (html / "index.html").write_text(
        '<html><head><meta http-equiv="refresh" content="0; url=landing.html"></head></html>',
        encoding="utf-8",
    )
    for page, (scripted, body) in _READER_PAGES.items():
        script = '<script defer src="_static/regime.js"></script>' if scripted else ""
        title = page.removesuffix(".html")
        text = _HEAD.format(title=title, script=script, body=body)
        (html / page).write_text(text, encoding="utf-8")
    return check_in_browser(
        html, widths=(1366, 390), pages=list(_READER_PAGES), chromium=chromium, timeout=8
    )


def test_the_landing_page_is_held_to_its_budgets(reader_report: BrowserReport) -> None:
    from tools.bookcheck.browser import LANDING_MAX_WORDS

    assert reader_report.landing == "landing.html"
    details = sorted(_details(reader_report, "landing.html"))
    assert [d.split(":")[0] for d in details] == ["1366 px", "1366 px", "390 px"]
    # the paragraph's 950 words and the title's one
    assert f"951 words (the budget is {LANDING_MAX_WORDS:,})" in details[1]
    assert all("tall (the budget is" in d for d in (details[0], details[2]))


def test_a_table_cut_off_or_scrolling_without_a_hint_is_a_problem(
    reader_report: BrowserReport,
) -> None:
    details = _details(reader_report, "tables.html")
    # regime.js gives a table wider than a clipping box a scrolling box of its own, and a hint
    # above each box that scrolls; a cell that cuts its own text stays a problem
    assert not any("div#rescued" in d or "div#scrolls" in d for d in details), details
    for width in (1366, 390):
        assert any(d.startswith(f"{width} px: ") and "its text is cut" in d for d in details)
    bare = _details(reader_report, "tables_bare.html")  # without regime.js
    for width in (1366, 390):
        assert any(
            d.startswith(f"{width} px: div#cut > table") and "cut off by the box around it" in d
            for d in bare
        ), bare
    (unhinted,) = [d for d in bare if "div#bare" in d]  # the wide table fits at 1366 px
    assert unhinted.startswith("390 px: div#bare > table: 2 cells out of view in a box that ")
    # the cut table also reaches past a phone's edge (cut off), which the overflow check says
    others = [str(p) for p in reader_report.problems if p.page.startswith("tables")]
    others = [p for p in others if "clipped-cell" not in p]
    assert len(others) == 1 and "overflow: 390 px: div#cut > table" in others[0], others


def test_markup_shown_as_text_is_found_outside_code(reader_report: BrowserReport) -> None:
    assert sorted(_details(reader_report, "markup.html")) == [
        "Markdown bold: **this**",
        "a Markdown table: |---|",
        "an RST literal: ``regime book``",
    ]


def test_a_figure_opens_full_size_and_spans_a_phone(reader_report: BrowserReport) -> None:
    from tools.bookcheck.browser import MIN_FIGURE_TEXT_PX, figure_text_px

    assert _details(reader_report, "figure.html") == []
    phone = _view(reader_report, "figure.html", 390)
    assert len(phone.images) == 2
    svg = reader_report.html_dir / "_images" / "shares.svg"
    for image in phone.images:
        assert image["shown"] == pytest.approx(390, abs=1)  # the screen's width, margins and all
        assert figure_text_px(svg, image["shown"]) >= MIN_FIGURE_TEXT_PX
    narrow = _details(reader_report, "figure_narrow.html")
    assert len(narrow) == 2 and all("shares.svg: its smallest text is drawn" in d for d in narrow)


def test_the_leaked_markup_of_the_html_fixture_is_found_in_the_browser_too(
    report: BrowserReport,
) -> None:
    assert sorted(_details(report, "markup.html")) == [
        "a MyST role: {rec}`t2:union_vs_q.all.diff|pp`",
        "an RST literal: ``classes_``",
        "an RST role: :func:`~regime_core.router.labels.outcome_labels`",
    ]


def test_a_wide_formula_scrolls_with_a_cue(reader_report: BrowserReport) -> None:
    assert _details(reader_report, "maths.html") == []
    assert _view(reader_report, "maths.html", 390).mathjax == "no maths"  # no MathJax here
    assert _details(reader_report, "maths_bare.html") == [
        "a formula that scrolls with no cue: a + b + c = a wide formula"  # at 390 px only
    ]
