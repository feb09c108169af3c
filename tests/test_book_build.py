"""The book machinery: a fixture book builds with warnings as errors over a fake record (numbers,
tables, figures, vendored MathJax, launch buttons, links); bad keys fail it. The real book is built
over real records by tests/test_book_pages.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers import PageLinks, broken_links, copy_book_sources

from regime_core import paths
from regime_core.book.build import build_book, missing_pages, toc_files
from regime_core.book.sphinx import parse_reference
from regime_core.runner.records import save_figure, write_record
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
"""


FIXTURE_REPOSITORY = "https://github.com/fixture-owner/fixture-book"


def _fixture_book(target: Path) -> Path:
    """The repository's ``_config.yml`` with the fixture pages and their own toc."""
    target.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(paths.REPO_ROOT / "_config.yml", target / "_config.yml")
    (target / "_toc.yml").write_text(FIXTURE_TOC, encoding="utf-8")
    (target / "book").mkdir(exist_ok=True)
    for page in FIXTURE_BOOK.glob("*.md"):
        if page.name != "README.md":
            shutil.copyfile(page, target / "book" / page.name)
    shutil.copyfile(paths.REPO_ROOT / "book" / "references.bib", target / "book" / "references.bib")
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
    figure = save_figure(fig, out, "demo_curve")
    plt.close(fig)
    write_record(
        out,
        name="demo",
        config={"n_points": 3},
        numbers={
            "fit": {"slope": FAKE_SLOPE, "intercept": 0.01, "r2": 0.97},
            "counts": {"points": 1234},
            "cells": {"B-dominant": {"delta_hit@5": 0.05}},
        },
        figures=[figure],
    )
    write_stamp(work, "demo", {"key": "written by a test", "components": {}}, seconds=0.0)
    notebook = json.loads(DEMO.read_text())
    notebook["metadata"]["regime"] = {"run_id": "demo", "source": "tests/fixtures/demo.ipynb"}
    (root / "book" / "executed").mkdir(parents=True, exist_ok=True)
    (root / "book" / "executed" / "demo.ipynb").write_text(json.dumps(notebook))


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
    from regime_core.runner.reproduce import load_declarations

    runs = set(load_declarations().runs)
    executed = [
        e for e in toc_files(paths.REPO_ROOT / "_toc.yml") if e.startswith("book/executed/")
    ]
    assert executed, "the toc names no executed notebook"
    assert sorted(set(e.removeprefix("book/executed/") for e in executed) - runs) == []


def test_missing_executed_notebook_asks_for_reproduce(tmp_path: Path) -> None:
    root = copy_book_sources(tmp_path)
    with pytest.raises(ValueError, match="regime reproduce"):
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
    with pytest.raises(ValueError, match="names no run"):
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
    assert any(src.endswith("demo_curve.png") for src in images)
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
    from regime_core.book.sphinx.markup import as_myst

    rst = "Labels of :func:`~regime_core.router.labels.outcome_labels` (``-1``: dropped)::"
    myst = "Labels of {func}`~regime_core.router.labels.outcome_labels` (`-1`: dropped)::"
    assert as_myst(rst) == myst


def test_tables_of_an_unnumbered_page_count_from_one() -> None:
    """Sphinx numbers the tables of unnumbered pages with one shared counter; each such page
    restarts at 1, in page order, and numbered chapters keep their numbers."""
    from types import SimpleNamespace

    from regime_core.book.sphinx.tables import number_tables_per_page

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
    import os

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
    with pytest.raises(ValueError, match=f"{record} does not match its run's stamp {stamp}"):
        build_book(root, work=work)
    stamp.unlink()
    with pytest.raises(ValueError, match="has no valid stamp"):
        build_book(root, work=work)
