"""The ``regime`` command. Each area registers its subcommands from its own module.

A module in ``SUBCOMMAND_MODULES`` exposes ``register(subparsers)``, which adds its parsers
(:func:`~regime_core.cli._common.add_subcommand`) and sets ``func`` (a callable taking the
parsed namespace and returning an exit code) on each.

Every command holds its work directory's lock (:func:`regime_core.locks.directory_lock`) while
it runs, as :data:`LOCKS` says, so readers never see a writer's half-done work and writers wait
for each other.

Errors in user input are ``ValueError``s; they print as ``regime: error: ...`` and exit 2, as
do permission and path problems (``OSError``). A command run with ``--json`` that fails also
prints one JSON object on stdout (:func:`json_error`): for these errors, for a usage error
(``kind`` ``UsageError``, exit 2) and for an unexpected exception (exit 1, its traceback on
stderr), so a caller parsing stdout always gets JSON. Ctrl-C, SIGTERM and SIGHUP end the command
with one line (``regime: interrupted``, ``terminated``, ``hung up``) and exit 128 + the signal
(130, 143, 129), at any moment from the first line of :func:`main` on (every import of the
commands happens after it); a second signal while the first is being handled exits at once. A
closed stdout (``regime verdicts | head -1``) ends the command quietly with 141, as SIGPIPE
would.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Sequence
from typing import Any

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
)


#: The lock each command holds on its work directory (``exclusive`` when it writes derived data
#: there, ``shared`` when it only reads there, ``none`` when it uses no work directory).
LOCKS: dict[str, str] = {
    "data prepare": "exclusive",
    "data stats": "shared",
    "data fetch": "none",  # writes the raw data directory, never a work directory
    "data export": "shared",  # reads the prepared files, writes a file outside them
    "embed": "exclusive",
    # shared: the runner takes the runs' lock for itself and commits each run under the records'
    # lock (regime_core.runner.reproduce.writing_lock), so readers never wait for a whole run
    "reproduce": "shared",
    # reads records under the records' lock; vendors MathJax under <work>/vendor's own lock
    "book": "shared",
    "retrieve": "exclusive",  # fills the embedding store with what it encodes
    "route": "none",  # reads the packaged model or --model
    "route train": "exclusive",
    "demo": "shared",  # adds to the content-addressed store, which concurrent writers share
    "annotate sample": "shared",
    "annotate kappa": "shared",
    "verdicts": "shared",
    "expected freeze": "exclusive",
    "expected check": "shared",
}
_SIGNAL_WORDS: dict[int, str] = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated"}
if hasattr(signal, "SIGHUP"):
    _SIGNAL_WORDS[signal.SIGHUP] = "hung up"
BROKEN_PIPE_EXIT = 128 + 13  # what a shell reports for a command ended by SIGPIPE


class Interrupted(KeyboardInterrupt):
    """Raised for SIGINT, SIGTERM or SIGHUP (a ``KeyboardInterrupt``, so cleanup code that
    handles Ctrl-C handles all three); ``signum`` is the signal."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


class _Signals:
    """The handlers :func:`main` installs: the first signal raises :class:`Interrupted`, a
    second one (during the cleanup of the first) exits at once with the same one line."""

    def __init__(self) -> None:
        self.received: int | None = None
        self.previous: dict[int, Any] = {}

    def handle(self, signum: int, _frame: object) -> None:
        if self.received is not None:
            os.write(2, f"regime: {_SIGNAL_WORDS[signum]}\n".encode())
            os._exit(128 + signum)
        self.received = signum
        raise Interrupted(signum)

    def install(self) -> None:
        """Handle each signal, except those ignored on purpose (``nohup``, a background job)."""
        for signum in _SIGNAL_WORDS:
            if signal.getsignal(signum) is not signal.SIG_IGN:
                self.previous[signum] = signal.signal(signum, self.handle)

    def restore(self) -> None:
        for signum, handler in self.previous.items():
            signal.signal(signum, handler)

    def finish(self, code: int) -> None:
        """For the rest of the program (its work and output are done), a signal ends it at
        once with ``code`` and no message."""
        for signum in self.previous:
            signal.signal(signum, lambda _signum, _frame: os._exit(code))


def _parser_class() -> Any:
    """``argparse.ArgumentParser`` remembering its usage error's message (``last_error``), which
    a ``--json`` failure prints (argparse itself only writes it to stderr); its subparsers are
    of the same class."""
    import argparse

    class Parser(argparse.ArgumentParser):
        last_error: str | None = None

        def error(self, message: str) -> Any:
            Parser.last_error = message
            super().error(message)

    return Parser


def build_parser() -> Any:
    import importlib

    parser = _parser_class()(
        prog="regime",
        description="Regime-conditional retrieval companion: data, retrieval, router, book.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in SUBCOMMAND_MODULES:
        importlib.import_module(f"regime_core.cli.{name}").register(sub)
    _name_commands(parser, ())
    return parser


def _name_commands(parser: Any, words: tuple[str, ...]) -> None:
    """Set ``command_path`` (e.g. ``"data prepare"``) on every parser that runs something."""
    import argparse

    if words and parser.get_default("func") is not None:
        parser.set_defaults(command_path=" ".join(words))
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                _name_commands(sub, (*words, name))


def lock_mode(args: Any) -> str:
    """The lock the parsed command holds (:data:`LOCKS`; a command missing there writes)."""
    return LOCKS.get(getattr(args, "command_path", ""), "exclusive")


def _run(args: Any) -> int:
    """Run the parsed command with its ``--work`` as the work directory of everything it calls
    (:func:`regime_core.paths.use_work_dir`), holding the lock :data:`LOCKS` names."""
    from regime_core import paths

    mode = lock_mode(args)
    with paths.use_work_dir(getattr(args, "work", None)) as work:
        if mode == "none":
            return int(args.func(args) or 0)
        from regime_core.locks import directory_lock

        def waiting() -> None:
            print(
                f"regime: waiting for another regime command on {work} to finish",
                file=sys.stderr,
                flush=True,
            )

        with directory_lock(
            work, what=f"regime {args.command_path}", shared=mode == "shared", on_wait=waiting
        ):
            return int(args.func(args) or 0)


def _quiet_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's last flush cannot fail again."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _interrupt_behind(err: BaseException) -> KeyboardInterrupt | None:
    """The interrupt an exception was raised from or during, if any (its cause chain)."""
    seen: set[int] = set()
    current: BaseException | None = err
    while current is not None and id(current) not in seen:
        if isinstance(current, KeyboardInterrupt):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def main(argv: Sequence[str] | None = None) -> int:
    signals = _Signals()
    # not in the main thread (a caller's worker), signals stay as they are
    with contextlib.suppress(ValueError):
        signals.install()
    code = 128 + signal.SIGINT
    try:
        code = _main(argv)
    except Interrupted as err:
        _say(f"regime: {_SIGNAL_WORDS.get(err.signum, 'interrupted')}")
        code = 128 + err.signum
    except KeyboardInterrupt:
        _say("regime: interrupted")
    except (RuntimeError, ImportError) as err:
        # a signal during an import can arrive wrapped: Python 3.11 wraps what __set_name__
        # raises (a dataclass field's included) in a RuntimeError, and a C extension whose
        # initialisation it stops reports "ImportError: initialization failed": still an interrupt
        interrupt = _interrupt_behind(err)
        if interrupt is None:
            raise
        signum = getattr(interrupt, "signum", signal.SIGINT)
        _say(f"regime: {_SIGNAL_WORDS.get(signum, 'interrupted')}")
        code = 128 + signum
    except BrokenPipeError:
        _quiet_stdout()
        code = BROKEN_PIPE_EXIT
    except SystemExit as err:  # argparse's --help or usage error
        code = err.code if isinstance(err.code, int) else 0 if err.code is None else 2
        raise
    finally:
        # a caller in the same process gets its handlers back; the program itself (argv None)
        # may still be finishing (flushing, unloading modules): a late signal ends it quietly,
        # with the code the command already has
        if argv is None:
            signals.finish(code)
        else:
            signals.restore()
    return code


def _say(line: str) -> None:
    with contextlib.suppress(OSError, ValueError):  # stderr closed too: nothing to say it on
        print(line, file=sys.stderr, flush=True)


def json_error(message: str, kind: str, command: str | None = None) -> str:
    """The one JSON object a failed ``--json`` command prints on stdout.

    >>> json_error("no record", "FileNotFoundError", "verdicts")
    '{"error": "no record", "kind": "FileNotFoundError", "command": "verdicts"}'
    """
    from regime_core.cli._common import json_text

    return json_text({"error": message, "kind": kind, "command": command})


def _print_json_error(message: str, kind: str, command: str | None) -> None:
    with contextlib.suppress(OSError, ValueError):  # stdout closed: nothing to print it on
        print(json_error(message, kind, command), flush=True)


def _refused(message: str, kind: str, command: str | None, as_json: bool) -> int:
    """Exit 2 for an error in the user's input, said on stderr (and on stdout with ``--json``)."""
    _say(f"regime: error: {message}")
    if as_json:
        _print_json_error(message, kind, command)
    return 2


def _main(argv: Sequence[str] | None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    as_json = "--json" in words  # before parsing, so that a usage error is JSON too
    command: str | None = None
    parser = None
    try:
        parser = build_parser()
        args = parser.parse_args(words)
        as_json = bool(getattr(args, "json", False))
        command = getattr(args, "command_path", None)
        code = _run(args)
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        raise
    except (ValueError, FileNotFoundError) as err:
        return _refused(str(err), type(err).__name__, command, as_json)
    except OSError as err:  # permission and path problems no command anticipated
        from regime_core.integrity import os_error_message

        where = err.filename if err.filename is not None else "a file"
        message = os_error_message(err, where, "access")
        return _refused(message, type(err).__name__, command, as_json)
    except SystemExit as exit_:  # argparse's --help or usage error: what it printed must arrive
        if as_json and exit_.code not in (0, None):
            message = getattr(type(parser), "last_error", None) or "usage error"
            _print_json_error(message, "UsageError", command)
        sys.stdout.flush()
        raise
    except Exception as err:  # a bug: still one JSON object for a --json caller, then the trace
        if as_json:
            _print_json_error(str(err) or type(err).__name__, type(err).__name__, command)
        raise


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
