"""The HTML checks of the rendered book (tools.bookcheck.check) on small pages written for them.

``book_build`` (conftest) is a tiny build made from ``tests/fixtures``: ``good.html`` holds
everything a careless check would flag and none of it is a problem; each other page holds one kind
of problem, named by its file (``warning.html``, ``figure_drawn.html``...). A check that misses its
kind, or flags a page it should not, fails here.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup
from helpers import refused

from tools.bookcheck.check import (
    HTML_KINDS,
    Problem,
    book_pages,
    check_figures,
    check_html,
    count_by_kind,
    find_absolute_paths,
    find_leaked_markup,
    find_progress_bars,
    find_tracebacks,
    find_warnings,
    format_report,
    notebook_figures,
    redirect_target,
)

# every page of the fixture build and the one kind of problem it has (none for the rest)
BAD_PAGES = {
    "warning.html": "warning",
    "traceback.html": "traceback",
    "progress.html": "progress",
    "path.html": "path",
    "markup.html": "markup",
    "link.html": "link",
    "figure.html": "figure",
    "figure_drawn.html": "figure",
    "alt.html": "alt",
    "caption.html": "caption",
    "placeholder.html": "placeholder",
    "script.html": "script",
}


def _soup(body: str) -> BeautifulSoup:
    return BeautifulSoup(f"<html><body>{body}</body></html>", "html.parser")


@pytest.fixture(scope="module")
def problems(book_build: Path) -> list[Problem]:
    return check_html(book_build)


def test_each_bad_page_shows_its_kind_and_the_good_pages_show_nothing(
    problems: list[Problem],
) -> None:
    assert {(p.page, p.kind) for p in problems} == set(BAD_PAGES.items())


def test_every_kind_has_a_bad_page() -> None:
    assert set(BAD_PAGES.values()) == set(HTML_KINDS)


def test_pages_are_the_readers_pages_only(book_build: Path) -> None:
    pages = {p.relative_to(book_build).as_posix() for p in book_pages(book_build)}
    assert "sub/index.html" in pages
    assert "genindex.html" not in pages  # Sphinx's own
    assert not any(p.startswith("_static/") for p in pages)  # assets
    assert set(BAD_PAGES) < pages
    with refused(FileNotFoundError, names=("no_such_build", "regime book")):
        book_pages(book_build / "no_such_build")


def _details(problems: list[Problem], page: str) -> list[str]:
    return [p.detail for p in problems if p.page == page]


def test_every_warning_of_the_page_is_named(problems: list[Problem]) -> None:
    details = _details(problems, "warning.html")
    assert len(details) == 2
    assert any("TqdmWarning: IProgress not found" in d for d in details)  # split by a <span>
    assert any("FutureWarning" in d for d in details)


def test_tracebacks_in_text_and_error_outputs(problems: list[Problem]) -> None:
    details = _details(problems, "traceback.html")
    assert any("Traceback (most recent call last)" in d for d in details)
    assert any(d.startswith('File "cell.py", line 3') for d in details)
    assert "error output: KeyError: 't2'" in details


def test_progress_bars_of_each_sort(problems: list[Problem]) -> None:
    details = _details(problems, "progress.html")
    assert any("Batches: 100%|██████████| 7/7" in d for d in details)
    assert any("Loading weights" in d for d in details)
    assert any("Jupyter widget" in d for d in details)


def test_absolute_paths_in_text_and_file_links(problems: list[Problem]) -> None:
    assert sorted(_details(problems, "path.html")) == [
        "link to file:///tmp/records/t2.json",
        "saved /home/ana/regime/_build/regime/results/t2/record.json",
    ]


def test_each_leaked_role_and_double_backticks(problems: list[Problem]) -> None:
    leaked = sorted(d.split(" in ")[0] for d in _details(problems, "markup.html"))
    assert leaked == ["':data:'", "':func:'", "'``'", "'{rec}'"]


def test_missing_files_anchors_and_images(problems: list[Problem]) -> None:
    assert sorted(_details(problems, "link.html")) == [
        "_images/gone.png (no such file)",
        "good.html#no-such-section (no such anchor)",
        "missing.html (no such file)",
    ]


def test_figures_missing_from_their_page_or_never_drawn(problems: list[Problem]) -> None:
    assert _details(problems, "figure.html") == ["1 image output, 0 on the page"]
    assert _details(problems, "figure_drawn.html") == [
        "the notebook makes a figure but has no image output"
    ]


# --- each finder on its own --------------------------------------------------------------------


# each text-level finder on snippets: does it find its kind (True) or rightly pass over it
FINDER_CASES: dict[Any, list[tuple[str, bool]]] = {
    find_warnings: [
        ("<pre>x.py:1: RuntimeWarning: divide by zero</pre>", True),
        ("<pre>DeprecationWarning: old API</pre>", True),
        ("<pre>warnings.warn(msg)</pre>", True),
        ("<p>Warning: a plain admonition word</p>", False),
        ("<pre>warnings.simplefilter('error', category=RuntimeWarning)</pre>", False),
        ("<script>x = 'RuntimeWarning: in a script'</script>", False),
    ],
    find_progress_bars: [
        ("<pre>  3%|▎         | 1/30 [00:01&lt;00:29]</pre>", True),
        ("<pre>100%|##########| 3/3 [00:00&lt;00:00, 12.1it/s]</pre>", True),
        ("<pre>embedding: 1.5s/it]</pre>", True),
        ("<pre>Loading checkpoint shards: 2/2</pre>", True),
        ("<p>50% | of readers skip it; it is fine</p>", False),
        ("<p>hit@5 rises from 61% to 70%</p>", False),
    ],
    find_absolute_paths: [
        ("<pre>/work/main/_build/regime</pre>", True),
        ("<p>see /tmp/x.json</p>", True),
        ("<p>from /root/.cache/huggingface</p>", True),
        ("<p>/Users/ana/data</p>", True),
        ("<pre>lib/python3.11/site-packages/tqdm/auto.py</pre>", True),
        ("<pre>C:\\Users\\ana\\data</pre>", True),
        ("<p>https://example.org/work/tmp/ and _build/regime/results</p>", False),
        ('<a href="https://example.org/home/">home</a>', False),
    ],
    find_leaked_markup: [
        ("<p>as :func:`f` does</p>", True),
        ("<p>as :py:meth:`f` does</p>", True),
        ("<p>a key of :class:<code>X</code></p>", True),  # the role's target became code
        ("<p>{rec}`t2:a.b`</p>", True),
        ("<p>{verdict}<code>t2</code></p>", True),
        ("<p>a ``literal`` left as typed</p>", True),
        ("<p><code>:func:`f`</code> shown as code</p>", False),
        ('<div class="highlight"><pre>{rec}`t2:a` ``x``</pre></div>', False),
        ('<span class="math">\\{a\\}</span>', False),
        ("<p>ratios 1:2:3, the set {a} and {b}, a time 12:30</p>", False),
    ],
}


@pytest.mark.parametrize(
    ("finder", "text", "found"),
    [
        pytest.param(finder, text, found, id=f"{finder.__name__}-{i}")
        for finder, cases in FINDER_CASES.items()
        for i, (text, found) in enumerate(cases)
    ],
)
def test_finders(finder: Any, text: str, found: bool) -> None:
    assert bool(finder(_soup(text))) is found


def test_find_tracebacks_needs_its_own_signs() -> None:
    assert find_tracebacks(_soup("<p>Tracebacks are described here.</p>")) == []


def test_notebook_figures_counts_image_outputs_and_drawing_calls() -> None:
    def cell(source: str, *mimes: str) -> dict[str, object]:
        outputs = [{"output_type": "display_data", "data": {m: "" for m in mimes}}]
        return {"cell_type": "code", "source": source, "outputs": outputs}

    notebook = {
        "cells": [
            cell("fig.savefig('a.png')", "image/png", "text/plain"),
            cell("display(svg)", "image/svg+xml"),
            cell("print(1)", "text/plain"),
            {"cell_type": "markdown", "source": "plt.show()"},
        ]
    }
    assert notebook_figures(notebook) == (2, True)
    assert notebook_figures({"cells": [cell("nb.save(figures.t1_r2(result))")]}) == (0, True)
    assert notebook_figures({"cells": [cell(["x = 1\n", "y = 2"])]}) == (0, False)


def test_figures_a_run_writes_must_show_on_its_notebooks_page(
    tmp_path: Path, book_build: Path
) -> None:
    results = tmp_path / "results"
    record = results / "notebook" / "record.json"
    record.parent.mkdir(parents=True)
    record.write_text(json.dumps({"figures": ["a.png"]}), encoding="utf-8")
    assert check_figures(book_build, results_dir=results) == [
        p for p in check_figures(book_build) if p.page != "notebook.html"
    ]
    record.write_text(json.dumps({"figures": ["a.png", "b.png"]}), encoding="utf-8")
    written = [
        p for p in check_figures(book_build, results_dir=results) if p.page == "notebook.html"
    ]
    assert written == [
        Problem(
            "notebook.html",
            "figure",
            "the run writes 2 figures (a.png, b.png), 1 image on the page",
        )
    ]


def test_a_notebook_without_its_page_is_a_problem(tmp_path: Path, book_build: Path) -> None:
    build = tmp_path / "html"
    shutil.copytree(book_build, build)
    (build / "notebook.html").unlink()
    assert Problem("notebook.html", "figure", "the notebook's page was not rendered") in (
        check_figures(build)
    )


def test_report_lines_and_counts() -> None:
    found = [Problem("b.html", "link", "x (no such file)"), Problem("a.html", "warning", "W")]
    assert count_by_kind(found) == {"warning": 1, "link": 1}  # in the order of HTML_KINDS
    assert format_report(found).splitlines() == [
        "b.html: link: x (no such file)",
        "a.html: warning: W",
        "warning: 1, link: 1",
    ]
    assert format_report([]) == "no problems"


def test_a_redirect_is_followed_by_the_link_check(tmp_path: Path, book_build: Path) -> None:
    assert redirect_target(book_build / "index.html") == "good.html"
    assert redirect_target(book_build / "good.html") is None
    build = tmp_path / "html"
    shutil.copytree(book_build, build)
    (build / "index.html").write_text('<meta http-equiv="refresh" content="0; url=gone.html">')
    assert Problem("index.html", "link", "gone.html (no such file)") in check_html(build)


def test_alt_text_that_is_a_file_name_or_missing(problems: list[Problem]) -> None:
    details = [p.detail for p in problems if p.page == "alt.html"]
    assert len(details) == 2
    assert any(d.startswith("alt text is a file name") for d in details)
    assert any(d.startswith("no alt text") for d in details)


def test_a_caption_is_held_against_what_its_figure_draws(problems: list[Problem]) -> None:
    details = sorted(p.detail for p in problems if p.page == "caption.html")
    assert details == [
        "blue_figure.svg: the caption names 'hollow', which the figure does not draw (it draws: "
        "blue)",
        "blue_figure.svg: the caption names 'vermilion', which the figure does not draw (it "
        "draws: blue)",
    ]  # the notebook figure's own caption ("a blue dot") is right


def test_placeholders_and_buttons_follow_the_repository_setting() -> None:
    from tools.bookcheck.check import find_placeholder_links

    buttons = (
        '<div class="article-header-buttons">'
        '<a href="https://mybinder.org/v2/gh/me/book/main?urlpath=tree/a.ipynb">Binder</a>'
        '<a href="../_sources/a.ipynb">download</a></div>'
    )
    soup = _soup(buttons)
    assert len(find_placeholder_links(soup, None)) == 1  # unset: no button may link out
    assert find_placeholder_links(soup, "https://github.com/me/book") == []
    assert len(find_placeholder_links(soup, "https://github.com/you/other")) == 1
    old = _soup('<a href="https://github.com/regime-companion/regime-conditional-retrieval">x</a>')
    assert find_placeholder_links(old, "https://github.com/me/book")


def test_a_script_declared_twice() -> None:
    from tools.bookcheck.check import find_duplicate_scripts

    once = '<script src="a.js"></script><script>var a = 1;</script>'
    assert find_duplicate_scripts(_soup(once)) == []
    twice = once + '<script src="a.js"></script><script>var  a = 1;</script>'
    assert len(find_duplicate_scripts(_soup(twice))) == 2


def test_the_caption_words_doctest_passes() -> None:
    import doctest

    from tools.bookcheck import prose

    result = doctest.testmod(prose)
    assert result.attempted >= 1 and result.failed == 0
