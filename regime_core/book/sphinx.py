"""Sphinx extension: numbers, tables and figures in the book's prose read from results records.

MyST-NB's ``glue`` cannot read across separately executed notebooks, so the book reads the
records the notebooks wrote (:mod:`~regime_core.runner.records`) instead. Registered in
``_config.yml``
under ``sphinx: extra_extensions``.

Role ``{rec}`` (MyST) / ``:rec:`` (reST)::

    The union arm gains {rec}`t2_minilm:cells.B-dominant.delta_hit@5|pp` in the B-dominant cell.

The text is ``run_id:dotted.key`` with an optional ``|kind`` or ``|kind:digits`` (see
:func:`regime_core.runner.records.format_number`; default ``auto``). The record is read from
``<work>/results/<run_id>/record.json``; the work directory is the Sphinx option
``regime_work_dir``, else ``REGIME_WORK_DIR``, else ``_build/regime``, and a relative one is taken
relative to the book's root. A missing record or key is a Sphinx warning naming the page, the run
and the key, so a ``-W`` build fails.

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

Reference directives used by ``book/reference``: ``regime-cli`` (the help of every ``regime``
subcommand, from the argparse parser), ``regime-api`` (autodoc of every public module of
``regime_core``) and ``regime-metrics-glossary`` (from ``regime_core.metrics.glossary()``).

Named choices and defaults, read from the code (never typed in prose): the role ``{default}``
renders a module-level value (``{default}`regime_core.config.ALPHA``` -> ``0.25``), and the
directive ``regime-choices`` renders one table per content line naming a config dataclass, a
mapping of rule names to explanations, a function or a constant (:func:`describe_choice`)::

    ```{regime-choices}
    regime_core.schema.HOP_ORDER_RULES
    regime_core.data.regimes.RegimeRules
    ```

Directive ``regime-router-demo``: the live router (``regime_core/resources/router.js``, served
from ``_static``) with presets, and a static table of their decisions by the Python router.

Directive ``regime-paper-claims``: the paper's claims (``paper_claims.yml``) against our numbers
from the records, with the verdict :func:`regime_core.runner.judge.judge_claim` computes.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import importlib
import inspect
import json
import os
import pkgutil
import re
import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective, SphinxRole
from sphinx.util.nodes import nested_parse_with_titles

from regime_core import paths
from regime_core.runner.records import format_number, get_number, load_record, record_path

logger = logging.getLogger(__name__)

_REFERENCE = re.compile(
    r"^\s*(?:(?P<run>[A-Za-z0-9][A-Za-z0-9_-]*):)?(?P<key>[^|:\s][^|]*?)"
    r"(?:\|(?P<kind>[a-z0-9]+)(?::(?P<digits>\d+))?)?\s*$"
)
#: modules the API page leaves out: the CLI has its own page, and this extension is machinery
API_EXCLUDED_PREFIXES: tuple[str, ...] = ("regime_core.cli", "regime_core.book.sphinx")
EXECUTED_PAGE_PREFIX = f"{paths.BOOK_EXECUTED_DIR}/"


@dataclass(frozen=True)
class RecordReference:
    """A parsed ``run:key|kind:digits`` reference."""

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


def _work_dir(app: Sphinx) -> Path:
    configured = app.config.regime_work_dir or None
    work = paths.work_dir(configured)
    return work if work.is_absolute() else Path(app.srcdir) / work


def _record_file(app: Sphinx, run: str) -> Path:
    return record_path(paths.results_dir(_work_dir(app)) / run)


def _load(app: Sphinx, run: str) -> dict[str, Any]:
    """A record by run id, cached per build (keyed by file modification time)."""
    file = _record_file(app, run)
    cache: dict[Path, tuple[float, dict[str, Any]]] = app.__dict__.setdefault("_regime_records", {})
    mtime = file.stat().st_mtime if file.is_file() else -1.0
    hit = cache.get(file)
    if hit is not None and hit[0] == mtime:
        return hit[1]
    record = load_record(file)  # FileNotFoundError / ValueError are reported by the caller
    cache[file] = (mtime, record)
    return record


def resolve_reference(app: Sphinx, ref: RecordReference) -> str:
    """The formatted number a reference points at (raises on any problem)."""
    record = _load(app, ref.run)
    return format_number(get_number(record, ref.key), ref.kind, ref.digits)


def _warn(message: str, location: Any) -> None:
    logger.warning(message, location=location, type="regime", subtype="record")


def _problem_text(err: BaseException) -> str:
    if isinstance(err, FileNotFoundError):
        return f"{err}; run `regime reproduce` to produce it"
    return err.args[0] if isinstance(err, KeyError) and err.args else str(err)


class RecordRole(SphinxRole):
    """``{rec}`run:key|kind``` -> the formatted number from the run's record."""

    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        try:
            ref = parse_reference(self.text)
        except ValueError as err:
            _warn(f"page {self.env.docname!r}: {err}", self.get_location())
            return [nodes.literal(self.rawtext, self.text)], []
        self.env.note_dependency(str(_record_file(self.env.app, ref.run)))
        try:
            text = resolve_reference(self.env.app, ref)
        except (FileNotFoundError, KeyError, ValueError) as err:
            _warn(
                f"page {self.env.docname!r}: run {ref.run!r}, key {ref.key!r}: "
                f"{_problem_text(err)}",
                self.get_location(),
            )
            return [nodes.literal(self.rawtext, f"{ref.run}:{ref.key}")], []
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
            _warn(
                f"page {self.env.docname!r}: rec-table :header: needs two labels",
                self.get_location(),
            )
            header = ["Quantity", "Value"]
        rows: list[tuple[str, str]] = []
        for offset, line in enumerate(self.content):
            if not line.strip():
                continue
            label, _, ref_text = line.rpartition("=") if "=" in line else ("", "", line)
            location = (self.env.docname, self.content_offset + offset + 1)
            try:
                ref = parse_reference(ref_text, default_run)
            except ValueError as err:
                _warn(f"page {self.env.docname!r}: {err}", location)
                continue
            self.env.note_dependency(str(_record_file(self.env.app, ref.run)))
            try:
                value = resolve_reference(self.env.app, ref)
            except (FileNotFoundError, KeyError, ValueError) as err:
                _warn(
                    f"page {self.env.docname!r}: run {ref.run!r}, key {ref.key!r}: "
                    f"{_problem_text(err)}",
                    location,
                )
                value = "?"
            rows.append((label.strip() or ref.key, value))
        table = _two_column_table(header, rows)
        if "caption" in self.options:
            title = nodes.title(self.options["caption"], self.options["caption"])
            table.insert(0, title)
        table["classes"].append("regime-record-table")
        return [table]


def _two_column_table(header: list[str], rows: list[tuple[str, str]]) -> nodes.table:
    table = nodes.table()
    group = nodes.tgroup(cols=2)
    table += group
    group += nodes.colspec(colwidth=3)
    group += nodes.colspec(colwidth=1)

    def row(cells: tuple[str, str] | list[str]) -> nodes.row:
        out = nodes.row()
        for cell in cells:
            entry = nodes.entry()
            entry += nodes.paragraph(text=cell)
            out += entry
        return out

    head = nodes.thead()
    head += row(header)
    body = nodes.tbody()
    for r in rows:
        body += row(r)
    group += head
    group += body
    return table


class RecordFigureDirective(SphinxDirective):
    """A figure listed in a run's record; the content becomes the caption."""

    has_content = True
    required_arguments = 1
    option_spec: ClassVar[dict[str, Any]] = {
        "alt": directives.unchanged,
        "width": directives.length_or_percentage_or_unitless,
    }

    def run(self) -> list[nodes.Node]:
        run, _, name = self.arguments[0].partition(":")
        if not name:
            _warn(f"page {self.env.docname!r}: rec-figure needs 'run:figure'", self.get_location())
            return []
        self.env.note_dependency(str(_record_file(self.env.app, run)))
        try:
            record = _load(self.env.app, run)
            figure_file = _find_figure(record, name)
        except (FileNotFoundError, KeyError, ValueError) as err:
            _warn(
                f"page {self.env.docname!r}: run {run!r}, figure {name!r}: {_problem_text(err)}",
                self.get_location(),
            )
            return []
        absolute = _record_file(self.env.app, run).parent / figure_file
        doc_dir = Path(self.env.doc2path(self.env.docname)).parent
        uri = Path(os.path.relpath(absolute, doc_dir)).as_posix()
        image = nodes.image(uri=uri, alt=self.options.get("alt", name))
        if "width" in self.options:
            image["width"] = self.options["width"]
        figure = nodes.figure("", image, classes=["regime-record-figure"])
        if self.content:
            caption_text = " ".join(line.strip() for line in self.content).strip()
            parsed, _ = self.state.inline_text(caption_text, self.lineno)
            figure += nodes.caption(caption_text, "", *parsed)
        return [figure]


def _find_figure(record: dict[str, Any], name: str) -> str:
    figures = [str(f) for f in record.get("figures", [])]
    for figure in figures:
        if name in (figure, Path(figure).stem, Path(figure).name):
            return figure
    raise KeyError(
        f"record {record.get('name', '?')!r} lists no figure {name!r}; it lists: "
        f"{', '.join(figures) or 'none'}"
    )


# --- generated reference pages -------------------------------------------------------------------


def _parse_rst(directive: SphinxDirective, lines: list[str]) -> list[nodes.Node]:
    """Parse generated reST (with section titles) in place of the directive."""
    content = StringList(lines, source=f"<{directive.name} generated>")
    holder = nodes.section()
    holder.document = directive.state.document
    nested_parse_with_titles(directive.state, content, holder)
    return list(holder.children)


def _subcommand_parsers(
    parser: argparse.ArgumentParser, prefix: str
) -> list[tuple[str, argparse.ArgumentParser]]:
    found: list[tuple[str, argparse.ArgumentParser]] = [(prefix, parser)]
    for action in parser._actions:  # argparse exposes subparsers only through _actions
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += _subcommand_parsers(sub, f"{prefix} {name}")
    return found


def cli_reference_lines(parser: argparse.ArgumentParser, underline: str = "-") -> list[str]:
    """reST: one section per command and subcommand with its ``--help`` text."""
    lines: list[str] = []
    for title, sub in _subcommand_parsers(parser, parser.prog):
        lines += [title, underline * len(title), "", ".. code-block:: text", ""]
        # a fixed width keeps the page identical whatever the terminal's size
        help_text = _help_at_width(sub, width=88)
        lines += [f"   {line}" if line else "" for line in help_text.splitlines()]
        lines.append("")
    return lines


def _help_at_width(parser: argparse.ArgumentParser, width: int) -> str:
    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(width)
    try:
        return parser.format_help()
    finally:
        if previous is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = previous


class CliReferenceDirective(SphinxDirective):
    """The help of ``regime`` and every subcommand, generated from the argparse parser."""

    def run(self) -> list[nodes.Node]:
        try:
            from regime_core.cli import build_parser

            parser = build_parser()
        except Exception as err:  # any failure to build the parser is a broken CLI page
            logger.warning(
                f"page {self.env.docname!r}: cannot build the regime parser: {err!r}",
                location=self.get_location(),
                type="regime",
                subtype="cli",
            )
            return []
        # The help text lives in the CLI modules: an edit there must rebuild this page.
        from regime_core import cli

        for path in sorted(Path(cli.__file__).parent.glob("*.py")):
            self.env.note_dependency(str(path))
        return _parse_rst(self, cli_reference_lines(parser))


def public_modules(package: str = "regime_core") -> list[str]:
    """Every importable module of the package that the API page documents, sorted."""
    root = importlib.import_module(package)
    names = [package]
    for info in pkgutil.walk_packages(root.__path__, prefix=f"{package}."):
        parts = info.name.split(".")
        if any(part.startswith("_") for part in parts):
            continue
        if info.name.startswith(API_EXCLUDED_PREFIXES):
            continue
        names.append(info.name)
    return sorted(names)


class ApiReferenceDirective(SphinxDirective):
    """``automodule`` with members for every public module of ``regime_core``."""

    def run(self) -> list[nodes.Node]:
        lines: list[str] = []
        for module in public_modules():
            lines += [f"``{module}``", "-" * (len(module) + 4), ""]
            # ignore-module-all: a package's re-exports are documented in their own module
            lines += [f".. automodule:: {module}", "   :members:", "   :ignore-module-all:", ""]
        return _parse_rst(self, lines)


def _skip_foreign_members(
    app: Sphinx, what: str, name: str, obj: Any, skip: bool, options: Any
) -> bool | None:
    """Skip members defined outside ``regime_core`` (e.g. scikit-learn's ``set_*_request``)."""
    module = getattr(obj, "__module__", None)
    if isinstance(module, str) and callable(obj) and not module.startswith("regime_core"):
        return True
    return None


def _canonical_name(dotted: str) -> str | None:
    """Where a ``regime_core`` name is defined: ``regime_core.data.load_examples`` ->
    ``regime_core.data.prepare.load_examples`` (re-exports are documented where defined)."""
    parts = dotted.split(".")
    for split in range(len(parts) - 1, 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        try:
            for attribute in parts[split:]:
                obj = getattr(obj, attribute)
        except AttributeError:
            return None
        module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
        return f"{module}.{qualname}" if module and qualname else None
    return None


def _resolve_unqualified(
    app: Sphinx, env: Any, node: Any, contnode: nodes.Node
) -> nodes.Node | None:
    """Resolve references autodoc's own lookup misses, within ``regime_core`` only.

    ``:func:`regime_core.data.load_examples``` (a re-export) resolves to where the function is
    defined; ``:class:`Example``` resolves to the one documented ``regime_core`` object so named.
    """
    if node.get("refdomain") != "py":
        return None
    domain = env.get_domain("py")
    target = node["reftarget"].lstrip("~.")
    module = node.get("py:module")
    candidates = [target, f"{module}.{target}"] if module else [target]
    matches = [
        name
        for name in (_canonical_name(c) for c in candidates if c.startswith("regime_core."))
        if name in domain.objects
    ]
    if not matches and "." not in target:
        matches = [
            full
            for full in domain.objects
            if full.startswith("regime_core.") and full.endswith("." + target)
        ]
    if len(set(matches)) != 1:
        return None
    retry = node.deepcopy()
    retry["reftarget"] = matches[0]
    retry["refspecific"] = False
    return domain.resolve_xref(
        env, node["refdoc"], app.builder, node["reftype"], matches[0], retry, contnode
    )


def _rst_escape(text: str) -> str:
    return re.sub(r"([\\`*_|<>\[\]])", r"\\\1", text)


class MetricsGlossaryDirective(SphinxDirective):
    """A Sphinx glossary of the metrics, generated from ``regime_core.metrics.glossary()``."""

    def run(self) -> list[nodes.Node]:
        try:
            metrics = importlib.import_module("regime_core.metrics")
        except ModuleNotFoundError as err:
            if err.name != "regime_core.metrics":
                raise
            note = nodes.note()
            note += nodes.paragraph(text="The metrics module is not available yet.")
            return [note]
        lines = [".. glossary::", "   :sorted:", ""]
        for row in metrics.glossary():
            lines += [f"   {_rst_escape(row['metric'])}"]
            lines += [f"      {_rst_escape(row['meaning'])}.", ""]
            for label in ("formula", "example"):
                if row.get(label):
                    lines += [f"      {label.capitalize()}: ``{row[label]}``", ""]
            facts = [f"range {row['range']}", f"{row['better']} is better"]
            if row.get("same as"):
                facts.append(f"same as {row['same as']}")
            lines += [f"      {_rst_escape('; '.join(facts))}.", ""]
        return _parse_rst(self, lines)


def config_defaults(module_name: str = "regime_core.config") -> list[tuple[str, str, str]]:
    """(name, value, comment) for every upper-case module-level constant, in source order.

    The comment is the ``# ...`` at the end of the constant's line (its reason, if any).
    """
    module = importlib.import_module(module_name)
    source = Path(module.__file__ or "").read_text(encoding="utf-8")
    rows: list[tuple[str, str, str]] = []
    for node in ast.parse(source).body:
        target = node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
        if not isinstance(target, ast.Name) or not target.id.isupper():
            continue
        # the comment after the value on its last line (a '#' inside the value does not count)
        last_line = source.splitlines()[(node.end_lineno or node.lineno) - 1]
        after = last_line[node.end_col_offset or 0 :]
        comment = after.split("#", 1)[1].strip() if "#" in after else ""
        rows.append((target.id, repr(getattr(module, target.id)), comment))
    return rows


class ConfigDefaultsDirective(SphinxDirective):
    """A table of the defaults in ``regime_core.config`` (name, value, why)."""

    def run(self) -> list[nodes.Node]:
        self.env.note_dependency(str(Path(paths.__file__).with_name("config.py")))
        rows = config_defaults()
        table = nodes.table(classes=["regime-config-defaults"])
        group = nodes.tgroup(cols=3)
        table += group
        for width in (2, 2, 5):
            group += nodes.colspec(colwidth=width)
        head, body = nodes.thead(), nodes.tbody()
        for target, cells in ((head, [("Name", "Default", "Note")]), (body, rows)):
            for cells_row in cells:
                row = nodes.row()
                for index, cell in enumerate(cells_row):
                    entry = nodes.entry()
                    para = nodes.paragraph()
                    is_code = target is body and index < 2
                    para += nodes.literal(text=cell) if is_code else nodes.Text(cell)
                    entry += para
                    row += entry
                target += row
        group += head
        group += body
        return [table]


# --- named choices ("Our reading of the paper") --------------------------------------------------

_FIELD_ITEM = re.compile(r"^\s*(?:[-*]\s+)?((?:``\w+``\s*/?\s*)+):\s*(.*)$")


@dataclass(frozen=True)
class ChoiceTable:
    """A named choice read from code: its dotted name, a summary and rows of (name, value, note).

    ``value`` is ``None`` for the rows of a mapping of names to explanations (two columns).
    """

    name: str
    summary: str
    rows: tuple[tuple[str, str | None, str], ...]


def _import_dotted(dotted: str) -> tuple[Any, Any, str]:
    """``(object, module it was found in, attribute path)`` for ``package.module.attr.sub``."""
    parts = dotted.split(".")
    for split in range(len(parts) - 1, 0, -1):
        try:
            module = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        obj: Any = module
        for attribute in parts[split:]:
            if not hasattr(obj, attribute):
                raise ValueError(f"{'.'.join(parts[:split])} has no attribute {attribute!r}")
            obj = getattr(obj, attribute)
        return obj, module, ".".join(parts[split:])
    raise ValueError(f"cannot import any module of {dotted!r}")


def _first_paragraph(doc: str | None) -> str:
    text = inspect.cleandoc(doc or "")
    return " ".join(text.split("\n\n", 1)[0].split())


def _field_docs(doc: str | None) -> dict[str, str]:
    """``name -> text`` from docstring items written ``name``: text (or ``- ``name``: text``)."""
    found: dict[str, str] = {}
    current: list[str] = []
    text_lines: list[str] = []

    def flush() -> None:
        for name in current:
            found.setdefault(name, " ".join(" ".join(text_lines).split()))

    for line in inspect.cleandoc(doc or "").splitlines():
        match = _FIELD_ITEM.match(line)
        if match:
            flush()
            current = re.findall(r"``(\w+)``", match.group(1))
            text_lines = [match.group(2)]
        elif current and line.strip() and not line.lstrip().startswith(("- ", "* ", ">>>")):
            text_lines.append(line.strip())
        else:
            flush()
            current, text_lines = [], []
    flush()
    return found


def _source_comments(source: str, first: int, last: int) -> tuple[str, str]:
    """(comment block right above line ``first``, comment after the code on line ``last``)."""
    lines = source.splitlines()
    above: list[str] = []
    index = first - 2
    while index >= 0 and lines[index].lstrip().startswith("#"):
        comment = lines[index].strip().lstrip("#").removeprefix(":").strip()  # '#:' doc comments
        if not comment.startswith("---"):  # a section banner, not about this assignment
            above.insert(0, comment)
        index -= 1
    after: list[str] = []
    for line in lines[first - 1 : last]:
        comment = line.split("#", 1)[1].strip() if "#" in line else ""
        if comment and not comment.startswith(("fmt:", "type:", "noqa", "pragma")):
            after.append(comment)
    return " ".join(above), " ".join(after)


def _module_assignment(module: Any, name: str) -> tuple[str, ast.AST] | None:
    try:
        source = inspect.getsource(module)
    except (OSError, TypeError):
        return None
    for node in ast.parse(source).body:
        target = node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
        if isinstance(target, ast.Name) and target.id == name:
            return source, node
    return None


def _show_value(value: Any) -> str:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        default = type(value)()  # type: ignore[call-arg]
        return f"{type(value).__name__}()" if value == default else repr(value)
    return repr(value)


def _dataclass_rows(cls: type) -> list[tuple[str, str | None, str]]:
    docs = _field_docs(cls.__doc__)
    try:
        source = inspect.getsource(cls)
        tree: ast.AST | None = ast.parse(textwrap.dedent(source))
    except (OSError, TypeError, SyntaxError):
        source, tree = "", None
    comments: dict[str, str] = {}
    if tree is not None:
        class_node = next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef))
        for node in class_node.body:
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                above, after = _source_comments(
                    textwrap.dedent(source), node.lineno, node.end_lineno or node.lineno
                )
                comments[node.target.id] = " ".join(x for x in (after, above) if x)
    rows: list[tuple[str, str | None, str]] = []
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            value = _show_value(f.default)
        elif f.default_factory is not dataclasses.MISSING:
            value = _show_value(f.default_factory())
        else:
            value = "(required)"
        note = " ".join(x for x in (docs.get(f.name, ""), comments.get(f.name, "")) if x)
        rows.append((f.name, value, note))
    return rows


def describe_choice(dotted: str) -> ChoiceTable:
    """Read a named choice from the code for the "Our reading of the paper" page.

    ``dotted`` names a frozen config dataclass (one row per field: default, and the field's
    ``name``: text item in the class docstring or its source comment), a mapping of names to
    explanations (one row per entry), a function (its signature and the first paragraph of its
    docstring; ``name()`` calls a function without arguments and shows what it returns), or any
    other module-level constant (its value and source comment; a tuple whose elements carry
    comments gets one row per element).
    """
    call = dotted.endswith("()")
    target = dotted[:-2] if call else dotted
    obj, module, attribute = _import_dotted(target)
    if call:
        if not callable(obj):
            raise ValueError(f"{target} is not callable")
        result = obj()
        return ChoiceTable(dotted, _first_paragraph(obj.__doc__), ((dotted, None, str(result)),))
    if isinstance(obj, type) and dataclasses.is_dataclass(obj):
        return ChoiceTable(dotted, _first_paragraph(obj.__doc__), tuple(_dataclass_rows(obj)))
    if inspect.isfunction(obj):
        signature = f"{obj.__name__}{inspect.signature(obj)}"
        return ChoiceTable(dotted, "", ((signature, None, _first_paragraph(obj.__doc__)),))
    found = _module_assignment(module, attribute) if "." not in attribute else None
    above, after = ("", "")
    element_notes: list[tuple[str, str]] = []
    if found is not None:
        source, node = found
        above, after = _source_comments(source, node.lineno, node.end_lineno or node.lineno)
        value_node = getattr(node, "value", None)
        if isinstance(value_node, ast.Tuple) and isinstance(obj, tuple):
            for element, element_node in zip(obj, value_node.elts, strict=False):
                _, note = _source_comments(source, element_node.lineno, element_node.lineno)
                element_notes.append((repr(element), note))
    summary = " ".join(x for x in (above, after) if x)
    if isinstance(obj, Mapping) and all(isinstance(v, str) for v in obj.values()):
        return ChoiceTable(dotted, summary, tuple((str(k), None, v) for k, v in obj.items()))
    if element_notes and any(note for _, note in element_notes):
        return ChoiceTable(dotted, above, tuple((v, None, n) for v, n in element_notes))
    return ChoiceTable(dotted, "", ((attribute, _show_value(obj), summary),))


def _choice_nodes(
    choice: ChoiceTable, inline: Callable[[str], list[nodes.Node]]
) -> list[nodes.Node]:
    """Nodes of a choice table; ``inline`` renders reST inline markup (docstrings use it)."""
    two_columns = all(value is None for _, value, _ in choice.rows)
    header = ("Name", "Meaning") if two_columns else ("Name", "Default", "Meaning")
    widths = (3, 7) if two_columns else (3, 3, 5)
    table = nodes.table(classes=["regime-choices"])
    title = nodes.title()
    title += nodes.literal(text=choice.name)
    table += title
    group = nodes.tgroup(cols=len(header))
    table += group
    for width in widths:
        group += nodes.colspec(colwidth=width)
    head, body = nodes.thead(), nodes.tbody()
    for target, rows in ((head, [header]), (body, choice.rows)):
        for cells in rows:
            row = nodes.row()
            cells = [c for c in cells if not (two_columns and c is None)]
            for index, cell in enumerate(cells):
                entry = nodes.entry()
                para = nodes.paragraph()
                is_code = target is body and index < len(cells) - 1
                if is_code:
                    para += nodes.literal(text=cell)
                elif target is body:
                    para += inline(str(cell))
                else:
                    para += nodes.Text(str(cell))
                entry += para
                row += entry
            target += row
    group += head
    group += body
    out: list[nodes.Node] = []
    if choice.summary:
        summary = nodes.paragraph()
        summary += inline(choice.summary)
        out.append(summary)
    out.append(table)
    return out


class ChoicesDirective(SphinxDirective):
    """One table per content line: a named choice read from the code (:func:`describe_choice`)."""

    has_content = True

    def _inline(self, text: str, lineno: int) -> list[nodes.Node]:
        parsed, messages = self.state.inline_text(text, lineno)
        return [*parsed, *messages]

    def run(self) -> list[nodes.Node]:
        out: list[nodes.Node] = []
        for offset, line in enumerate(self.content):
            dotted = line.strip()
            if not dotted:
                continue
            location = (self.env.docname, self.content_offset + offset + 1)
            try:
                choice = describe_choice(dotted)
                _, module, _ = _import_dotted(dotted.removesuffix("()"))
                if getattr(module, "__file__", None):
                    self.env.note_dependency(str(module.__file__))
            except Exception as err:  # any failure to read the code is a broken page
                logger.warning(
                    f"page {self.env.docname!r}: cannot read the choice {dotted!r}: {err}",
                    location=location,
                    type="regime",
                    subtype="choices",
                )
                continue
            lineno = location[1]
            out += _choice_nodes(choice, lambda text, at=lineno: self._inline(text, at))
        return out


class DefaultValueRole(SphinxRole):
    """``{default}`regime_core.config.ALPHA``` -> ``0.25``: a default read from the code.

    For prose that names a parameter's value (alpha, k, the seed) without typing it. ``|frac``
    style formats are accepted after the name, as in ``{rec}``.
    """

    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        dotted, _, kind = self.text.partition("|")
        kind, _, digits = kind.partition(":")
        try:
            value, module, _ = _import_dotted(dotted.strip())
            if getattr(module, "__file__", None):
                self.env.note_dependency(str(module.__file__))
            if kind:
                text = format_number(value, kind, int(digits) if digits else None)
            else:
                text = str(value)
        except (ValueError, TypeError) as err:
            _warn(f"page {self.env.docname!r}: default {self.text!r}: {err}", self.get_location())
            return [nodes.literal(self.rawtext, self.text)], []
        return [nodes.inline(self.rawtext, text, classes=["regime-default"])], []


# --- the paper's claims against ours -------------------------------------------------------------


def _claims_file(app: Sphinx, option: str | None) -> Path:
    if option:
        candidate = Path(option)
        return candidate if candidate.is_absolute() else Path(app.srcdir) / candidate
    beside = Path(app.srcdir) / "paper_claims.yml"
    return beside if beside.is_file() else paths.REPO_ROOT / "paper_claims.yml"


class PaperClaimsDirective(SphinxDirective):
    """The paper's claims against ours, with a computed verdict and its robustness
    (:mod:`regime_core.runner.verdicts`, the same data as ``regime verdicts --json``).

    Reads ``paper_claims.yml`` (beside ``_config.yml``; the ``:file:`` option overrides it),
    each claim's record and the ``robustness`` record. A missing record or key is a warning,
    so a strict build fails. Each claim links to the chapter that holds its evidence.
    """

    option_spec: ClassVar[dict[str, Any]] = {"file": directives.unchanged}

    def run(self) -> list[nodes.Node]:
        from regime_core.paper import load_claims
        from regime_core.runner.judge import VERDICTS
        from regime_core.runner.verdicts import ROBUSTNESS_RUN, judge_claims, robustness_phrase

        file = _claims_file(self.env.app, self.options.get("file"))
        self.env.note_dependency(str(file))
        try:
            claims = load_claims(file)
        except (FileNotFoundError, ValueError) as err:
            _warn(f"page {self.env.docname!r}: {err}", self.get_location())
            return []
        robustness = self._robustness_record(ROBUSTNESS_RUN)
        header = ("Claim", "Paper", "Ours", "Data behind ours", "Verdict", "Robustness")
        table = nodes.table(classes=["regime-paper-claims"])
        title = nodes.title(text="The paper's claims and ours, with computed verdicts")
        table += title
        group = nodes.tgroup(cols=len(header))
        table += group
        for width in (4, 2, 3, 3, 2, 2):
            group += nodes.colspec(colwidth=width)
        head, body = nodes.thead(), nodes.tbody()
        head += self._row([nodes.Text(h) for h in header])
        counts = dict.fromkeys(VERDICTS, 0)
        for claim in claims:
            self.env.note_dependency(str(_record_file(self.env.app, claim.run)))
            try:
                record = _load(self.env.app, claim.run)
                (judged,) = judge_claims({claim.run: record}, [claim], robustness)
            except (FileNotFoundError, KeyError, ValueError) as err:
                _warn(
                    f"page {self.env.docname!r}: claim {claim.id!r}, run {claim.run!r}: "
                    f"{_problem_text(err)}",
                    self.get_location(),
                )
                body += self._row([nodes.Text(t) for t in (claim.claim, "?", "?", "?", "?", "?")])
                continue
            counts[judged.verdict] += 1
            verdict = nodes.inline()
            verdict += nodes.strong(text=judged.verdict)
            verdict += nodes.Text(f" ({judged.judgement.reason})")
            r = judged.robustness
            robust = (
                nodes.Text("not computed")
                if r is None
                else nodes.Text(robustness_phrase(r).replace("reproduced under ", "", 1))
            )
            body += self._row(
                [
                    self._claim_link(claim),
                    nodes.Text(judged.to_dict()["paper"]["text"]),
                    nodes.Text(judged.to_dict()["ours_text"]),
                    nodes.Text(
                        judged.behind + (f"; n = {judged.ours['n']:,}" if judged.ours["n"] else "")
                    ),
                    verdict,
                    robust,
                ],
                verdict_class="regime-verdict-" + judged.verdict.replace(" ", "-"),
            )
        group += head
        group += body
        summary = nodes.paragraph(
            text="Verdicts: " + ", ".join(f"{n} {v}" for v, n in counts.items()) + "."
        )
        return [table, summary]

    def _robustness_record(self, run: str) -> dict[str, Any] | None:
        file = _record_file(self.env.app, run)
        self.env.note_dependency(str(file))
        if not file.is_file():
            _warn(
                f"page {self.env.docname!r}: run {run!r}: {file} does not exist; run "
                "`regime reproduce` to produce it",
                self.get_location(),
            )
            return None
        return _load(self.env.app, run)

    def _claim_link(self, claim: Any) -> nodes.Node:
        from sphinx import addnodes

        text = f"{claim.claim} ({claim.source})"
        if not claim.chapter:
            return nodes.Text(text)
        ref = addnodes.pending_xref(
            "",
            refdomain="std",
            reftype="doc",
            reftarget="/" + claim.chapter,
            refexplicit=True,
            refdoc=self.env.docname,
        )
        ref += nodes.inline(text=text)
        return ref

    @staticmethod
    def _row(cells: Sequence[nodes.Node | str], verdict_class: str | None = None) -> nodes.row:
        row = nodes.row()
        for index, cell in enumerate(cells):
            entry = nodes.entry()
            para = nodes.paragraph()
            para += nodes.Text(cell) if isinstance(cell, str) else cell
            if index == 4 and verdict_class:
                entry["classes"].append(verdict_class)
            entry += para
            row += entry
        return row


# --- sentences that state a verdict, a direction or a significance ------------------------------


def _judged_claim(env: Any, claim_id: str) -> Any:
    """The :class:`~regime_core.runner.verdicts.ClaimVerdict` of a claim id, from the records."""
    from regime_core.paper import load_claims
    from regime_core.runner.verdicts import ROBUSTNESS_RUN, judge_claims

    file = _claims_file(env.app, None)
    env.note_dependency(str(file))
    claims = {c.id: c for c in load_claims(file)}
    if claim_id not in claims:
        raise KeyError(f"no claim {claim_id!r} in {file}; known: {', '.join(claims)}")
    claim = claims[claim_id]
    env.note_dependency(str(_record_file(env.app, claim.run)))
    robustness_file = _record_file(env.app, ROBUSTNESS_RUN)
    env.note_dependency(str(robustness_file))
    robustness = _load(env.app, ROBUSTNESS_RUN) if robustness_file.is_file() else None
    (judged,) = judge_claims({claim.run: _load(env.app, claim.run)}, [claim], robustness)
    return judged


class ClaimTextRole(SphinxRole):
    """``{verdict}`claim_id``` (the verdict), ``{claim}`claim_id``` (ours, the verdict with its
    reason, the robustness) and ``{robust}`claim_id``` (the robustness alone): sentences of the
    prose generated from the records, so none can contradict its numbers."""

    def __init__(self, kind: str) -> None:
        super().__init__()
        self.kind = kind

    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        from regime_core.runner.verdicts import claim_sentence, robustness_phrase

        try:
            judged = _judged_claim(self.env, self.text.strip())
        except (FileNotFoundError, KeyError, ValueError) as err:
            _warn(
                f"page {self.env.docname!r}: claim {self.text!r}: {_problem_text(err)}",
                self.get_location(),
            )
            return [nodes.literal(self.rawtext, self.text)], []
        if self.kind == "verdict":
            node = nodes.strong(self.rawtext, judged.verdict, classes=["regime-verdict"])
            return [node], []
        text = (
            claim_sentence(judged) if self.kind == "claim" else robustness_phrase(judged.robustness)
        )
        return [nodes.inline(self.rawtext, text, classes=["regime-claim-text"])], []


class ComparisonRole(SphinxRole):
    """``{compare}`run:key``` -> a paired comparison of the record (a node with ``diff``,
    ``ci_lo``, ``ci_hi`` and a p-value) as a phrase that states its direction from the numbers
    (:func:`regime_core.runner.verdicts.comparison_phrase`)."""

    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        from regime_core.runner.verdicts import comparison_phrase

        try:
            ref = parse_reference(self.text)
            self.env.note_dependency(str(_record_file(self.env.app, ref.run)))
            node: Any = _load(self.env.app, ref.run)["numbers"]
            for part in ref.key.split("."):
                node = node[part]
            text = comparison_phrase(node)
        except (FileNotFoundError, KeyError, ValueError, TypeError) as err:
            _warn(
                f"page {self.env.docname!r}: comparison {self.text!r}: {_problem_text(err)}",
                self.get_location(),
            )
            return [nodes.literal(self.rawtext, self.text)], []
        return [nodes.inline(self.rawtext, text, classes=["regime-comparison"])], []


# --- the live router ---------------------------------------------------------------------------

ROUTER_DATASETS: tuple[str, ...] = ("2wikimultihopqa", "hotpotqa", "musique")


class RouterDemoDirective(SphinxDirective):
    """``regime-router-demo``: the router in the reader's browser (``router.js``) with presets,
    and a static table of the presets' decisions by the Python router (what a reader without
    JavaScript sees). Presets come from the toy world and the prepared datasets of the work
    directory; a dataset that is not prepared is a warning, so a strict build fails."""

    option_spec: ClassVar[dict[str, Any]] = {"per-source": directives.positive_int}

    def run(self) -> list[nodes.Node]:
        from regime_core.book.router_demo import STYLE, choose_presets, demo_html, load_model_json
        from regime_core.data import load_examples
        from regime_core.router.model import default_router, default_router_path

        model_path = default_router_path()
        self.env.note_dependency(str(model_path))
        examples = {"toyworld": load_examples("toyworld")}
        for dataset in ROUTER_DATASETS:
            try:
                examples[dataset] = load_examples(dataset, work=_work_dir(self.env.app))
            except (FileNotFoundError, ValueError) as err:
                _warn(f"page {self.env.docname!r}: router presets: {err}", self.get_location())
        presets = choose_presets(
            examples, default_router(), per_source=self.options.get("per-source", 2)
        )
        live = nodes.raw(
            "", STYLE + demo_html(load_model_json(model_path), presets, "regime-router"),
            format="html",
        )  # fmt: skip
        header = ("Preset", "Question", "Bridge title", "B_rel", "Decision", "p(union)")
        rows = [
            (f"{p.source} {p.example_id}", p.question, p.title, p.b_rel, p.action,
             f"{p.probability:.3f}")
            for p in presets
        ]  # fmt: skip
        table = nodes.table(classes=["regime-router-presets"])
        group = nodes.tgroup(cols=len(header))
        table += group
        for width in (2, 4, 2, 4, 1, 1):
            group += nodes.colspec(colwidth=width)
        head, body = nodes.thead(), nodes.tbody()
        head += PaperClaimsDirective._row(header)
        for row in rows:
            body += PaperClaimsDirective._row(row)
        group += head
        group += body
        caption = nodes.paragraph(
            text="The presets and the decision the Python router (regime route) gives each, "
            "computed when this book was built."
        )
        return [live, caption, table]


def _serve_router_js(app: Sphinx, config: Any) -> None:
    """Copy ``regime_core/resources`` (router.js and the model it reads) to ``_static``."""
    resources = Path(__file__).parent / "resources"
    config.html_static_path = [*config.html_static_path, str(resources)]


def _router_js_on_demo_pages(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """Load router.js only on pages that hold the live router."""
    if 'class="regime-router-demo"' in context.get("body", ""):
        from regime_core.book.router_demo import ROUTER_JS

        app.add_js_file(ROUTER_JS)


# --- launch buttons ------------------------------------------------------------------------------


def _launch_sources(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """Point the Binder/Colab buttons of an executed notebook at its source notebook.

    Executed notebooks live in the gitignored ``book/executed``; the runner stores the source's
    path (relative to the repository) in the notebook's ``metadata.regime.source``.
    """
    if not pagename.startswith(EXECUTED_PAGE_PREFIX):
        return
    executed = Path(app.srcdir) / f"{pagename}.ipynb"
    try:
        source = json.loads(executed.read_text(encoding="utf-8"))["metadata"]["regime"]["source"]
    except (OSError, KeyError, TypeError, json.JSONDecodeError):
        return
    old = f"{pagename}.ipynb"

    def rewrite(value: Any) -> Any:
        if isinstance(value, str):  # only launch URLs; the download link stays local
            return value.replace(old, source) if value.startswith("http") else value
        if isinstance(value, list):
            return [rewrite(v) for v in value]
        if isinstance(value, dict):
            return {k: rewrite(v) for k, v in value.items()}
        return value

    if "header_buttons" in context:
        context["header_buttons"] = rewrite(context["header_buttons"])


def _serve_vendored_mathjax(app: Sphinx, config: Any) -> None:
    """Serve MathJax from ``<work>/vendor/mathjax`` when ``regime book`` has vendored it."""
    from regime_core.vendor import MATHJAX_ENTRY

    vendored = _work_dir(app) / "vendor"
    if (vendored / "mathjax" / MATHJAX_ENTRY).is_file():
        config.html_static_path = [*config.html_static_path, str(vendored)]
        config.mathjax_path = f"mathjax/{MATHJAX_ENTRY}"


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value("regime_work_dir", None, "env", types=[str, type(None)])
    app.connect("config-inited", _serve_vendored_mathjax)
    app.add_role("rec", RecordRole())
    app.add_role("verdict", ClaimTextRole("verdict"))
    app.add_role("claim", ClaimTextRole("claim"))
    app.add_role("robust", ClaimTextRole("robust"))
    app.add_role("compare", ComparisonRole())
    app.add_role("default", DefaultValueRole())
    app.add_directive("rec-table", RecordTableDirective)
    app.add_directive("rec-figure", RecordFigureDirective)
    app.add_directive("regime-cli", CliReferenceDirective)
    app.add_directive("regime-api", ApiReferenceDirective)
    app.add_directive("regime-metrics-glossary", MetricsGlossaryDirective)
    app.add_directive("regime-config-defaults", ConfigDefaultsDirective)
    app.add_directive("regime-choices", ChoicesDirective)
    app.add_directive("regime-paper-claims", PaperClaimsDirective)
    app.add_directive("regime-router-demo", RouterDemoDirective)
    app.connect("config-inited", _serve_router_js)
    app.connect("html-page-context", _router_js_on_demo_pages)
    app.connect("autodoc-skip-member", _skip_foreign_members)
    app.connect("missing-reference", _resolve_unqualified)
    # after the theme has built its buttons (default priority 500)
    app.connect("html-page-context", _launch_sources, priority=900)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
