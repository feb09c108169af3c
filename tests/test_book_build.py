"""The book machinery: a fixture book builds with warnings as errors over a fake record (numbers,
tables, figures, vendored MathJax, launch buttons, links); bad keys fail it. The real book is built
over real records by tests/test_book_pages.py."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from helpers import PageLinks, broken_links, copy_book_sources, refused, write_stamped_record

from regime_book.records import parse_reference
from regime_book.strict_pass import MARKER, READ_EVERY_PAGE
from regime_core import paths
from regime_core.book.build import build_book, missing_pages, toc_files
from regime_core.book.figures import Figure
from regime_core.runner.records import hash_file, write_record
from regime_core.runner.stamps import write_stamp

DEMO = Path(__file__).parent / "fixtures" / "notebooks" / "demo_record.ipynb"
FIXTURE_BOOK = Path(__file__).parent / "fixtures" / "book"
FAKE_SLOPE = 0.4321  # a value no real demo run produces, so the page must have read the record
FIXTURE_TOC = """\
format: jb-book
root: book/index
chapters:
  - file: book/records_demo
    sections:
      - file: book/executed/demo
  - file: book/claims_demo
"""
#: The demo record's numbers behind the claims of ``fixtures/book/claims_demo.yml``.
DEMO_CLAIMS = {
    "n": 400,
    "gain": {"diff": 0.066, "ci_lo": 0.045, "ci_hi": 0.091, "p_value": 0.0004,
             "n_a_better": 40, "n_b_better": 14},
    "loss": {"diff": -0.02, "ci_lo": -0.055, "ci_hi": 0.0},
    "same": {"diff": 0.0, "ci_lo": 0.0, "ci_hi": 0.0},
    "cells_passing": 5, "cells": 8,
    "split": {"all": False, "one": True, "two": False},
}  # fmt: skip


FIXTURE_REPOSITORY = "https://github.com/fixture-owner/fixture-book"


def _fixture_book(target: Path) -> Path:
    """The repository's ``_config.yml`` with the fixture pages and their own toc, and the book's
    extension where the config's ``local_extensions`` finds it (``book/_ext``)."""
    target.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(paths.REPO_ROOT / "_config.yml", target / "_config.yml")
    shutil.copytree(
        paths.REPO_ROOT / "book" / "_ext",
        target / "book" / "_ext",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    (target / "_toc.yml").write_text(FIXTURE_TOC, encoding="utf-8")
    (target / "book").mkdir(exist_ok=True)
    for page in [*FIXTURE_BOOK.glob("*.md"), *FIXTURE_BOOK.glob("*.yml")]:
        if page.name != "README.md":
            shutil.copyfile(page, target / "book" / page.name)
    for bib in ("references.bib", "methods.bib"):  # the bibtex_bibfiles of _config.yml
        shutil.copyfile(paths.REPO_ROOT / "book" / bib, target / "book" / bib)
    # a published companion: its buttons follow this address (the repository's own is unset)
    (target / "pyproject.toml").write_text(
        f'[project]\nname = "fixture"\n[project.urls]\nRepository = "{FIXTURE_REPOSITORY}"\n',
        encoding="utf-8",
    )
    return target


def _fake_demo_run(root: Path, work: Path) -> None:
    """What `regime reproduce` leaves behind for the demo run, without executing it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = work / "results" / "demo"
    fig, ax = plt.subplots(figsize=(2, 2))
    ax.plot([0, 1], [0, FAKE_SLOPE])
    figure = Figure(fig, "demo_curve", "The demo's line.").save(out)
    plt.close(fig)
    write_record(
        out,
        name="demo",
        config={"n_points": 3},
        numbers={
            "fit": {"slope": FAKE_SLOPE, "intercept": 0.01, "r2": 0.97},
            "counts": {"points": 1234},
            "cells": {"B-dominant": {"delta_hit@5": 0.05}},
            "claims": DEMO_CLAIMS,
        },
        figures=[figure],
    )
    # the executed notebook, then its copy for the book (in the work directory, as reproduce
    # leaves it; regime book stages it into the book), then the stamp over both
    executed = work / "executed" / "demo.ipynb"
    executed.parent.mkdir(parents=True, exist_ok=True)
    executed.write_text(DEMO.read_text())
    notebook = json.loads(DEMO.read_text())
    notebook["metadata"]["regime"] = {
        "run_id": "demo",
        "source": "tests/fixtures/demo.ipynb",
        "executed_sha256": hash_file(executed),
    }
    (work / "book" / "executed").mkdir(parents=True, exist_ok=True)
    (work / "book" / "executed" / "demo.ipynb").write_text(json.dumps(notebook))
    write_stamp(work, "demo", {"key": "written by a test", "components": {}}, seconds=0.0)
    summary = {"readings": 4, "holding": 1, "share": 0.25, "most_sensitive_knob": "pool"}
    write_stamped_record(
        work,
        "robustness",
        config={"n_readings": 4},
        numbers={"claims": {"demo_gain": summary}},
    )


@pytest.fixture(scope="module")
def built_book(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = _fixture_book(tmp_path_factory.mktemp("book"))
    work = root / "work"
    _fake_demo_run(root, work)
    # stands in for what regime_core.vendor.vendor_mathjax unpacks (no npm in tests)
    vendored = work / "vendor" / "mathjax" / "tex-chtml.js"
    vendored.parent.mkdir(parents=True)
    vendored.write_text("/* vendored MathJax stand-in */\n")
    result = build_book(root, work=work)
    assert result.ok, "\n".join(result.warnings()) or result.log[-3000:]
    print(f"skeleton book built in {result.seconds:.1f} s")
    return root, result.html_dir


def test_toc_pages_exist_in_the_repository() -> None:
    missing = [m for m in missing_pages(paths.REPO_ROOT) if not m.startswith("book/executed/")]
    assert missing == []


def test_toc_executed_pages_are_declared_runs() -> None:
    from regime_core.runner.declarations import load_declarations

    runs = set(load_declarations().runs)
    executed = [
        e for e in toc_files(paths.REPO_ROOT / "_toc.yml") if e.startswith("book/executed/")
    ]
    assert executed, "the toc names no executed notebook"
    assert sorted(set(e.removeprefix("book/executed/") for e in executed) - runs) == []


def test_a_malformed_toc_is_a_value_error_naming_it(tmp_path: Path) -> None:
    toc = tmp_path / "_toc.yml"
    toc.write_text("format: jb-book\nchapters:\n  - file: book/a\n", encoding="utf-8")
    with refused(ValueError, names=(str(toc), "'root'")):
        toc_files(toc)


def test_missing_executed_notebook_asks_for_reproduce(tmp_path: Path) -> None:
    root = copy_book_sources(tmp_path)
    with refused(ValueError, names=("regime reproduce",)):
        build_book(root, work=tmp_path / "work")


def test_parse_reference() -> None:
    ref = parse_reference("t2_minilm:cells.B-dominant.delta_hit@5|pp:2")
    assert (ref.run, ref.key, ref.kind, ref.digits) == (
        "t2_minilm",
        "cells.B-dominant.delta_hit@5",
        "pp",
        2,
    )
    assert parse_reference("fit.slope", default_run="demo").run == "demo"
    with refused(ValueError, names=("fit.slope",)):
        parse_reference("fit.slope")


@pytest.mark.slow
def test_skeleton_builds_with_every_toc_page(built_book: tuple[Path, Path]) -> None:
    root, html = built_book
    for entry in toc_files(root / "_toc.yml"):
        assert (html / f"{entry}.html").is_file(), f"toc page {entry} was not rendered"


@pytest.mark.slow
def test_numbers_and_figures_come_from_the_record(built_book: tuple[Path, Path]) -> None:
    _, html = built_book
    page = html / "book" / "records_demo.html"
    text = page.read_text(encoding="utf-8")
    assert "0.432" in text  # {rec}`demo:fit.slope|frac`
    assert "1,234" in text  # {rec}`demo:counts.points|int`
    assert "R² = 0.97" in text
    assert "+5.0 pp" in text
    images = PageLinks.read(page).images
    assert any(src.endswith("demo_curve.svg") for src in images)
    intro = (html / "book" / "index.html").read_text(encoding="utf-8")  # a page with maths
    assert "_static/mathjax/tex-chtml.js" in intro  # the vendored copy, not the CDN
    assert "cdn.jsdelivr" not in intro
    assert (html / "_static" / "mathjax" / "tex-chtml.js").is_file()


@pytest.mark.slow
def test_no_broken_internal_links_or_images(built_book: tuple[Path, Path]) -> None:
    _, html = built_book
    assert broken_links(html) == []


@pytest.mark.slow
def test_launch_buttons_open_the_source_notebook(built_book: tuple[Path, Path]) -> None:
    _, html = built_book
    hrefs = PageLinks.read(html / "book" / "executed" / "demo.html").hrefs
    launch = [h for h in hrefs if "mybinder.org" in h or "colab.research.google.com" in h]
    assert len(launch) == 2
    assert all("tests/fixtures/demo.ipynb" in h and "book/executed" not in h for h in launch)
    assert all("fixture-owner/fixture-book" in h for h in launch)  # the book root's setting
    assert any(h.endswith("_sources/book/executed/demo.ipynb") for h in hrefs)  # download
    assert FIXTURE_REPOSITORY in hrefs  # the repository button


def test_unresolved_record_key_fails_the_build(tmp_path: Path) -> None:
    text = "# Bad\n\nA number no run produced: {rec}`demo:fit.slop|frac`.\n"
    root, work = _one_page_book(tmp_path, text, page="bad")
    result = build_book(root, work=work)
    assert not result.ok
    warning = "\n".join(result.warnings())
    assert "fit.slop" in warning
    assert "'book/bad'" in warning  # the page
    assert "run 'demo'" in warning
    assert "fit.slope" in warning  # the near key it suggests


def test_docstring_markup_on_markdown_pages() -> None:
    from regime_book.choices import as_myst

    rst = "Labels of :func:`~regime_core.router.labels.outcome_labels` (``-1``: dropped)::"
    myst = "Labels of {func}`~regime_core.router.labels.outcome_labels` (`-1`: dropped)::"
    assert as_myst(rst) == myst


def test_tables_of_an_unnumbered_page_count_from_one() -> None:
    """Sphinx numbers the tables of unnumbered pages with one shared counter; each such page
    restarts at 1, in page order, and numbered chapters keep their numbers."""
    from types import SimpleNamespace

    from regime_book.tables import number_tables_per_page

    env = SimpleNamespace(
        toc_secnumbers={"chapter": {"": (6,)}},
        toc_fignumbers={
            "chapter": {"table": {"a": (6, 1)}},
            "reference": {"table": {"x": (5,), "y": (4,)}, "figure": {"f": (2,)}},
        },
    )
    assert number_tables_per_page(None, env) == []  # type: ignore[arg-type]
    assert env.toc_fignumbers == {
        "chapter": {"table": {"a": (6, 1)}},
        "reference": {"table": {"x": (2,), "y": (1,)}, "figure": {"f": (1,)}},
    }


# --- the claims chart and tables (fixtures/book/claims_demo.md, over the demo record) -----------


def _demo_verdicts(root: Path) -> list[Any]:
    """The claims of ``claims_demo.yml`` judged here, on the records the fixture book read."""
    from regime_core.paper import load_claims
    from regime_core.runner.records import load_record, record_path
    from regime_core.runner.verdicts import judge_claims

    results = root / "work" / "results"
    records = {run: load_record(record_path(results / run)) for run in ("demo", "robustness")}
    claims = load_claims(FIXTURE_BOOK / "claims_demo.yml")
    return judge_claims({"demo": records["demo"]}, claims, records["robustness"])


def _claims_page(html: Path) -> Any:
    from bs4 import BeautifulSoup

    page = html / "book" / "claims_demo.html"
    return BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")


def _text(node: Any) -> str:
    """Visible text, whitespace folded and Sphinx's typographic apostrophes made plain."""
    return " ".join(node.get_text(" ").replace("\u2019", "'").split())


@pytest.mark.slow
def test_the_claims_chart_places_each_claim_as_the_kernel_says(
    built_book: tuple[Path, Path],
) -> None:
    """One row per pp claim or part, in the claims' order: its label linked to its chapter, its
    interval and marks where chart_layout puts them, its class and words its verdict, an
    aria-label with its numbers; the claims not in pp as text rows with their verdicts."""
    from regime_book.claims import verdict_class
    from regime_book.claims_chart import chart_layout, chart_rows

    root, html = built_book
    pp_rows, text_rows = chart_rows(_demo_verdicts(root))
    assert [r.label for r in pp_rows] == [
        "Demo: a gain of +5.6 pp", "Demo: a loss of 3 to 5 pp", "Demo: beats the fixed arm",
        "Demo: no loss", "Demo: unchanged by the pool · small",
        "Demo: unchanged by the pool · large",
    ]  # fmt: skip
    layout = chart_layout(pp_rows)
    chart = _claims_page(html).select_one("figure.regime-claims-chart")
    assert "95% confidence interval" in _text(chart.figcaption)
    assert chart.contents[-1].name == "figcaption"  # beneath the chart, as a figure's
    rows = chart.select(".regime-chart-row")
    assert len(rows) == len(pp_rows)
    for row, placed in zip(rows, layout.rows, strict=True):
        expected = placed.row
        assert verdict_class(expected.verdict) in row["class"], expected.label
        assert row["role"] == "group"
        assert row["aria-label"] == (
            f"{expected.label}. Paper: {expected.paper_text}. Ours: {expected.ours_text}. "
            f"Verdict: {expected.verdict_label}."
        )
        assert [a["href"] for a in row.select(".regime-chart-label a")] == ["records_demo.html"]
        assert _text(row.select_one(".regime-chart-verdict")) == expected.verdict_label
        left, width = placed.interval
        interval = row.select_one(".regime-chart-interval")
        assert interval["style"] == f"left: {left:.2f}%; width: {width:.2f}%"
        zero = row.select_one(".regime-chart-zero")["style"]
        assert zero == f"left: {layout.zero:.2f}%"
        assert row.select_one(".regime-chart-track")["aria-hidden"] == "true"
    by_label = {placed.row.label: row for placed, row in zip(layout.rows, rows, strict=True)}
    # the paper's side: a diamond, a band, the allowed side with its margin lines
    assert by_label["Demo: a gain of +5.6 pp"].select(".regime-chart-paper")
    assert by_label["Demo: a loss of 3 to 5 pp"].select(".regime-chart-band")
    no_loss = by_label["Demo: no loss"]
    assert len(no_loss.select(".regime-chart-margin")) == 1 and no_loss.select(
        ".regime-chart-paper"
    )
    small = by_label["Demo: unchanged by the pool · small"]
    assert len(small.select(".regime-chart-margin")) == 2
    assert small.select_one(".regime-chart-interval")["style"].endswith("width: 0.00%")
    # the other claims, as text, in order; a claim without a chapter is not a link
    texts = chart.select(".regime-chart-textrow")
    assert [_text(t.select_one(".regime-chart-label")) for t in texts] == [
        r.label for r in text_rows
    ]
    assert [t.select(".regime-chart-label a") != [] for t in texts] == [True, False]
    for text, expected in zip(texts, text_rows, strict=True):
        assert verdict_class(expected.verdict) in text["class"]
        assert _text(text.select_one(".regime-chart-verdict")) == expected.verdict_label


@pytest.mark.slow
def test_the_verdict_table_gives_paper_ours_verdict_and_why(built_book: tuple[Path, Path]) -> None:
    from regime_book.claims import VERDICT_COLUMNS, ours_text, verdict_class, why_text

    root, html = built_book
    verdicts = _demo_verdicts(root)
    table = _claims_page(html).select_one("table.regime-landing-verdicts")
    assert "regime-cards" in table["class"] and "regime-cards-always" not in table["class"]
    header = [_text(th) for th in table.select("thead th")]
    assert header == [name for name, _ in VERDICT_COLUMNS]
    rows = table.select("tbody tr")
    assert len(rows) == len(verdicts)
    for row, judged in zip(rows, verdicts, strict=True):
        cells = row.find_all("td", recursive=False)
        assert _text(cells[0]) == judged.claim.label
        # every cell but the claim is led by its column's name, which a card shows
        names = [_text(c.select_one(".regime-card-label")) for c in cells[1:]]
        assert names == header[1:]
        values = [_text(c).removeprefix(n).strip() for c, n in zip(cells[1:], names, strict=True)]
        paper, ours, verdict, why = values
        assert ours == ours_text(judged)
        assert verdict.startswith(judged.verdict)
        assert verdict_class(judged.verdict) in cells[3]["class"]
        assert why == why_text(judged)
        reason = judged.judgement.reason  # the rule's reason opens the why, as a sentence
        assert why.startswith(f"{reason[:1].upper()}{reason[1:]}.")
        assert paper


@pytest.mark.slow
def test_the_paper_against_ours_cards_hold_every_column(built_book: tuple[Path, Path]) -> None:
    from regime_book.claims import CLAIM_COLUMNS, NO_POWER, NO_POWER_COUNTS, ours_text
    from regime_core.runner.judge import power_text
    from regime_core.runner.verdicts import robustness_absence, robustness_phrase

    root, html = built_book
    verdicts = _demo_verdicts(root)
    table = _claims_page(html).select_one("table.regime-claims-table")
    assert "regime-cards-always" in table["class"]
    rows = table.select("tbody tr")
    assert len(rows) == len(verdicts)
    header = [name for name, _ in CLAIM_COLUMNS]
    for row, judged in zip(rows, verdicts, strict=True):
        cells = row.find_all("td", recursive=False)
        assert len(cells) == len(header)
        field = {_text(c.select_one(".regime-card-label")): _text(c) for c in cells[1:]}
        assert list(field) == header[1:]
        value = {name: text.removeprefix(name).strip() for name, text in field.items()}
        assert judged.claim.claim in _text(cells[0])
        comparison = judged.claim.rule in ("estimate", "range", "positive", "no_loss",
                                           "equivalence")  # fmt: skip
        expected_power = power_text(judged.judgement.power) if comparison else NO_POWER
        if comparison and judged.judgement.power is None:
            expected_power = NO_POWER_COUNTS
        assert value["Power"] == expected_power, judged.claim.id
        assert value["Ours"] == ours_text(judged)
        robust = robustness_phrase(judged.robustness).replace("reproduced under ", "", 1)
        absent = robustness_absence(judged.claim)
        assert value["Robustness"] == (absent if judged.robustness is None else robust)
    gain = {_text(c.select_one(".regime-card-label")): c for c in rows[0].find_all("td")[1:]}
    assert "1 of 4 readings" in _text(gain["Robustness"])
    assert "with 80% power" in _text(gain["Power"])


#: Where the first chart row's label and track lie, and whether the verdict table is a table.
LAYOUT_SCRIPT = """(() => {
  const row = document.querySelector('.regime-chart-row');
  const box = (el) => { const r = el.getBoundingClientRect();
    return {left: r.left, right: r.right, top: r.top, bottom: r.bottom, width: r.width}; };
  const table = document.querySelector('table.regime-landing-verdicts');
  return {label: box(row.querySelector('.regime-chart-label')),
          track: box(row.querySelector('.regime-chart-track')),
          head: getComputedStyle(table.querySelector('thead')).display,
          cardLabel: getComputedStyle(table.querySelector('.regime-card-label')).display,
          viewport: document.documentElement.clientWidth};
})()"""


def _layout_at(chromium: str, html: Path, page: str, width: int) -> dict[str, Any]:
    from tools.bookcheck.browser import launch, open_tab, serve

    with serve(html) as base, launch(chromium) as browser:
        tab = open_tab(browser, width, 800)
        tab.goto(base + page, wait_until="load", timeout=30_000)
        return dict(tab.evaluate(LAYOUT_SCRIPT))


@pytest.mark.slow
def test_the_chart_and_the_tables_reflow_on_a_phone(
    chromium: str, built_book: tuple[Path, Path]
) -> None:
    """In Chromium: at 390 px the label sits above the track, which takes the width, and the
    verdict table is a card per claim, with no overflow; at 1366 px the label sits beside the
    track and the verdict table is a table."""
    from tools.bookcheck.browser import check_in_browser

    _, html = built_book
    page = "book/claims_demo.html"
    phone = _layout_at(chromium, html, page, 390)
    assert phone["label"]["bottom"] <= phone["track"]["top"]
    assert phone["track"]["width"] > 0.7 * phone["viewport"]
    assert (phone["head"], phone["cardLabel"]) == ("none", "block")
    laptop = _layout_at(chromium, html, page, 1366)
    assert laptop["label"]["right"] <= laptop["track"]["left"]
    assert laptop["label"]["top"] < laptop["track"]["bottom"]
    assert (laptop["head"], laptop["cardLabel"]) == ("table-header-group", "none")
    report = check_in_browser(html, pages=[page], chromium=chromium, screenshots=html.parent)
    assert report.problems == []


SLOPE_PAGE = "# Slope\n\nThe slope is {rec}`demo:fit.slope|frac:4`.\n"


def _one_page_book(
    tmp_path: Path, text: str = SLOPE_PAGE, page: str = "slope"
) -> tuple[Path, Path]:
    """A book of the one page ``book/<page>.md`` holding ``text``, over a stamped fake run."""
    root = _fixture_book(tmp_path / "book")
    work = tmp_path / "work"
    _fake_demo_run(root, work)
    (root / "book" / f"{page}.md").write_text(text, encoding="utf-8")
    (root / "_toc.yml").write_text(f"format: jb-book\nroot: book/{page}\n", encoding="utf-8")
    return root, work


def _rewrite_slope(work: Path, slope: float) -> None:
    write_record(work / "results" / "demo", name="demo", config={"n_points": 3},
                 numbers={"fit": {"slope": slope}})  # fmt: skip
    write_stamp(work, "demo", {"key": "written by a test", "components": {}}, seconds=0.0)


@pytest.mark.slow
def test_a_record_copied_with_an_old_time_still_rebuilds_its_page(tmp_path: Path) -> None:
    """Issue 22: ``cp -p`` / ``rsync -a`` keep a record's old time; the page must follow the
    record's content, not its modification time."""

    root, work = _one_page_book(tmp_path)
    assert build_book(root, work=work).ok
    page = root / "_build" / "html" / "book" / "slope.html"
    assert "0.4321" in page.read_text(encoding="utf-8")
    record = work / "results" / "demo" / "record.json"
    old = record.stat()
    _rewrite_slope(work, 0.9876)
    os.utime(record, ns=(old.st_atime_ns, old.st_mtime_ns - 3600 * 10**9))  # as copied, older
    result = build_book(root, work=work)
    assert result.ok, result.log[-2000:]
    assert "0.9876" in page.read_text(encoding="utf-8")


def test_a_record_that_does_not_match_its_stamp_stops_the_build(tmp_path: Path) -> None:
    root, work = _one_page_book(tmp_path)
    write_record(work / "results" / "demo", name="demo", config={"n_points": 3},
                 numbers={"fit": {"slope": 0.5}})  # edited and re-sealed, not rerun  # fmt: skip
    record, stamp = work / "results" / "demo" / "record.json", work / "runs" / "demo" / "stamp.json"
    with refused(ValueError, names=(str(record), str(stamp))):
        build_book(root, work=work)
    stamp.unlink()
    with refused(ValueError, names=(str(record), "stamp")):
        build_book(root, work=work)


BAD_KEY_PAGE = "# Bad\n\nA number no run produced: {rec}`demo:fit.slop|frac`.\n"
TWO_PAGES_TOC = "format: jb-book\nroot: book/slope\nchapters:\n  - file: book/bad\n"


def _two_page_book(tmp_path: Path, bad: str = BAD_KEY_PAGE) -> tuple[Path, Path]:
    """The slope page and ``book/bad.md`` holding ``bad``, over the stamped fake run."""
    root, work = _one_page_book(tmp_path)
    (root / "book" / "bad.md").write_text(bad, encoding="utf-8")
    (root / "_toc.yml").write_text(TWO_PAGES_TOC, encoding="utf-8")
    return root, work


def _plain_log(log: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", log)  # Sphinx may colour its lines


def _read_every_page_lines(log: str) -> list[str]:
    """The log's lines saying the build read every page again (after no strict pass)."""
    return [line for line in _plain_log(log).splitlines() if READ_EVERY_PAGE in line]


@pytest.mark.slow
def test_a_failed_strict_build_fails_again_until_the_page_is_fixed(tmp_path: Path) -> None:
    """A build after one that did not pass strictly reads every page again, so a strict build
    that failed fails again, on the same warning, until the page is fixed; a strict pass then
    leaves nothing that makes later builds read any page again."""
    root, work = _two_page_book(tmp_path)
    marker = Path(work) / "book" / MARKER  # the work directory's, like every state
    first = build_book(root, work=work)
    assert not first.ok and marker.is_file()
    warned = [w for w in first.warnings() if "fit.slop" in w]
    assert warned and "'book/bad'" in warned[0]
    second = build_book(root, work=work)  # nothing changed
    assert not second.ok, "the page that warned was not read again"
    assert [w for w in second.warnings() if "fit.slop" in w] == warned
    assert len(_read_every_page_lines(second.log)) == 1
    assert "0 added, 2 changed, 0 removed" in _read_every_page_lines(second.log)[0]
    (root / "book" / "bad.md").write_text("# Bad\n\nFixed: {rec}`demo:fit.slope|frac`.\n")
    third = build_book(root, work=work)
    assert third.ok, "\n".join(third.warnings()) or third.log[-3000:]
    assert not marker.exists()
    fourth = build_book(root, work=work)
    assert fourth.ok and _read_every_page_lines(fourth.log) == []
    assert "0 added, 0 changed, 0 removed" in _plain_log(fourth.log)
    assert not marker.exists()


@pytest.mark.slow
def test_a_non_strict_build_leaves_no_strict_build_passing(tmp_path: Path) -> None:
    """A ``--no-strict`` build warns and passes, and resolves no reference strictly (no
    ``--nitpick``); the strict build after it reads every page again and fails on both."""
    page = BAD_KEY_PAGE + "\nSee {py:func}`regime_core.no_such_function`.\n"
    root, work = _two_page_book(tmp_path, page)
    loose = build_book(root, work=work, strict=False)
    assert loose.ok and any("fit.slop" in w for w in loose.warnings())
    strict = build_book(root, work=work)
    assert not strict.ok
    assert len(_read_every_page_lines(strict.log)) == 1
    warnings = "\n".join(strict.warnings())
    assert "fit.slop" in warnings and "regime_core.no_such_function" in warnings


@pytest.mark.slow
def test_a_notebook_output_on_stderr_fails_the_build(tmp_path: Path) -> None:
    """myst-nb's ``stderr_output: error`` (``_config.yml``): a stderr box, even an empty one, is
    an error of the build naming its page, so the book's checks need not look for one."""
    import nbformat

    root, work = _one_page_book(tmp_path)
    notebook = nbformat.v4.new_notebook(
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}, "language_info": {"name": "python"}},
    )  # fmt: skip
    cell = nbformat.v4.new_code_cell("import sys\nsys.stderr.write('')")
    cell.outputs = [nbformat.v4.new_output("stream", name="stderr", text="")]
    notebook.cells = [nbformat.v4.new_markdown_cell("# Noisy"), cell]
    nbformat.write(notebook, root / "book" / "noisy.ipynb")
    toc = "format: jb-book\nroot: book/slope\nchapters:\n  - file: book/noisy\n"
    (root / "_toc.yml").write_text(toc, encoding="utf-8")
    result = build_book(root, work=work)
    assert not result.ok
    stderr = [w for w in result.warnings() if "stderr was found" in w]
    assert len(stderr) == 1 and "noisy.ipynb" in stderr[0], result.warnings()


def _executed_page(work: Path, run_id: str, text: str) -> None:
    """What reproduce leaves of run ``run_id`` for the book in ``work``: its executed notebook,
    its book copy naming that notebook's hash, and the stamp over both."""
    executed = work / "executed" / f"{run_id}.ipynb"
    executed.parent.mkdir(parents=True, exist_ok=True)
    notebook = json.loads(DEMO.read_text())
    notebook["cells"][0]["source"] = [text]
    executed.write_text(json.dumps(notebook))
    notebook["metadata"]["regime"] = {"run_id": run_id, "executed_sha256": hash_file(executed)}
    page = work / "book" / "executed" / f"{run_id}.ipynb"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(json.dumps(notebook))
    write_stamp(work, run_id, {"key": "written by a test", "components": {}}, seconds=0.0)


def test_the_book_renders_the_pages_of_its_own_work_directory(tmp_path: Path) -> None:
    """Issue 44: each work directory keeps its executed pages; `regime book --work W` stages
    W's, checked against W's stamps, and never leaves another work directory's page."""
    from regime_core.book.build import stage_executed

    root, first, second = tmp_path / "book", tmp_path / "w1", tmp_path / "w2"
    _executed_page(first, "demo", "from w1")
    _executed_page(first, "other", "only in w1")
    _executed_page(second, "demo", "from w2")
    staged = root / "book" / "executed"
    assert [p.name for p in stage_executed(root, first)] == ["demo.ipynb", "other.ipynb"]
    assert "from w1" in (staged / "demo.ipynb").read_text()
    before = (staged / "demo.ipynb").stat().st_mtime_ns
    stage_executed(root, first)  # unchanged: not rewritten (Sphinx reads it again only if new)
    assert (staged / "demo.ipynb").stat().st_mtime_ns == before
    stage_executed(root, second)
    assert "from w2" in (staged / "demo.ipynb").read_text()
    assert not (staged / "other.ipynb").exists()  # w1's page is gone
    # a page that is not the notebook its run stamped, or whose run has no stamp: refused
    _executed_page(second, "demo", "rerun")
    page = second / "book" / "executed" / "demo.ipynb"
    body = json.loads(page.read_text())
    body["metadata"]["regime"]["executed_sha256"] = "0" * 64
    page.write_text(json.dumps(body))
    with refused(ValueError, names=(str(page), f"--work {second}")):
        stage_executed(root, second)
    (second / "runs" / "demo" / "stamp.json").unlink()
    with refused(ValueError, names=(str(page), "stamp")):
        stage_executed(root, second)
    assert "from w2" in (staged / "demo.ipynb").read_text()  # nothing staged from a refusal


def _launch_blocks() -> str:
    """The two ``{only}`` blocks of the toy-world chapter that say how to launch a notebook."""
    text = (paths.REPO_ROOT / "book" / "start" / "toyworld.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```\{only\} (?:not )?launchable\n.*?\n```\n", text, re.S)
    assert len(blocks) == 2, "the toy-world chapter lost a launch block"
    return "# Launch\n\n" + "\n".join(blocks)


@pytest.mark.slow
@pytest.mark.parametrize("published", [True, False])
def test_the_book_says_how_to_launch_with_and_without_an_address(
    tmp_path: Path, published: bool
) -> None:
    """Issue 44: with the repository's address set the page points at the launch buttons;
    without it, it says the buttons are not there yet and how to run the notebook instead."""
    root, work = _one_page_book(tmp_path, text=_launch_blocks(), page="launch")
    if not published:
        (root / "pyproject.toml").write_text('[project]\nname = "fixture"\n', encoding="utf-8")
    result = build_book(root, work=work)
    assert result.ok, "\n".join(result.warnings()) or result.log[-3000:]
    page = (result.html_dir / "book" / "launch.html").read_text(encoding="utf-8")
    assert ("the rocket icon" in page) is published
    assert ("repository address is not set yet" in page) is not published
    assert ("repo2docker" in page) is not published


def test_a_second_build_writes_into_the_output_of_the_first(tmp_path: Path) -> None:
    """``regime book --output DIR`` twice: the first build's ``DIR/_build`` was refused as
    "a directory; only a regular file is ever replaced" (found by rebuilding a quick book)."""
    from regime_core.book.build import check_outputs

    output = tmp_path / "out"
    (output / "_build" / "html").mkdir(parents=True)
    check_outputs(tmp_path / "work", output, None)  # the first build's folders: accepted
    blocked = tmp_path / "blocked"
    blocked.mkdir()
    (blocked / "_build").write_text("not a folder")
    with refused(ValueError, names=("--output", "_build", "not a directory")):
        check_outputs(tmp_path / "work", blocked, None)
