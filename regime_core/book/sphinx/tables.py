"""The extension's tables: one builder for all of them, their style, and their numbers.

- :func:`table` builds every table the directives generate (header, rows, column widths).
- :data:`TABLE_CSS` (served as ``_static/regime.css``): a wide table scrolls inside its own box
  on a narrow screen (the theme wraps tables in ``pst-scrollable-table-container``), the first
  column of the paper-against-ours table stays in view while it scrolls, and generated tables
  wrap long values instead of widening the page.
- :func:`number_tables_per_page`: Sphinx numbers the tables of all unnumbered pages with one
  counter, so the first table of a reference page could be "Table 4"; on a page without a
  section number, tables (and figures) are numbered from 1 on that page.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx

Cell = str | nodes.Node
CSS_FILE = "regime.css"
TABLE_CSS = """\
/* Written by regime_core.book.sphinx.tables: generated tables on small screens. */
.pst-scrollable-table-container { overflow-x: auto; max-width: 100%; }
table.regime-choices td, table.regime-config-defaults td,
table.regime-paper-claims td, table.regime-router-presets td { overflow-wrap: break-word; }
table.regime-paper-claims caption {
  position: sticky; left: 0; max-width: min(100%, 90vw); text-align: left;
}
table.regime-paper-claims th:first-child, table.regime-paper-claims td:first-child {
  position: sticky; left: 0; z-index: 1; min-width: 9rem; max-width: 14rem;
  background: var(--pst-color-background, #fff);
  box-shadow: 1px 0 0 var(--pst-color-border, #ddd);
}
@media (max-width: 600px) {
  table.regime-paper-claims th:first-child, table.regime-paper-claims td:first-child {
    max-width: 9rem;
  }
}
"""


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


def add_table_css(app: Sphinx) -> None:
    """Link ``_static/regime.css`` from every page (written by :func:`write_table_css`)."""
    app.add_css_file(CSS_FILE)


def write_table_css(app: Sphinx, exception: BaseException | None) -> None:
    """Write :data:`TABLE_CSS` into the HTML output's ``_static`` once the build is done."""
    if exception is None and app.builder.format == "html":
        static = Path(app.outdir) / "_static"
        static.mkdir(parents=True, exist_ok=True)
        (static / CSS_FILE).write_text(TABLE_CSS, encoding="utf-8")


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
