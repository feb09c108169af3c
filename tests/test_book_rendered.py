"""The rendered book as its readers meet it (issue 12): the book built over the quick profile's
records (``quick_book`` in conftest.py) is checked page by page at HTML level
(tools.bookcheck.check); tests/test_book_readers.py reads it in headless Chromium.

Every kind of problem is its own test, so a failure names what a reader would meet and where.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tools.bookcheck.check import HTML_KINDS, Problem, check_html, format_report

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


@pytest.mark.parametrize("kind", _kinds(HTML_KINDS))
def test_no_page_shows(kind: str, html_problems: list[Problem]) -> None:
    assert [str(p) for p in html_problems if p.kind == kind] == []
