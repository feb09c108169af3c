"""What the reference pages need beyond Sphinx's own tools.

The CLI page is sphinx-argparse's ``argparse`` directive over ``regime_core.cli.build_parser``;
the API pages are ``automodule`` blocks, one page per wing of the package, indexed by
``autosummary`` tables (``book/reference/api.rst``; ``tests/test_book_pages.py`` fails when a
module is missing or doubled). What remains here:

- ``regime-metrics-glossary``: a glossary from :func:`regime_core.metrics.glossary`;
- cross-references autodoc cannot resolve by itself (a re-exported name, an unqualified class
  name), resolved within ``regime_core`` by :func:`resolve_unqualified`; members defined
  outside ``regime_core`` are skipped (:func:`skip_foreign_members`).
"""

from __future__ import annotations

import re
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

from regime_book.choices import import_dotted


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
    ``regime_core.data.prepared.load_examples`` (re-exports are documented where defined)."""
    try:
        obj, _, _ = import_dotted(dotted)
    except ValueError:  # no module of it imports, or it names no attribute there
        return None
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    return f"{module}.{qualname}" if module and qualname else None


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


class StatisticsGlossaryDirective(SphinxDirective):
    """A Sphinx glossary of the statistical methods, interval labels, tests and verdict words,
    generated from ``regime_core.vocabulary.glossary()``, their one definition in the package."""

    def run(self) -> list[nodes.Node]:
        from regime_core import vocabulary
        from regime_core.runner.judge import OURS_WORDS, VERDICTS

        lines = [".. glossary::", ""]
        for terms, meaning in vocabulary.glossary(VERDICTS, OURS_WORDS.values()):
            lines += [f"   {_rst_escape(term)}" for term in terms]
            lines += [f"      {meaning}", ""]
        return self.parse_text_to_nodes("\n".join(lines))


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
        return self.parse_text_to_nodes("\n".join(lines))
