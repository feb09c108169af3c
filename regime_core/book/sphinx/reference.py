"""The reference pages generated from the code: the ``regime`` command, the API, the metrics.

- ``regime-cli``: the ``--help`` of ``regime`` and every subcommand, from its argparse parser,
  with the help's reST markup dropped (a help text is shown as it is printed).
- ``regime-api-index``: every wing of the package with its modules, linked to their pages.
- ``regime-api WING``: autodoc of every public module of one wing (:func:`api_wings`: the
  sub-packages ``data``, ``router``, ..., and ``core`` for the top-level modules); without an
  argument, of every public module.
- ``regime-metrics-glossary``: a glossary from :func:`regime_core.metrics.glossary`.

Cross-references autodoc cannot resolve by itself (a re-exported name, an unqualified class
name) are resolved within ``regime_core`` by :func:`resolve_unqualified`.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import os
import pkgutil
import re
from pathlib import Path
from typing import Any, ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles

from regime_core.book.sphinx.markup import as_plain
from regime_core.book.sphinx.records import warn

#: modules the API pages leave out: the CLI has its own page, and this extension is machinery
API_EXCLUDED_PREFIXES: tuple[str, ...] = ("regime_core.cli", "regime_core.book.sphinx")
#: the API page of the package's top-level modules (every sub-package has a page of its own)
CORE_WING = "core"
HELP_WIDTH = 88  # a fixed width keeps the CLI page identical whatever the terminal's size


def parse_rst(directive: SphinxDirective, lines: list[str]) -> list[nodes.Node]:
    """Parse generated reST (with section titles) in place of the directive."""
    content = StringList(lines, source=f"<{directive.name} generated>")
    holder = nodes.section()
    holder.document = directive.state.document
    nested_parse_with_titles(directive.state, content, holder)
    return list(holder.children)


# --- the command line ----------------------------------------------------------------------------


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
    """reST: one section per command and subcommand with its ``--help`` text (markup-free)."""
    lines: list[str] = []
    for title, sub in _subcommand_parsers(parser, parser.prog):
        lines += [title, underline * len(title), "", ".. code-block:: text", ""]
        help_text = as_plain(_help_at_width(sub, width=HELP_WIDTH))
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
            warn(self.env, f"cannot build the regime parser: {err!r}", self.get_location(), "cli")
            return []
        # The help text lives in the CLI modules: an edit there must rebuild this page.
        from regime_core import cli

        for path in sorted(Path(cli.__file__).parent.glob("*.py")):
            self.env.note_dependency(str(path))
        return parse_rst(self, cli_reference_lines(parser))


# --- the API -------------------------------------------------------------------------------------


def public_modules(package: str = "regime_core") -> list[str]:
    """Every importable module of the package that the API pages document, sorted."""
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


def api_wings(package: str = "regime_core") -> dict[str, list[str]]:
    """The API pages: ``{wing: modules}``, ``core`` first (the package and its top-level
    modules), then every sub-package with its modules, by name."""
    wings: dict[str, list[str]] = {CORE_WING: []}
    for module in public_modules(package):
        parts = module.split(".")
        top = ".".join(parts[:2])
        is_package = hasattr(importlib.import_module(top), "__path__")
        wing = parts[1] if len(parts) > 1 and is_package else CORE_WING
        wings.setdefault(wing, []).append(module)
    return {CORE_WING: wings.pop(CORE_WING), **dict(sorted(wings.items()))}


def wing_package(wing: str | None, package: str = "regime_core") -> str | None:
    """The package a wing's page documents first: ``data`` -> ``regime_core.data``."""
    if wing is None:
        return None
    return package if wing == CORE_WING else f"{package}.{wing}"


def first_sentence(doc: str | None) -> str:
    """The first sentence of a docstring (its first paragraph up to the first full stop)."""
    paragraph = " ".join(inspect.cleandoc(doc or "").split("\n\n", 1)[0].split())
    match = re.search(r"^(.+?[.!?])(?=\s+[A-Z(`*]|$)", paragraph)
    return match.group(1) if match else paragraph


class ApiReferenceDirective(SphinxDirective):
    """``automodule`` with members for every public module of one wing (or of them all)."""

    optional_arguments = 1

    def run(self) -> list[nodes.Node]:
        wings = api_wings()
        if self.arguments and self.arguments[0] not in wings:
            warn(
                self.env,
                f"regime-api: no wing {self.arguments[0]!r}; wings: {', '.join(wings)}",
                self.get_location(),
                "api",
            )
            return []
        modules = wings[self.arguments[0]] if self.arguments else public_modules()
        lines: list[str] = []
        wing = self.arguments[0] if self.arguments else None
        for module in modules:
            # a wing's page is titled by its package: the package needs no section of its own
            if module != wing_package(wing):
                lines += [f"``{module}``", "-" * (len(module) + 4), ""]
            # ignore-module-all: a package's re-exports are documented in their own module
            lines += [f".. automodule:: {module}", "   :members:", "   :ignore-module-all:", ""]
        return parse_rst(self, lines)


class ApiIndexDirective(SphinxDirective):
    """Every wing of the API, linked to its page, with the first sentence of each module's
    docstring. ``:pages:`` is the folder of the wing pages, relative to this page."""

    option_spec: ClassVar[dict[str, Any]] = {"pages": directives.unchanged}

    def run(self) -> list[nodes.Node]:
        folder = self.options.get("pages", "api").strip("/")
        lines: list[str] = []
        for wing, modules in api_wings().items():
            lines.append(f":doc:`{folder}/{wing}`")
            for module in modules:
                short = module.removeprefix("regime_core.") if module != "regime_core" else module
                summary = first_sentence(importlib.import_module(module).__doc__)
                lines += [f"   - :mod:`{short} <{module}>`: {summary}"]
            lines.append("")
        return parse_rst(self, lines)


def skip_foreign_members(
    app: Sphinx, what: str, name: str, obj: Any, skip: bool, options: Any
) -> bool | None:
    """Skip members defined outside ``regime_core`` (e.g. scikit-learn's ``set_*_request``)."""
    module = getattr(obj, "__module__", None)
    if isinstance(module, str) and callable(obj) and not module.startswith("regime_core"):
        return True
    return None


#: attribute docstrings as autodoc read them, by name, until napoleon has been through them
_ATTRIBUTE_DOCS: dict[str, list[str]] = {}


def keep_attribute_docs(
    app: Sphinx, what: str, name: str, obj: Any, options: Any, lines: list[str]
) -> None:
    """Before napoleon: remember an attribute's docstring. It is its meaning in plain words
    (``regime_core.config.meaning``), which napoleon would cut at its first colon into a type."""
    if what in ("attribute", "data"):
        _ATTRIBUTE_DOCS[name] = list(lines)


def restore_attribute_docs(
    app: Sphinx, what: str, name: str, obj: Any, options: Any, lines: list[str]
) -> None:
    """After napoleon: put the attribute's docstring back as it was written."""
    if what in ("attribute", "data") and name in _ATTRIBUTE_DOCS:
        lines[:] = _ATTRIBUTE_DOCS.pop(name)


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


def resolve_unqualified(
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


# --- the metrics ---------------------------------------------------------------------------------


def _rst_escape(text: str) -> str:
    return re.sub(r"([\\`*_|<>\[\]])", r"\\\1", text)


class MetricsGlossaryDirective(SphinxDirective):
    """A Sphinx glossary of the metrics, generated from ``regime_core.metrics.glossary()``."""

    def run(self) -> list[nodes.Node]:
        from regime_core import metrics

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
        return parse_rst(self, lines)
