"""What the ``regime`` subcommands share: a subcommand whose help is its module's docstring
(:func:`add_subcommand`), the ``--work``, ``--json`` and file options, and printing a result as
one JSON object or as text.

Values are checked where they are parsed (an error is argparse's usage error, exit 2): paths,
names, datasets, ``--alpha`` and every option a declared kind checks (:func:`declared_value`).
JSON output is always valid JSON (:func:`json_text`): a non-finite float (e.g. a rate over no
question) prints as ``null``, never as the bare ``NaN`` that JSON parsers reject.

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
>>> parser = add_subcommand(sub, "greet", print, help="greet", files=[("--to", "who", None)])
>>> args = parser.parse_args(["--to", "you", "--work", "w"])
>>> args.func is print, args.to, args.work, args.json
(True, PosixPath('you'), PosixPath('w'), False)
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from regime_core.inputs import InputError, Kind, check_value
from regime_core.inputs.configs import DATASET_NAME, integer
from regime_core.limits import ALPHA

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


def add_command_group(
    subparsers: Any, name: str, *, help: str, description: str | None, metavar: str
) -> Any:
    """A subcommand made of actions (``regime NAME ACTION``, one required): returns the
    subparsers to add each action to; the action chosen is ``args.<name>_command``."""
    parser = add_command(subparsers, name, help=help, description=description)
    return parser.add_subparsers(dest=f"{name}_command", required=True, metavar=metavar)


def add_subcommand(
    subparsers: Any,
    name: str,
    func: Callable[[argparse.Namespace], int],
    *,
    help: str,
    description: str | None = None,
    raw_description: bool = True,
    work: str | None = WORK_HELP,
    json: bool = True,
    files: Iterable[tuple[str, str, Path | None]] = (),
) -> argparse.ArgumentParser:
    """A subcommand running ``func``, with ``--work`` (its help; ``None``: no such option), each
    file option of ``files`` (flag, help, default) and ``--json`` (unless ``json=False``).

    ``description`` is printed as written by ``--help`` (a module docstring) unless
    ``raw_description=False``, when argparse wraps it. The caller adds the command's own
    arguments to the returned parser.
    """
    if raw_description:
        parser = add_command(subparsers, name, help=help, description=description)
    else:
        parser = subparsers.add_parser(name, help=help, description=description)
    if work is not None:
        add_work_option(parser, help=work)
    for flag, file_help, default in files:
        add_file_option(parser, flag, file_help, default)
    if json:
        add_json_option(parser)
    parser.set_defaults(func=func)
    return parser


def path_value(text: str) -> Path:
    """The argparse type of every path option: a non-empty path without control characters.

    >>> path_value("w")
    PosixPath('w')
    """
    empty = "an empty path is not a place (it would mean the current directory); name one"
    return Path(_printable(text, empty))


def name_value(text: str) -> str:
    """The argparse type of a name (``--encoder``): not blank, no control characters."""
    return _printable(text, "an empty name names nothing", delete=True)


def _printable(text: str, empty: str, *, delete: bool = False) -> str:
    """``text`` unless blank (``empty`` says why) or holding a control character (DEL too,
    with ``delete``)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(empty)
    if any(ord(c) < 32 or (delete and ord(c) == 127) for c in text):
        raise argparse.ArgumentTypeError(f"{text!r} holds a control character")
    return text


#: The help of a dataset argument.
DATASET_HELP = (
    "hotpotqa, 2wikimultihopqa, musique, toyworld, or the NAME of a dataset of one's own "
    "(`regime data prepare --jsonl FILE --name NAME`)"
)


def add_dataset_argument(parser: argparse.ArgumentParser, help: str = DATASET_HELP) -> None:
    """The positional ``DATASET`` (:func:`dataset_value`)."""
    parser.add_argument("dataset", metavar="DATASET", type=dataset_value, help=help)


def declared_value(kind: Kind, convert: Callable[[str], Any]) -> Callable[[str], Any]:
    """The argparse type of an option whose value a declared kind checks: the text converted
    (``int``, ``float``), then read as ``kind``; either refusal is a usage error.

    >>> declared_value(integer(1), int)("3")
    3
    """

    def value(text: str) -> Any:
        try:
            return check_value(kind, convert(text), where="", field="")
        except InputError as err:
            raise argparse.ArgumentTypeError(err.problem) from None
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {kind.describe()}") from None

    return value


#: a dataset argument: a built-in dataset, or a name a dataset of one's own can have (``regime
#: data prepare --jsonl FILE --name NAME``); whether it is prepared the command finds out
dataset_value = declared_value(DATASET_NAME, str)
#: ``--alpha``: the one rule of α (:data:`regime_core.limits.ALPHA`)
alpha_value = declared_value(ALPHA, float)
#: ``--jobs``, ``--depth``: a count, as every count of a run's config is declared
count_value = declared_value(integer(1), int)


def add_work_option(
    parser: argparse.ArgumentParser, help: str = WORK_HELP, metavar: str | None = None
) -> None:
    """``--work DIR`` (a path; ``None`` means ``REGIME_WORK_DIR`` or its default)."""
    parser.add_argument("--work", type=path_value, default=None, help=help, metavar=metavar)


def add_file_option(
    parser: argparse.ArgumentParser, flag: str, help: str, default: Path | None = None
) -> None:
    """``flag PATH``: a file the command reads or writes (``default``: usually the repository's)."""
    parser.add_argument(flag, type=path_value, default=default, help=help)


def add_json_option(parser: argparse.ArgumentParser, help: str = JSON_HELP) -> None:
    """``--json``: the command prints one JSON object instead of text."""
    parser.add_argument("--json", action="store_true", help=help)


def json_ready(value: Any) -> Any:
    """``value`` with every non-finite float replaced by ``None`` (JSON ``null``), the stated
    mapping of :func:`json_text`; tuples become lists.

    >>> json_ready({"hit@5": float("nan"), "n": [0, float("inf")]})
    {'hit@5': None, 'n': [0, None]}
    """
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: json_ready(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [json_ready(item) for item in value]
    return value


def json_text(payload: Any, **dumps: Any) -> str:
    """``payload`` as JSON text that every parser reads (``dumps``: options of
    :func:`json.dumps`): non-finite floats are ``null`` (:func:`json_ready`)."""
    return json.dumps(json_ready(payload), allow_nan=False, **dumps)


def print_result(as_json: bool, payload: Any, text: str | Callable[[], str], **dumps: Any) -> None:
    """Print ``payload`` as one JSON object (:func:`json_text`; ``dumps``: options of
    :func:`json.dumps`), or ``text`` (a string, or a function making it, called only when it
    is printed)."""
    if as_json:
        print(json_text(payload, **dumps))
    else:
        print(text() if callable(text) else text)
