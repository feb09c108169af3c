"""The ``regime`` command's registration: every module registers its own subcommands."""

from __future__ import annotations

import argparse
from typing import Any

import pytest

from regime_core.cli import build_parser


def test_the_regime_parser_knows_every_command() -> None:
    commands = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert {"embed", "demo", "retrieve", "verdicts", "route"} <= set(commands)
    assert commands["verdicts"].parse_args(["--work", "w"]).work.name == "w"


# --- issue 22: values checked where they are parsed --------------------------------------------


def _options(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> Any:
    """``(subcommand path, action)`` for every action of every (sub)parser."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _options(sub, (*prefix, name))
        else:
            yield prefix, action


def test_no_option_takes_a_bare_path_type() -> None:
    from pathlib import Path

    bare = [(p, a.dest) for p, a in _options(build_parser()) if a.type is Path]
    assert bare == []  # Path("") is the current directory: every path option is path_value


def test_every_path_and_name_option_refuses_an_empty_value(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from regime_core.cli._common import name_value, path_value

    parser = build_parser()
    checked = 0
    for prefix, action in _options(parser):
        if action.type not in (path_value, name_value) or not action.option_strings:
            continue
        for value in ("", "  "):
            with pytest.raises(SystemExit) as exit_:
                parser.parse_args([*prefix, action.option_strings[0], value])
            assert exit_.value.code == 2
            err = capsys.readouterr().err
            assert f"argument {action.option_strings[0]}: an empty" in err, err
            checked += 1
    # --work, --data-dir, --out, --encoder, --model, --run-file, ... of every command
    assert checked >= 2 * 20


def test_json_text_is_valid_json_with_non_finite_numbers_as_null() -> None:
    import json

    from regime_core.cli._common import json_text

    text = json_text({"hit@5": float("nan"), "xs": (1.5, float("-inf")), "n": 0})
    assert json.loads(text) == {"hit@5": None, "xs": [1.5, None], "n": 0}
    assert "NaN" not in text and "Infinity" not in text


# --- issue 33: a failed --json command prints one JSON object ----------------------------------


def _json_commands() -> list[tuple[tuple[str, ...], list[str]]]:
    """Every command taking ``--json``: its words and an argument list it parses (each
    required argument given its first choice, or ``1``)."""
    found = []
    for prefix, action in _options(build_parser()):
        if "--json" not in action.option_strings:
            continue
        sub = build_parser()
        for word in prefix:
            sub = next(
                a for a in sub._actions if isinstance(a, argparse._SubParsersAction)
            ).choices[word]
        argv = list(prefix)
        for other in sub._actions:
            if other.required or (not other.option_strings and other.nargs is None):
                value = str(other.choices[0]) if other.choices else "1"
                argv += [*other.option_strings[:1], value]
        found.append((prefix, [*argv, "--json"]))
    return found


def test_the_json_commands_are_found() -> None:
    words = {" ".join(prefix) for prefix, _ in _json_commands()}
    assert {"verdicts", "retrieve", "data stats", "route", "embed", "expected check"} <= words


@pytest.mark.parametrize(
    "argv", [argv for _, argv in _json_commands()], ids=[" ".join(p) for p, _ in _json_commands()]
)
def test_every_json_command_prints_one_json_error_object_when_it_fails(
    argv: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    from regime_core import cli

    def fail(args: argparse.Namespace) -> int:
        raise ValueError(f"{args.command_path} could not do it")

    monkeypatch.setattr(cli, "_run", fail)
    assert cli.main(argv) == 2
    out, err = capsys.readouterr()
    assert "regime: error:" in err
    command = " ".join(argv[: len(argv) - 1]).split(" 1")[0]
    payload = json.loads(out)  # one object, nothing else on stdout
    assert payload["kind"] == "ValueError" and payload["error"].endswith("could not do it")
    assert command.startswith(payload["command"])


def test_a_real_failure_a_usage_error_and_a_bug_are_json_too(
    tmp_path: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    from regime_core import cli

    assert cli.main(["verdicts", "--work", str(tmp_path), "--json"]) == 2
    payload = json.loads(capsys.readouterr().out)
    assert payload["kind"] == "FileNotFoundError" and "no record for run" in payload["error"]
    assert payload["command"] == "verdicts"
    with pytest.raises(SystemExit) as exit_:
        cli.main(["retrieve", "musique", "--arm", "both", "--json"])
    assert exit_.value.code == 2
    payload = json.loads(capsys.readouterr().out)
    assert payload["kind"] == "UsageError" and "invalid choice: 'both'" in payload["error"]
    with pytest.raises(SystemExit):  # without --json, stdout stays empty
        cli.main(["retrieve", "musique", "--arm", "both"])
    assert capsys.readouterr().out == ""

    def bug(args: argparse.Namespace) -> int:
        raise RuntimeError("a bug")

    monkeypatch.setattr(cli, "_run", bug)
    with pytest.raises(RuntimeError):
        cli.main(["data", "stats", "toyworld", "--json"])
    assert json.loads(capsys.readouterr().out) == {
        "error": "a bug", "kind": "RuntimeError", "command": "data stats"
    }  # fmt: skip
