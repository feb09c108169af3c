"""Named choices and defaults read from the code, for "Our reading of the paper".

Nothing on that page is typed twice: a default is the code's own value, and its meaning is the
attribute docstring written beside it (:func:`regime_core.config.meaning`: one line of plain
English per knob, field and named constant, and a line per value of a knob).

- Directive ``regime-choices``: one table per content line naming a config dataclass (a row per
  field: its default and meaning), a mapping of rule names to explanations (a row per rule), a
  constant that lists a knob's values (a row per value), a function (its signature and
  docstring), or any other module-level constant (its value and meaning)::

      ```{regime-choices}
      regime_core.schema.HOP_ORDER_RULES
      regime_core.data.regimes.RegimeRules
      ```

- Directive ``regime-config-defaults``: every constant of :mod:`regime_core.config` in one
  table (name, default, meaning).
- Role ``{default}``: a module-level value in the prose
  (``{default}`regime_core.config.ALPHA``` -> ``0.25``; ``|kind`` formats as ``{rec}`` does).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import inspect
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.util.docutils import SphinxDirective, SphinxRole

from regime_book.records import warn
from regime_book.tables import table
from regime_core import config
from regime_core.runner.wording import format_number

#: the kinds of value a constant of the defaults table may hold (tables of them are left out)
PLAIN_VALUES: tuple[type, ...] = (bool, int, float, str, tuple)
# reST inline markup: :role:`text` or :domain:role:`text`, and ``code``
_ROLE = re.compile(r":(?P<role>[a-z]+(?::[a-z]+)?):`(?P<text>[^`]+)`")
_DOUBLE_BACKTICKS = re.compile(r"``(?P<text>[^`]+?)``")


@dataclass(frozen=True)
class ChoiceTable:
    """A named choice read from code: its dotted name, its kind (``value``, a knob's or rules'
    ``values`` with their meanings, ``dataclass``, ``function``, or ``call``: a function's
    result), a summary and rows of (name, value, meaning) (``value`` is ``None`` in a
    two-column table: a rule or a knob's value, and its meaning)."""

    name: str
    kind: str
    summary: str
    rows: tuple[tuple[str, str | None, str], ...]


def field_homes() -> tuple[type, ...]:
    """Where the meaning of a field several configs share is written (a field or a default
    constant without a docstring of its own means what the field of that name means there)."""
    from regime_core.data.regimes import RegimeRules
    from regime_core.experiments.common import ExperimentConfig
    from regime_core.experiments.router_train import RouterConfig

    return (ExperimentConfig, RouterConfig, RegimeRules)


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


def _show_value(value: Any) -> str:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        default = type(value)()
        return f"{type(value).__name__}()" if value == default else repr(value)
    return repr(value)


def _field_default(f: dataclasses.Field[Any]) -> str:
    if f.default is not dataclasses.MISSING:
        return _show_value(f.default)
    if f.default_factory is not dataclasses.MISSING:
        return _show_value(f.default_factory())
    return "(required)"


def _dataclass_choice(dotted: str, cls: type) -> ChoiceTable:
    """A row per field: its default and its meaning (the field's docstring in the class or its
    bases, else in :func:`field_homes`)."""
    rows = []
    for f in dataclasses.fields(cls):
        found = config.meaning([cls, *field_homes()], f.name)
        rows.append((f.name, _field_default(f), found.text if found else ""))
    return ChoiceTable(dotted, "dataclass", _first_paragraph(cls.__doc__), tuple(rows))


def constant_meaning(module: Any, name: str) -> config.Meaning | None:
    """A constant's meaning: its own docstring, else (a default) that of the field of its
    name in lower case (``ALPHA`` -> ``alpha``)."""
    return config.meaning([module], name) or config.meaning(field_homes(), name.lower())


def _constant_choice(dotted: str, value: Any, module: Any, attribute: str) -> ChoiceTable:
    meaning = constant_meaning(module, attribute)
    text = meaning.text if meaning else ""
    if isinstance(value, Mapping) and all(isinstance(v, str) for v in value.values()):
        rows = tuple((str(k), None, v) for k, v in value.items())
        return ChoiceTable(dotted, "values", text, rows)
    if meaning is not None and meaning.alternatives:
        values = value.keys() if isinstance(value, Mapping) else value
        alternatives = meaning.alternatives
        rows = tuple((str(v), None, alternatives.get(str(v), "")) for v in values)
        return ChoiceTable(dotted, "values", text, rows)
    row = (attribute, _show_value(value), text)
    return ChoiceTable(dotted, "value", "", (row,))


def describe_choice(dotted: str) -> ChoiceTable:
    """Read a named choice from the code for the "Our reading of the paper" page.

    ``dotted`` names a config dataclass (its fields with their defaults), a mapping of names to
    explanations, a module-level constant (its meaning from its docstring,
    :func:`constant_meaning`; a row per value when the meaning lists the values'
    alternatives), or a function (its signature and the first paragraph of its docstring);
    ``name()`` calls a function without arguments and shows what it returns.
    """
    call = dotted.endswith("()")
    target = dotted[:-2] if call else dotted
    obj, module, attribute = import_dotted(target)
    if call:
        if not callable(obj):
            raise ValueError(f"{target} is not callable")
        row = (dotted, None, str(obj()))
        return ChoiceTable(dotted, "call", _first_paragraph(obj.__doc__), (row,))
    if isinstance(obj, type) and dataclasses.is_dataclass(obj):
        return _dataclass_choice(dotted, obj)
    if inspect.isfunction(obj):
        signature = f"{obj.__name__}{inspect.signature(obj)}"
        row = (signature, None, _first_paragraph(obj.__doc__))
        return ChoiceTable(dotted, "function", "", (row,))
    return _constant_choice(dotted, obj, module, attribute)


def config_defaults(module: Any = config) -> list[tuple[str, str, str]]:
    """(name, value, meaning) for every upper-case constant of plain data in ``module``, in the
    order the module defines them."""
    rows = []
    for name, value in vars(module).items():
        if name.isupper() and isinstance(value, PLAIN_VALUES):
            meaning = constant_meaning(module, name)
            rows.append((name, repr(value), meaning.text if meaning else ""))
    return rows


# --- rendering -----------------------------------------------------------------------------------


def as_myst(text: str) -> str:
    """reST inline markup (docstrings are reST) as MyST Markdown, so that a Markdown page still
    renders it as code and links: ````x```` -> ```x```, ``:func:`y``` -> ``{func}`y```.

    >>> as_myst("Labels from :func:`~regime_core.router.outcome_labels` (``-1`` = dropped)")
    'Labels from {func}`~regime_core.router.outcome_labels` (`-1` = dropped)'
    """
    text = _DOUBLE_BACKTICKS.sub(lambda m: f"`{m.group('text')}`", text)
    return _ROLE.sub(lambda m: f"{{{m.group('role')}}}`{m.group('text')}`", text)


def _choice_nodes(
    choice: ChoiceTable, inline: Callable[[str], list[nodes.Node]]
) -> list[nodes.Node]:
    """Nodes of one choice: a captioned table (the caption names it, and says what a knob's
    values or a set of rules are about); a dataclass's summary comes before its table."""
    two_columns = all(value is None for _, value, _ in choice.rows)
    header = ("Name", "Meaning") if two_columns else ("Name", "Default", "Meaning")
    rows = []
    for name, value, meaning in choice.rows:
        code = [nodes.literal(text=name)] + ([] if two_columns else [nodes.literal(text=value)])
        rows.append([*code, nodes.inline("", "", *inline(meaning))])
    title = nodes.title()
    title += nodes.literal(text=choice.name)
    out: list[nodes.Node] = []
    if choice.summary and choice.kind == "values":
        title += [nodes.Text(": "), *inline(choice.summary)]
    elif choice.summary:
        out.append(nodes.paragraph("", "", *inline(choice.summary)))
    widths = (3, 7) if two_columns else (3, 3, 5)
    out.append(table(header, rows, widths=widths, classes=["regime-choices"], title=title))
    return out


def _defaults_table(
    rows: Iterable[tuple[str, Any, str]], widths: Sequence[int], css: str
) -> nodes.table:
    """A table of (name, default, meaning) rows without a caption, name and default as code."""
    cells = [(nodes.literal(text=n), nodes.literal(text=v), meaning) for n, v, meaning in rows]
    return table(("Name", "Default", "Meaning"), cells, widths=widths, classes=[css])


def _values_nodes(choices: list[ChoiceTable]) -> list[nodes.Node]:
    """Single values (constants) in one table, each named by its module and name."""
    rows = []
    for choice in choices:
        (name, value, meaning), module = choice.rows[0], choice.name.rsplit(".", 2)[-2]
        rows.append((f"{module}.{name}", value, meaning))
    return [_defaults_table(rows, (3, 2, 5), "regime-choices")]


class ChoicesDirective(SphinxDirective):
    """One table per content line: a named choice read from the code (:func:`describe_choice`)."""

    has_content = True

    def _inline(self, text: str, lineno: int) -> list[nodes.Node]:
        if Path(self.env.doc2path(self.env.docname)).suffix != ".rst":
            text = as_myst(text)  # a Markdown page: docstrings' reST roles in MyST's syntax
        parsed, messages = self.parse_inline(text, lineno=lineno)
        return [*parsed, *messages]

    def run(self) -> list[nodes.Node]:
        """One table per choice, but consecutive single values share one table."""
        out: list[nodes.Node] = []
        values: list[ChoiceTable] = []
        for offset, line in enumerate(self.content):
            dotted = line.strip()
            if not dotted:
                continue
            location = (self.env.docname, self.content_offset + offset + 1)
            try:
                choice = describe_choice(dotted)
                _, module, _ = import_dotted(dotted.removesuffix("()"))
            except Exception as err:  # any failure to read the code is a broken page
                warn(self.env, f"cannot read the choice {dotted!r}: {err}", location, "choices")
                continue
            for source in (module, config):  # the code and the meanings
                if getattr(source, "__file__", None):
                    self.env.note_dependency(str(source.__file__))
            if choice.kind == "value":
                values.append(choice)
                continue
            if values:
                out += _values_nodes(values)
                values = []
            out += _choice_nodes(choice, functools.partial(self._inline, lineno=location[1]))
        return out + (_values_nodes(values) if values else [])


class ConfigDefaultsDirective(SphinxDirective):
    """A table of the defaults in :mod:`regime_core.config` (name, value, meaning)."""

    def run(self) -> list[nodes.Node]:
        self.env.note_dependency(str(config.__file__))
        return [_defaults_table(config_defaults(), (2, 2, 5), "regime-config-defaults")]


def format_rows(declaration: Any) -> list[tuple[str, str, str, str, str]]:
    """(field, required, value, default, meaning) for every field of an input format
    (:class:`regime_core.inputs.Format`); an optional field without a fixed default says its
    default in its meaning."""
    return [
        (
            f.name,
            "yes" if f.required else "no",
            f.kind.describe(),
            ""
            if f.required or f.default is None
            else json.dumps(list(f.default) if isinstance(f.default, tuple) else f.default),
            f.meaning,
        )
        for f in declaration.fields
    ]


class InputFormatDirective(SphinxDirective):
    """````{regime-input-format} regime_core.inputs.twohop_line.LINE````: the fields of a
    declared input format as a table, read from the declaration (:func:`format_rows`)."""

    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        declaration, module, _ = import_dotted(self.arguments[0])
        self.env.note_dependency(str(module.__file__))
        rows = []
        for name, required, value, default, meaning in format_rows(declaration):
            parsed, messages = self.parse_inline(meaning, lineno=self.lineno)
            cells = (nodes.literal(text=name), required, value, nodes.literal(text=default))
            rows.append((*cells, nodes.inline("", "", *parsed, *messages)))
        header = ("Field", "Required", "Value", "Default", "Meaning")
        return [table(header, rows, widths=(2, 1, 3, 2, 4), classes=["regime-input-format"])]


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
