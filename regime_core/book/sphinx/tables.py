"""The extension's tables: one builder for all of them (header, rows, column widths)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from docutils import nodes

Cell = str | nodes.Node


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
    if len(widths) != len(header):
        raise ValueError(f"{len(header)} header cells but {len(widths)} column widths")
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


def _row(cells: Sequence[Cell | nodes.entry]) -> nodes.row:
    row = nodes.row()
    for cell in cells:
        if isinstance(cell, nodes.entry):
            row += cell
        else:
            entry = nodes.entry()
            entry += paragraph(cell)
            row += entry
    return row
