"""regime book-check [--html DIR] [--work DIR] [--browser] [--json]: the built book, as read.

Checks every page of a built book (default: _build/html, what `regime book` writes) for what a
reader should never meet: Python warnings, tracebacks, progress bars, absolute local paths,
stderr boxes, source markup leaked into the text, internal links that lead nowhere, figures
a notebook makes that its page does not show (with the run records under --work, every figure a
run writes), figures without alt text, captions naming a colour or marker their figure does not
draw, placeholder links and buttons (no repository, issue or launch button while [project.urls]
Repository is unset), and scripts declared twice. With --browser, headless Chromium also loads
every page at 390, 768, 1366 and 1920 px, saves screenshots (default:
_build/screenshots/WIDTH/PAGE.png, plus report.json with what was found on each page), and reports
horizontal overflow on a phone, maths left unrendered, errors in the browser's console, figure
text smaller than 9 px, table cells cut off or out of view without a hint, source markup shown as
text, and a landing page over its budgets of words and height.

One problem per line: PAGE: KIND: DETAIL, then the count per kind. Exits 1 when there is any
problem. With --json one JSON object is printed:

    {"html", "ok", "counts": {kind: n}, "problems": [{"page", "kind", "detail"}],
     "browser": {"seconds", "screenshots"} or null}
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from regime_core import paths
from regime_core.cli._common import Command, add_work_option, json_text, path_value

COMMAND = Command(
    "book-check",
    help="check the built book's pages as a reader meets them (optionally in Chromium)",
    work=None,  # its own --work help, below
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_work_option(
        parser,
        help="work directory whose results records list each run's figures (REGIME_WORK_DIR)",
        metavar="DIR",
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


def run(args: argparse.Namespace) -> int:
    from regime_core.book.check import check_html, count_by_kind, format_report

    results = paths.results_dir(args.work)
    problems = check_html(
        args.html,
        results_dir=results if results.is_dir() else None,
        repository=paths.repository_url(),
    )
    browser: dict[str, Any] | None = None
    if args.browser:
        from regime_core.book.browser import WIDTHS, check_in_browser

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
