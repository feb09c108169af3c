"""python -m tools.bookcheck [--html DIR] [--work DIR] [--browser] [--json]: the book, as read.

Checks every page of a built book (default: _build/html, what `regime book` writes) for what a
reader should never meet: Python warnings, tracebacks, progress bars, absolute local paths,
source markup leaked into the text, internal links that lead nowhere, figures a notebook makes
that its page does not show (with the run records under --work, every figure a run writes),
figures without alt text, captions naming a colour or marker their figure does not draw,
placeholder links and buttons (no repository, issue or launch button while [project.urls]
Repository is unset), and scripts declared twice. (A stderr output box fails the build itself:
myst-nb's stderr_output in _config.yml.) With --browser, headless Chromium also loads every page
at 390, 768, 1366 and 1920 px, saves screenshots (default: _build/screenshots/WIDTH/PAGE.png, plus
report.json with what was found on each page), and reports horizontal overflow on a phone, maths
left unrendered, errors in the browser's console, figure text smaller than 9 px, table cells cut
off or out of view without a hint, source markup shown as text, and a landing page over its
budgets of words and height.

One problem per line: PAGE: KIND: DETAIL, then the count per kind. Exits 1 when there is any
problem, 2 when there is no build to check. With --json one JSON object is printed:

    {"html", "ok", "counts": {kind: n}, "problems": [{"page", "kind", "detail"}],
     "browser": {"seconds", "screenshots"} or null}
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from regime_core import paths
from regime_core.cli._common import json_text, path_value
from regime_core.locks import directory_lock


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m tools.bookcheck",
        description="check the built book's pages as a reader meets them (optionally in Chromium)",
    )
    parser.add_argument(
        "--work",
        type=path_value,
        default=None,
        metavar="DIR",
        help="work directory whose results records list each run's figures (REGIME_WORK_DIR)",
    )
    parser.add_argument(
        "--html",
        type=path_value,
        metavar="DIR",
        default=paths.REPO_ROOT / "_build" / "html",
        help="the HTML build (default: _build/html of the repository)",
    )
    parser.add_argument(
        "--browser", action="store_true", help="also load every page in headless Chromium"
    )
    parser.add_argument(
        "--screenshots",
        type=path_value,
        metavar="DIR",
        default=None,
        help="where screenshots go (default: screenshots beside the HTML build)",
    )
    parser.add_argument(
        "--width",
        type=int,
        metavar="PX",
        action="append",
        default=None,
        help="a viewport width in px (repeatable; default: 390, 768, 1366 and 1920)",
    )
    parser.add_argument(
        "--chromium", type=path_value, default=None, metavar="PATH", help="the Chromium executable"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        with directory_lock(paths.work_dir(args.work), what="bookcheck", shared=True):
            return _check(args)
    except FileNotFoundError as err:
        print(f"bookcheck: {err}", file=sys.stderr)
        return 2


def _check(args: argparse.Namespace) -> int:
    from tools.bookcheck.check import check_html, count_by_kind, format_report

    sys.path.insert(0, str(paths.REPO_ROOT / "book" / "_ext"))  # the book's extension
    from regime_book.citation import repository_url

    results = paths.results_dir(args.work)
    problems = check_html(
        args.html,
        results_dir=results if results.is_dir() else None,
        repository=repository_url(),
    )
    browser: dict[str, Any] | None = None
    if args.browser:
        from tools.bookcheck.browser import WIDTHS, check_in_browser

        def progress(view: Any) -> None:
            if not args.json:
                print(f"  {view.width} px  {view.page}  {view.seconds:.1f} s", file=sys.stderr)

        report = check_in_browser(
            args.html,
            screenshots=args.screenshots,
            widths=tuple(args.width or WIDTHS),
            chromium=args.chromium,
            progress=progress,
        )
        problems = sorted(problems + report.problems)
        browser = {"seconds": round(report.seconds, 1), "screenshots": str(report.screenshots)}
    if args.json:
        summary = {
            "html": str(args.html),
            "ok": not problems,
            "counts": count_by_kind(problems),
            "problems": [p.as_dict() for p in problems],
            "browser": browser,
        }
        print(json_text(summary, ensure_ascii=False))
    else:
        print(format_report(problems))
        if browser is not None:
            print(f"browser: {browser['seconds']} s, screenshots in {browser['screenshots']}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
