"""Where the book step's time goes: the build's phases, per page, and the project's own code.

Active only when ``REGIME_BOOK_TIMING`` names a file (``regime book --timing FILE`` sets it for
the jupyter-book child); otherwise :func:`setup_timing` does nothing and the build is unchanged.
At ``build-finished`` it writes that file (JSON, ``"format": "regime-book-timing/1"``):

``phases``
    seconds of ``startup`` (this extension's setup to ``env-before-read-docs``: the extensions
    loaded after it, ``config-inited``, ``builder-inited``, the pickled environment), ``read`` (to
    ``env-updated``: parsing the outdated pages), ``check`` (to the builder's ``write``: the
    ``env-updated`` handlers, pickling the environment, the consistency check), ``write`` (the
    builder's ``write``: resolving and writing each page) and ``finish`` (from the last write to
    ``build-finished``: the index pages, the search index, static files), and ``total``. A phase
    the build never reached (nothing out of date: no ``write``) counts 0 seconds.
``documents``
    per page, ``read_seconds`` (measured by ``sphinx.ext.duration``, which the timed build loads)
    and ``write_seconds`` (``doctree-resolved`` to the end of the builder's ``write_doc``),
    ``null`` for the step a page was not part of.
``failed``, ``warnings``
    whether an exception ended the build, and the warnings it logged so far (with
    ``--warningiserror --keep-going`` a build with warnings fails after this file is written).
``project``
    one entry per directive, role and event handler of ``regime_core`` or of this extension
    (``kind``, ``name``, ``calls``, ``seconds``), calls 0 for those the build did not use. A
    directive's seconds hold those of the directives and roles its content parses (they are
    counted there too).

The seconds are wall seconds; with ``-j N`` the pages are read in child processes whose calls
are not counted in ``project`` (``parallel`` says how many).
"""

from __future__ import annotations

import functools
import inspect
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from regime_core.book.build import TIMING_ENV
from regime_core.integrity import atomic_write_bytes, check_writable

if TYPE_CHECKING:
    from sphinx.application import Sphinx

TIMING_FORMAT = "regime-book-timing/1"
PHASES: tuple[str, ...] = ("startup", "read", "check", "write", "finish")
#: the project's own code: the package and this extension (beside the book's pages since issue 47)
_PROJECT_PREFIXES: tuple[str, ...] = ("regime_core.", "regime_book.")


@dataclass
class _Usage:
    kind: str
    name: str
    calls: int = 0
    seconds: float = 0.0


@dataclass
class BookTiming:
    """The clock marks and sums of one build (see the module's docstring)."""

    target: Path
    marks: dict[str, float] = field(default_factory=dict)
    write_started: dict[str, float] = field(default_factory=dict)
    write_seconds: dict[str, float] = field(default_factory=dict)
    usage: dict[tuple[str, str], _Usage] = field(default_factory=dict)

    def mark(self, name: str) -> None:
        self.marks.setdefault(name, time.perf_counter())

    def timed(self, kind: str, name: str, call: Callable[..., Any]) -> Callable[..., Any]:
        """``call``, counting its calls and seconds under ``(kind, name)``."""
        usage = self.usage.setdefault((kind, name), _Usage(kind, name))

        def timed_call(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return call(*args, **kwargs)
            finally:
                usage.calls += 1
                usage.seconds += time.perf_counter() - started

        return timed_call

    def phases(self, end: float) -> dict[str, float]:
        """Seconds per phase, a missing mark taken as the one before it; ``total`` last."""
        order = ["setup", "read_start", "read_end", "write_start", "write_end"]
        times, last = [], self.marks["setup"]
        for name in order:
            last = self.marks.get(name, last)
            times.append(last)
        times.append(end)
        seconds = {
            p: round(max(b - a, 0.0), 6)
            for p, a, b in zip(PHASES, times[:-1], times[1:], strict=True)
        }
        seconds["total"] = round(end - self.marks["setup"], 6)
        return seconds

    def report(self, app: Sphinx, failed: bool) -> dict[str, Any]:
        end = time.perf_counter()
        duration: Any = app.env.get_domain("duration")  # sphinx.ext.duration's
        read_seconds = duration.reading_durations
        names = sorted(set(read_seconds) | set(self.write_seconds))
        documents = {
            name: {
                "read_seconds": _rounded(read_seconds.get(name)),
                "write_seconds": _rounded(self.write_seconds.get(name)),
            }
            for name in names
        }
        project = [
            {"kind": u.kind, "name": u.name, "calls": u.calls, "seconds": round(u.seconds, 6)}
            for u in sorted(self.usage.values(), key=lambda u: (-u.seconds, u.kind, u.name))
        ]
        return {
            "format": TIMING_FORMAT,
            "builder": app.builder.name if app.builder is not None else None,
            "parallel": app.parallel,
            "failed": failed,
            "warnings": getattr(app, "_warncount", None),  # Sphinx's count, private
            "phases": self.phases(end),
            "documents": documents,
            "project": project,
        }


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def _is_project(obj: Any) -> bool:
    target = obj.func if isinstance(obj, functools.partial) else obj
    module = getattr(target, "__module__", None) or type(target).__module__
    return module.startswith(_PROJECT_PREFIXES) and module != __name__


def _handler_name(event: str, handler: Any) -> str:
    target = handler.func if isinstance(handler, functools.partial) else handler
    name = getattr(target, "__qualname__", None) or type(target).__qualname__
    return f"{event}: {name}"


def _wrap_handlers(app: Sphinx, timing: BookTiming) -> None:
    for event, listeners in app.events.listeners.items():
        for index, listener in enumerate(listeners):
            if _is_project(listener.handler):
                name = _handler_name(event, listener.handler)
                timed = timing.timed("handler", name, listener.handler)
                listeners[index] = listener._replace(handler=timed)


def _wrap_directives(timing: BookTiming) -> None:
    # Sphinx's add_directive registers into docutils' table, which a build keeps to itself
    # (sphinx.util.docutils.docutils_namespace); a subclass times the directive's run
    from docutils.parsers.rst import directives

    registry: dict[str, Any] = directives._directives
    for name, directive in list(registry.items()):
        run: Any = getattr(directive, "run", None)
        if inspect.isclass(directive) and run is not None and _is_project(directive):
            timed_run = timing.timed("directive", name, run)
            registry[name] = type(directive.__name__, (directive,), {"run": timed_run})


def _wrap_roles(timing: BookTiming) -> None:
    from docutils.parsers.rst import roles

    registry: dict[str, Any] = roles._roles
    for name, role in list(registry.items()):
        if _is_project(role):
            timed = timing.timed("role", name, role)
            registry[name] = functools.wraps(role, updated=())(timed)


def _wrap_builder(app: Sphinx, timing: BookTiming) -> None:
    """At ``builder-inited``: mark the builder's ``write`` and time each page's ``write_doc``."""
    builder = app.builder
    write, write_doc = builder.write, builder.write_doc

    def timed_write(*args: Any, **kwargs: Any) -> Any:
        timing.mark("write_start")
        try:
            return write(*args, **kwargs)
        finally:
            timing.mark("write_end")

    def timed_write_doc(docname: str, doctree: Any) -> None:
        started = timing.write_started.pop(docname, None) or time.perf_counter()
        try:
            write_doc(docname, doctree)
        finally:
            seconds = time.perf_counter() - started
            timing.write_seconds[docname] = timing.write_seconds.get(docname, 0.0) + seconds

    setattr(builder, "write", timed_write)  # noqa: B010 (an instance's method, replaced)
    setattr(builder, "write_doc", timed_write_doc)  # noqa: B010


def _write_report(app: Sphinx, timing: BookTiming, exception: BaseException | None) -> None:
    report = timing.report(app, failed=exception is not None)
    # the writers' rule: a FIFO, device, directory or dangling link there is refused
    atomic_write_bytes(timing.target, (json.dumps(report, indent=1) + "\n").encode("utf-8"))


def setup_timing(app: Sphinx) -> BookTiming | None:
    """Time the build if ``REGIME_BOOK_TIMING`` names a file; call it after every other
    registration of the extension, so that each of its handlers, directives and roles is
    wrapped. Returns the :class:`BookTiming` that will be written, ``None`` when inactive."""
    value = os.environ.get(TIMING_ENV, "").strip()
    if not value:
        return None
    target = Path(value).absolute()
    check_writable(target, TIMING_ENV)  # refused before the build, not after it
    timing = BookTiming(target=target)
    timing.mark("setup")
    _wrap_handlers(app, timing)
    _wrap_directives(timing)
    _wrap_roles(timing)
    app.setup_extension("sphinx.ext.duration")  # each page's read seconds
    first, last = 1, 999  # before, and after, every other handler of the event

    def doctree_resolved(app: Sphinx, doctree: Any, docname: str) -> None:
        timing.write_started[docname] = time.perf_counter()

    app.connect("builder-inited", lambda app: _wrap_builder(app, timing), priority=first)
    app.connect("env-before-read-docs", lambda *_: timing.mark("read_start"), priority=first)
    app.connect("env-updated", lambda *_: timing.mark("read_end"), priority=first)
    app.connect("doctree-resolved", doctree_resolved, priority=first)
    app.connect("build-finished", lambda app, exc: _write_report(app, timing, exc), priority=last)
    return timing
