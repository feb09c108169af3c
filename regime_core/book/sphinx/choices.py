"""Named choices and defaults read from the code, for "Our reading of the paper".

- Directive ``regime-choices``: one table per content line naming a config dataclass, a mapping
  of rule names to explanations, a function or a constant (:func:`describe_choice`)::

      ```{regime-choices}
      regime_core.schema.HOP_ORDER_RULES
      regime_core.data.regimes.RegimeRules
      ```

- Directive ``regime-config-defaults``: the defaults of :mod:`regime_core.config` in one table.
- Role ``{default}``: a module-level value in the prose
  (``{default}`regime_core.config.ALPHA``` -> ``0.25``; ``|kind`` formats as ``{rec}`` does).
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import re
import textwrap
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.util.docutils import SphinxDirective, SphinxRole

from regime_core import paths
from regime_core.book.sphinx.records import warn
from regime_core.book.sphinx.tables import table
from regime_core.runner.records import format_number

_FIELD_ITEM = re.compile(r"^\s*(?:[-*]\s+)?((?:``\w+``\s*/?\s*)+):\s*(.*)$")


@dataclass(frozen=True)
class ChoiceTable:
    """A named choice read from code: its dotted name, a summary and rows of (name, value, note).

    ``value`` is ``None`` for the rows of a mapping of names to explanations (two columns).
    """

    name: str
    summary: str
    rows: tuple[tuple[str, str | None, str], ...]


def import_dotted(dotted: str) -> tuple[Any, Any, str]:
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
    obj, module, attribute = import_dotted(target)
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


# --- rendering -----------------------------------------------------------------------------------


def _choice_nodes(
    choice: ChoiceTable, inline: Callable[[str], list[nodes.Node]]
) -> list[nodes.Node]:
    """Nodes of a choice table; ``inline`` renders reST inline markup (docstrings use it)."""
    two_columns = all(value is None for _, value, _ in choice.rows)
    header = ("Name", "Meaning") if two_columns else ("Name", "Default", "Meaning")
    rows = []
    for name, value, meaning in choice.rows:
        code = [nodes.literal(text=name)] + ([] if two_columns else [nodes.literal(text=value)])
        rows.append([*code, nodes.inline("", "", *inline(meaning))])
    title = nodes.title()
    title += nodes.literal(text=choice.name)
    out: list[nodes.Node] = []
    if choice.summary:
        out.append(nodes.paragraph("", "", *inline(choice.summary)))
    widths = (3, 7) if two_columns else (3, 3, 5)
    out.append(table(header, rows, widths=widths, classes=["regime-choices"], title=title))
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
                _, module, _ = import_dotted(dotted.removesuffix("()"))
                if getattr(module, "__file__", None):
                    self.env.note_dependency(str(module.__file__))
            except Exception as err:  # any failure to read the code is a broken page
                warn(self.env, f"cannot read the choice {dotted!r}: {err}", location, "choices")
                continue
            out += _choice_nodes(choice, lambda text, at=location[1]: self._inline(text, at))
        return out


class ConfigDefaultsDirective(SphinxDirective):
    """A table of the defaults in ``regime_core.config`` (name, value, why)."""

    def run(self) -> list[nodes.Node]:
        self.env.note_dependency(str(Path(paths.__file__).with_name("config.py")))
        rows = [
            (nodes.literal(text=name), nodes.literal(text=value), note)
            for name, value, note in config_defaults()
        ]
        header = ("Name", "Default", "Note")
        return [table(header, rows, widths=(2, 2, 5), classes=["regime-config-defaults"])]


class DefaultValueRole(SphinxRole):
    """``{default}`regime_core.config.ALPHA``` -> ``0.25``: a default read from the code.

    For prose that names a parameter's value (alpha, k, the seed) without typing it. ``|frac``
    style formats are accepted after the name, as in ``{rec}``.
    """

    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        dotted, _, kind = self.text.partition("|")
        kind, _, digits = kind.partition(":")
        try:
            value, module, _ = import_dotted(dotted.strip())
            if getattr(module, "__file__", None):
                self.env.note_dependency(str(module.__file__))
            text = (
                format_number(value, kind, int(digits) if digits else None) if kind else str(value)
            )
        except (ValueError, TypeError) as err:
            warn(self.env, f"default {self.text!r}: {err}", self.get_location())
            return [nodes.literal(self.rawtext, self.text)], []
        return [nodes.inline(self.rawtext, text, classes=["regime-default"])], []
