"""What the ``regime`` subcommands share: a subcommand whose help is its module's docstring, the
``--work`` and ``--json`` options, and printing a result as one JSON object or as text.

>>> import argparse
>>> sub = argparse.ArgumentParser(prog="regime").add_subparsers()
>>> parser = add_command(sub, "hello", help="say hello", description="Say hello.")
>>> add_work_option(parser)
>>> add_json_option(parser)
>>> args = parser.parse_args(["--json"])
>>> args.work is None, args.json
(True, True)
>>> print_result(args.json, {"hello": "world"}, "hello, world")
{"hello": "world"}
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

WORK_HELP = "work directory (REGIME_WORK_DIR)"
JSON_HELP = "print one JSON object on stdout"


def add_command(
    subparsers: Any, name: str, *, help: str, description: str | None
) -> argparse.ArgumentParser:
    """A subcommand whose ``--help`` prints ``description`` as written (a module docstring)."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        name,
        help=help,
        description=description,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    return parser


def add_work_option(parser: argparse.ArgumentParser, help: str = WORK_HELP) -> None:
    """``--work DIR`` (a path; ``None`` means ``REGIME_WORK_DIR`` or its default)."""
    parser.add_argument("--work", type=Path, default=None, help=help)


def add_file_option(
    parser: argparse.ArgumentParser, flag: str, help: str, default: Path | None = None
) -> None:
    """``flag PATH``: a file the command reads or writes (``default``: usually the repository's)."""
    parser.add_argument(flag, type=Path, default=default, help=help)


def add_json_option(parser: argparse.ArgumentParser, help: str = JSON_HELP) -> None:
    """``--json``: the command prints one JSON object instead of text."""
    parser.add_argument("--json", action="store_true", help=help)


def print_result(as_json: bool, payload: Any, text: str | Callable[[], str], **dumps: Any) -> None:
    """Print ``payload`` as one JSON object (``dumps``: options of :func:`json.dumps`), or
    ``text`` (a string, or a function making it, called only when it is printed)."""
    if as_json:
        print(json.dumps(payload, **dumps))
    else:
        print(text() if callable(text) else text)
