"""The extension's node builders: its tables, their cells, text with code, and the tables' numbers.

- :func:`table` builds every table the directives generate (header, rows, column widths).
- :func:`code_spans`: text whose backticked spans are code, as in Markdown.
- :func:`number_tables_per_page`: Sphinx numbers the tables of all unnumbered pages with one
  counter, so the first table of a reference page could be "Table 4"; on a page without a
  section number, tables (and figures) are numbered from 1 on that page.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any, TypeAlias

from docutils import nodes
from sphinx.application import Sphinx

Cell: TypeAlias = str | nodes.Node
# a span between single backticks (Markdown) or double ones (reST, as docstrings write code)
_CODE = re.compile(r"(``?)([^`]+)\1")


def code_spans(text: str) -> list[nodes.Node]:
    """``text`` as inline nodes: each backticked span as code, the rest as text."""
    out: list[nodes.Node] = []
    position = 0
    for match in _CODE.finditer(text):
        if match.start() > position:
            out.append(nodes.Text(text[position : match.start()]))
        out.append(nodes.literal(match.group(2), match.group(2)))
        position = match.end()
    if position < len(text):
        out.append(nodes.Text(text[position:]))
    return out


def plain_text(text: str) -> str:
    """What a reader sees of ``text`` with code spans: the backticks dropped."""
    return _CODE.sub(lambda m: m.group(2), text)


def paragraph(cell: Cell) -> nodes.paragraph:
    """A cell's content as a paragraph: text as text, a node as itself."""
    para = nodes.paragraph()
    para += nodes.Text(cell) if isinstance(cell, str) else cell
    return para


def table(
    header: Sequence[Cell],
    rows: Iterable[Sequence[Cell | nodes.entry]],
    *,
    widths: Sequence[int],
    classes: Sequence[str] = (),
    title: str | nodes.title | None = None,
) -> nodes.table:
    """A table with a header row; a cell is text, a node (wrapped in a paragraph) or a ready
    ``nodes.entry`` (used as it is, e.g. to carry a class). ``widths`` are relative."""
    out = nodes.table(classes=list(classes))
    if title is not None:
        out += title if isinstance(title, nodes.title) else nodes.title(title, title)
    group = nodes.tgroup(cols=len(widths))
    out += group
    for width in widths:
        group += nodes.colspec(colwidth=width)
    head, body = nodes.thead(), nodes.tbody()
    head += _row(header)
    for cells in rows:
        body += _row(cells)
    group += head
    group += body
    return out


def entry(cell: Cell | nodes.entry) -> nodes.entry:
    """A table cell: a ready ``nodes.entry`` as it is, else the cell in a paragraph."""
    if isinstance(cell, nodes.entry):
        return cell
    out = nodes.entry()
    out += paragraph(cell)
    return out


def _row(cells: Sequence[Cell | nodes.entry]) -> nodes.row:
    row = nodes.row()
    row.extend(entry(cell) for cell in cells)
    return row


def number_tables_per_page(app: Sphinx, env: Any) -> list[str]:
    """On every page without a section number, number its tables (and figures and code
    blocks) 1, 2, ... in page order instead of continuing a counter shared by such pages.
    Rewrites no other page (an ``env-get-updated`` handler returns the pages to rewrite)."""
    for docname, by_type in env.toc_fignumbers.items():
        if env.toc_secnumbers.get(docname):
            continue
        for numbers in by_type.values():
            ordered = sorted(numbers, key=lambda target: numbers[target])
            for index, target in enumerate(ordered, start=1):
                numbers[target] = (index,)
    return []
