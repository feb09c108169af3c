"""The ``regime`` command. Each area registers its subcommands from its own module.

A module in ``SUBCOMMAND_MODULES`` declares its one action as ``COMMAND``
(:class:`~regime_core.cli._common.Command`, with ``add_arguments(parser)`` and ``run(args)``), or
exposes ``register(subparsers)``, which adds its parsers and sets ``func`` (a callable taking the
parsed namespace and returning an exit code) on each.
Errors in user input are ``ValueError``s; they print as ``regime: error: ...`` and exit 2, as
do permission and path problems (``OSError``); Ctrl-C exits 130 without a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from regime_core.cli._common import register_module

SUBCOMMAND_MODULES: tuple[str, ...] = (
    "data",
    "embed",
    "reproduce",
    "retrieve",
    "route",
    "demo",
    "annotate",
    "verdicts",
    "expected",
    "book_check",
    "citation",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="regime",
        description="Regime-conditional retrieval companion: data, retrieval, router, book.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in SUBCOMMAND_MODULES:
        register_module(sub, importlib.import_module(f"regime_core.cli.{name}"))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (ValueError, FileNotFoundError) as err:
        print(f"regime: error: {err}", file=sys.stderr)
        return 2
    except OSError as err:  # permission and path problems no command anticipated
        from regime_core.integrity import os_error_message

        where = err.filename if err.filename is not None else "a file"
        print(f"regime: error: {os_error_message(err, where, 'access')}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("regime: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
