"""The ``regime`` command's registration: every module declares a Command or registers itself,
and a declared Command gets the same parser a hand-written registration would."""

from __future__ import annotations

import argparse
import importlib
import types
from collections.abc import Callable
from typing import Any

import pytest

from regime_core.cli import SUBCOMMAND_MODULES, build_parser
from regime_core.cli._common import Command, add_subcommand, register_module


@pytest.mark.parametrize("name", SUBCOMMAND_MODULES)
def test_every_module_declares_a_command_or_registers_itself(name: str) -> None:
    module = importlib.import_module(f"regime_core.cli.{name}")
    command = getattr(module, "COMMAND", None)
    if command is None:
        assert callable(module.register)
    else:
        assert isinstance(command, Command) and callable(module.run)
        assert not hasattr(module, "register"), "one way to register, not two"


def _parser_of(register: Callable[[Any], None]) -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="regime")
    register(top.add_subparsers(dest="command"))
    return top


def test_a_declared_command_equals_the_hand_written_registration() -> None:
    def run(args: argparse.Namespace) -> int:
        return 0

    def add_arguments(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("dataset")

    module = types.ModuleType("hello", "Say hello to a dataset.")
    module.COMMAND = Command("hello", help="say hello", files=(("--to", "who", None),))
    module.run, module.add_arguments = run, add_arguments

    def by_hand(sub: argparse._SubParsersAction) -> None:
        parser = add_subcommand(
            sub, "hello", run, help="say hello", description=module.__doc__,
            files=[("--to", "who", None)],
        )  # fmt: skip
        add_arguments(parser)

    declared = _parser_of(lambda sub: register_module(sub, module))
    assert declared.format_help() == _parser_of(by_hand).format_help()
    argv = ["hello", "hotpotqa", "--to", "you", "--work", "w", "--json"]
    a, b = declared.parse_args(argv), _parser_of(by_hand).parse_args(argv)
    assert vars(a) == vars(b) and a.func is run


def test_the_regime_parser_knows_every_command() -> None:
    commands = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert {"embed", "demo", "retrieve", "verdicts", "book-check", "route"} <= set(commands)
    assert commands["book-check"].parse_args(["--work", "w"]).work.name == "w"
