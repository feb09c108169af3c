"""The ``regime`` command. Each area registers its subcommands from its own module.

A module in ``SUBCOMMAND_MODULES`` exposes ``register(subparsers)``, which adds its parsers and
sets ``func`` (a callable taking the parsed namespace and returning an exit code) on each.
Errors in user input are ``ValueError``s; they print as ``regime: error: ...`` and exit 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

SUBCOMMAND_MODULES: tuple[str, ...] = (
    "data",
    "embed",
    "reproduce",
    "retrieve",
    "route",
    "demo",
    "annotate",
    "verdicts",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="regime",
        description="Regime-conditional retrieval companion: data, retrieval, router, book.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in SUBCOMMAND_MODULES:
        importlib.import_module(f"regime_core.cli.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (ValueError, FileNotFoundError) as err:
        print(f"regime: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
