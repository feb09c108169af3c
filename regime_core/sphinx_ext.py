"""Sphinx extension: numbers, tables and figures in the book's prose read from results records.

MyST-NB's ``glue`` cannot read across separately executed notebooks, so the book reads the
records the notebooks wrote (:mod:`regime_core.records`) instead. Registered in ``_config.yml``
under ``sphinx: extra_extensions``.

Role ``{rec}`` (MyST) / ``:rec:`` (reST)::

    The union arm gains {rec}`t2_minilm:cells.B-dominant.delta_hit@5|pp` in the B-dominant cell.

The text is ``run_id:dotted.key`` with an optional ``|kind`` or ``|kind:digits`` (see
:func:`regime_core.records.format_number`; default ``auto``). The record is read from
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
"""

from __future__ import annotations

import argparse
import ast
import importlib
import json
import os
import pkgutil
import re
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
from regime_core.records import format_number, get_number, load_record, record_path

logger = logging.getLogger(__name__)

_REFERENCE = re.compile(
    r"^\s*(?:(?P<run>[A-Za-z0-9][A-Za-z0-9_-]*):)?(?P<key>[^|:\s][^|]*?)"
    r"(?:\|(?P<kind>[a-z0-9]+)(?::(?P<digits>\d+))?)?\s*$"
)
#: modules the API page leaves out: the CLI has its own page, and this extension is machinery
API_EXCLUDED_PREFIXES: tuple[str, ...] = ("regime_core.cli", "regime_core.sphinx_ext")
EXECUTED_PAGE_PREFIX = "book/executed/"


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
    app.add_directive("rec-table", RecordTableDirective)
    app.add_directive("rec-figure", RecordFigureDirective)
    app.add_directive("regime-cli", CliReferenceDirective)
    app.add_directive("regime-api", ApiReferenceDirective)
    app.add_directive("regime-metrics-glossary", MetricsGlossaryDirective)
    app.add_directive("regime-config-defaults", ConfigDefaultsDirective)
    app.connect("autodoc-skip-member", _skip_foreign_members)
    app.connect("missing-reference", _resolve_unqualified)
    # after the theme has built its buttons (default priority 500)
    app.connect("html-page-context", _launch_sources, priority=900)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
