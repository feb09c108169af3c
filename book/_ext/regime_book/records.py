"""Numbers, tables and figures of the prose, read from the results records.

MyST-NB's ``glue`` cannot read across separately executed notebooks, so the book reads the
records the notebooks wrote (:mod:`regime_core.runner.records`) instead.

Role ``{rec}`` (MyST) / ``:rec:`` (reST)::

    The union arm gains {rec}`t2_minilm:cells.B-dominant.delta_hit@5|pp` in the B-dominant cell.

The text is ``run_id:dotted.key`` with an optional ``|kind`` or ``|kind:digits`` (see
:func:`regime_core.runner.wording.format_number`; default ``auto``). The record is read from
``<work>/results/<run_id>/record.json``; the work directory is the Sphinx option
``regime_work_dir``, else ``REGIME_WORK_DIR``, else ``_build/regime``, and a relative one is taken
relative to the book's root. A missing record or key is a Sphinx warning naming the page, the run
and the key, so a ``-W`` build fails; so is a record that is not the one its run's stamp recorded
(:func:`regime_core.runner.stamps.verify_record`). A page is read again whenever a record it reads
(or any file it noted as a dependency) changes content, whatever the file times say
(:class:`DependencyHashes`).

Directive ``rec-table``: one row per content line ``[label =] [run:]key[|kind]``; the optional
argument is the run for lines without one::

    ```{rec-table} t2_minilm
    :caption: Hop-2 hit@5 by regime
    B-dominant gain = cells.B-dominant.delta_hit@5|pp
    cells.Q-dominant.delta_hit@5|pp
    ```

Directive ``rec-figure``: a figure the record lists, by run and file name, with an optional
caption as content::

    ```{rec-figure} t2_minilm:hit_by_regime
    :alt: hit@5 per regime and arm
    Hit@5 per regime.
    ```
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.environment.collectors import EnvironmentCollector
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective, SphinxRole

from regime_book.tables import table
from regime_core import paths
from regime_core.integrity import read_bytes, sha256_hex
from regime_core.runner.records import (
    MissingNumberError,
    Record,
    get_number,
    load_record,
    record_path,
)
from regime_core.runner.stamps import verify_record
from regime_core.runner.wording import format_number

logger = logging.getLogger(__name__)

_REFERENCE = re.compile(
    r"^\s*(?:(?P<run>[A-Za-z0-9][A-Za-z0-9_-]*):)?(?P<key>[^|:\s][^|]*?)"
    r"(?:\|(?P<kind>[a-z0-9]+)(?::(?P<digits>\d+))?)?\s*$"
)
#: what a failure to read a record can raise; each becomes a warning naming page, run and key
RECORD_PROBLEMS: tuple[type[Exception], ...] = (FileNotFoundError, KeyError, ValueError)


@dataclass(frozen=True)
class RecordReference:
    """A parsed ``run:key|kind:digits`` reference: the run, the dotted key into its numbers, and
    how to format the number (a kind of :data:`~regime_core.vocabulary.NUMBER_KINDS`)."""

    run: str
    key: str
    kind: str = "auto"
    digits: int | None = None


def parse_reference(text: str, default_run: str | None = None) -> RecordReference:
    """Parse ``run:dotted.key|kind:digits``; ``run`` may be omitted when ``default_run`` is given.

    >>> parse_reference("t2:cells.B-dominant.delta_hit@5|pp:2")
    RecordReference(run='t2', key='cells.B-dominant.delta_hit@5', kind='pp', digits=2)
    """
    match = _REFERENCE.match(text)
    if match is None:
        raise ValueError(f"cannot parse record reference {text!r}; expected 'run:key|kind'")
    run = match.group("run") or default_run
    if not run:
        raise ValueError(f"record reference {text!r} names no run; write 'run:key'")
    digits = match.group("digits")
    return RecordReference(
        run=run,
        key=match.group("key").strip(),
        kind=match.group("kind") or "auto",
        digits=None if digits is None else int(digits),
    )


# --- record access -------------------------------------------------------------------------------


def work_dir(app: Sphinx) -> Path:
    """Where the records are: ``regime_work_dir``, else ``REGIME_WORK_DIR``, else
    ``_build/regime``; a relative directory is taken relative to the book's root."""
    work = paths.work_dir(app.config.regime_work_dir or None)
    return work if work.is_absolute() else Path(app.srcdir) / work


def record_file(app: Sphinx, run: str) -> Path:
    """The record file of a run id."""
    return record_path(paths.results_dir(work_dir(app)) / run)


def page_record(env: Any, run: str) -> Record:
    """The record of ``run``, checked against its run's stamp
    (:func:`~regime_core.runner.stamps.verify_record`), cached per build by its content, and
    noted as an input of the page being read (:class:`DependencyHashes`); raises
    :data:`RECORD_PROBLEMS` when it is missing, damaged or not its stamp's."""
    records, _ = page_records(env, [run])
    return records[run]


def page_records(env: Any, runs: Iterable[str]) -> tuple[dict[str, Record], tuple[str, ...]]:
    """The records of ``runs`` (:func:`page_record`) and the sha256 of each, in order: the key
    of what is computed from them alone."""
    cache: dict[Path, tuple[str, Record]] = env.app.__dict__.setdefault("_regime_records", {})
    records, digests = {}, []
    for run in runs:
        file = record_file(env.app, run)
        env.note_dependency(str(file))
        if not file.is_file():
            raise FileNotFoundError(f"no results record at {file}")
        digest = sha256_hex(read_bytes(file))
        hit = cache.get(file)
        if hit is None or hit[0] != digest:
            record = load_record(file)
            verify_record(work_dir(env.app), run, record)
            hit = cache[file] = (digest, record)
        records[run] = hit[1]
        digests.append(digest)
    return records, tuple(digests)


# --- pages reread by content ---------------------------------------------------------------------


def _file_digest(env: Any, dependency: str, seen: dict[str, str] | None = None) -> str:
    path = os.path.join(env.srcdir, dependency)  # an absolute dependency stays itself
    if seen is not None and path in seen:
        return seen[path]
    try:
        digest = sha256_hex(read_bytes(path))
    except OSError:
        digest = "absent"
    if seen is not None:
        seen[path] = digest
    return digest


class PerPageCollector(EnvironmentCollector):
    """Keeps one value per page in the environment's ``attribute`` (a dict by page name): a
    page's value is dropped when it is read again and taken over from a parallel reader."""

    attribute: str = ""

    @classmethod
    def of(cls, env: Any) -> dict[str, Any]:
        """The values kept in ``env``, by page name."""
        values: dict[str, Any] = vars(env).setdefault(cls.attribute, {})
        return values

    def clear_doc(self, app: Sphinx, env: Any, docname: str) -> None:
        self.of(env).pop(docname, None)

    def merge_other(self, app: Sphinx, env: Any, docnames: set[str], other: Any) -> None:
        mine, theirs = self.of(env), self.of(other)
        for docname in docnames:
            if docname in theirs:
                mine[docname] = theirs[docname]


class DependencyHashes(PerPageCollector):
    """Remembers, when a page is read, the sha256 of every file it noted as a dependency (its
    records above all), for :func:`outdated_by_content`."""

    attribute = "regime_dependency_hashes"

    def process_doc(self, app: Sphinx, doctree: nodes.document) -> None:
        env = app.env
        dependencies = sorted(env.dependencies.get(env.docname, ()))
        self.of(env)[env.docname] = {d: _file_digest(env, d) for d in dependencies}


def outdated_by_content(
    app: Sphinx, env: Any, added: set[str], changed: set[str], removed: set[str]
) -> list[str]:
    """The pages to read again because a file they depend on changed content since they were
    read, whatever its modification time says (Sphinx itself compares times only, so a record
    copied with ``cp -p`` or ``rsync -a``, or written under clock skew, would be missed)."""
    hashes = DependencyHashes.of(env)
    seen: dict[str, str] = {}
    outdated = []
    for docname in sorted(env.all_docs):
        if docname in added or docname in changed or docname in removed:
            continue
        recorded = hashes.get(docname)
        if recorded is None:
            if env.dependencies.get(docname):
                outdated.append(docname)  # read before its hashes were kept: once more
            continue
        if any(_file_digest(env, dep, seen) != digest for dep, digest in recorded.items()):
            outdated.append(docname)
    return outdated


def setup_dependency_hashes(app: Sphinx) -> None:
    """Register :class:`DependencyHashes` and :func:`outdated_by_content`."""
    app.add_env_collector(DependencyHashes)
    app.connect("env-get-outdated", outdated_by_content)


def warn(env: Any, message: str, location: Any, subtype: str = "record") -> None:
    """A ``regime`` warning about the page being read (a strict build fails on it)."""
    logger.warning(
        f"page {env.docname!r}: {message}", location=location, type="regime", subtype=subtype
    )


def problem_text(err: BaseException) -> str:
    """Why a record could not be read, in the words of ``err`` (a missing file adds the command
    that produces it, unless its message names it already)."""
    if isinstance(err, FileNotFoundError):
        said = "`regime reproduce" in str(err)
        return str(err) if said else f"{err}; run `regime reproduce` to produce it"
    # a KeyError's str() quotes its message; a missing number's str() is its message
    plain = isinstance(err, KeyError) and err.args and not isinstance(err, MissingNumberError)
    return str(err.args[0]) if plain else str(err)


def warn_problem(env: Any, subject: str, err: BaseException, location: Any) -> None:
    """Warn that ``subject`` (e.g. "run 't2', key 'x'") could not be read, and why."""
    warn(env, f"{subject}: {problem_text(err)}", location)


def page_number(
    env: Any, text: str, location: Any, default_run: str | None = None
) -> tuple[RecordReference | None, str | None]:
    """The reference ``text`` (:func:`parse_reference`) and the formatted number it names, the
    page depending on its run's record; ``None`` for what cannot be had, after a warning saying
    why (a reference that does not parse, a record or key missing)."""
    try:
        ref = parse_reference(text, default_run)
    except ValueError as err:
        warn(env, str(err), location)
        return None, None
    try:
        number = get_number(page_record(env, ref.run), ref.key)
        return ref, format_number(number, ref.kind, ref.digits)
    except RECORD_PROBLEMS as err:
        warn_problem(env, f"run {ref.run!r}, key {ref.key!r}", err, location)
        return ref, None


# --- roles and directives ------------------------------------------------------------------------


class RecordRole(SphinxRole):
    """``{rec}`run:key|kind``` -> the formatted number from the run's record."""

    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        ref, text = page_number(self.env, self.text, self.get_location())
        if text is None:
            shown = self.text if ref is None else f"{ref.run}:{ref.key}"
            return [nodes.literal(self.rawtext, shown)], []
        return [nodes.inline(self.rawtext, text, classes=["regime-number"])], []


class RecordTableDirective(SphinxDirective):
    """A two-column table (label, value) of record numbers."""

    has_content = True
    optional_arguments = 1
    option_spec: ClassVar[dict[str, Any]] = {
        "caption": directives.unchanged,
        "header": directives.unchanged,
    }

    def run(self) -> list[nodes.Node]:
        default_run = self.arguments[0] if self.arguments else None
        header = [h.strip() for h in self.options.get("header", "Quantity, Value").split(",")]
        if len(header) != 2:
            warn(self.env, "rec-table :header: needs two labels", self.get_location())
            header = ["Quantity", "Value"]
        rows: list[tuple[str, str]] = []
        for offset, line in enumerate(self.content):
            if line.strip():
                location = (self.env.docname, self.content_offset + offset + 1)
                rows.append(self._row(line, default_run, location))
        return [
            table(
                header,
                rows,
                widths=(3, 1),
                classes=["regime-record-table"],
                title=self.options.get("caption"),
            )
        ]

    def _row(self, line: str, default_run: str | None, location: Any) -> tuple[str, str]:
        label, _, ref_text = line.rpartition("=") if "=" in line else ("", "", line)
        ref, value = page_number(self.env, ref_text, location, default_run)
        name = label.strip() or (ref_text.strip() if ref is None else ref.key)
        return name, "?" if value is None else value


class RecordFigureDirective(SphinxDirective):
    """A figure listed in a run's record. Its alt text and caption are the ones the figure
    carries (:class:`regime_core.book.figures.Figure`, written into the SVG), so that they say
    what the plotting code draws; ``:alt:`` replaces the alt text, and content, when given, is
    a sentence put before the figure's own caption (the page's reason to show it)."""

    has_content = True
    required_arguments = 1
    option_spec: ClassVar[dict[str, Any]] = {
        "alt": directives.unchanged,
        "width": directives.length_or_percentage_or_unitless,
    }

    def run(self) -> list[nodes.Node]:
        from regime_core.book.figures.encodings import ALT_KEY, CAPTION_KEY, figure_text

        run, _, name = self.arguments[0].partition(":")
        if not name:
            warn(self.env, "rec-figure needs 'run:figure'", self.get_location())
            return []
        try:
            figure_file = find_figure(page_record(self.env, run), name)
        except RECORD_PROBLEMS as err:
            warn_problem(self.env, f"run {run!r}, figure {name!r}", err, self.get_location())
            return []
        absolute = record_file(self.env.app, run).parent / figure_file
        carried = figure_text(absolute)
        alt = self.options.get("alt") or carried.get(ALT_KEY)
        if not alt:
            warn(
                self.env,
                f"run {run!r}, figure {name!r} carries no alt text; give it one (Figure.alt) "
                "or an :alt: option",
                self.get_location(),
            )
            alt = name
        lead = " ".join(line.strip() for line in self.content).strip()
        caption = " ".join(t for t in (lead, carried.get(CAPTION_KEY, "")) if t)
        figure = figure_node(self, absolute, alt, caption, "regime-record-figure")
        if "width" in self.options:
            figure[0]["width"] = self.options["width"]
        return [figure]


def figure_node(
    directive: SphinxDirective, image: Path, alt: str, caption: str, css_class: str
) -> nodes.figure:
    """A figure of the file ``image`` (linked relative to the page) with its alt text and, when
    there is one, its caption (inline markup parsed)."""
    doc_dir = Path(directive.env.doc2path(directive.env.docname)).parent
    uri = Path(os.path.relpath(image, doc_dir)).as_posix()
    figure = nodes.figure("", nodes.image(uri=uri, alt=alt), classes=[css_class])
    if caption:
        parsed, _ = directive.parse_inline(caption)
        figure += nodes.caption(caption, "", *parsed)
    return figure


def figure_alt_text(app: Sphinx, doctree: nodes.document) -> None:
    """Give each image without alt text the alt text its SVG carries (the executed
    notebooks' figures: MyST-NB names them by hash and sets no alt), on ``doctree-read``."""
    from regime_core.book.figures.encodings import ALT_KEY, figure_text

    for image in doctree.findall(nodes.image):
        if image.get("alt"):
            continue
        uri = str(image.get("uri", ""))
        if "://" in uri or not uri:
            continue
        alt = figure_text(Path(app.srcdir) / uri.lstrip("/")).get(ALT_KEY)
        if alt:
            image["alt"] = alt


def find_figure(record: Record, name: str) -> str:
    """The file of the figure ``name`` (file name, or its stem) among those the record lists."""
    figures = [str(f) for f in record.get("figures", [])]
    for figure in figures:
        if name in (figure, Path(figure).stem, Path(figure).name):
            return figure
    raise KeyError(
        f"record {record.get('name', '?')!r} lists no figure {name!r}; it lists: "
        f"{', '.join(figures) or 'none'}"
    )
