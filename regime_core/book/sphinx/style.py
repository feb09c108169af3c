"""The book's own style sheet, ``_static/regime.css``, linked from every page.

What the theme leaves to the pages, on a narrow screen: a wide table scrolls inside its own box
(the theme wraps tables in ``pst-scrollable-table-container``) and the generated tables wrap
long values; a table of names, defaults and meanings shows a block per row ("name = default",
then its meaning); the first column of the paper-against-ours table stays in view while it
scrolls, and its caption on screen; long dotted names (API headings, signatures) wrap instead
of widening the page, and so do long inline code, field lists, the previous/next links; a
formula wider than a phone scrolls in its own box.
"""

from __future__ import annotations

from pathlib import Path

from sphinx.application import Sphinx

CSS_FILE = "regime.css"
BOOK_CSS = """\
/* Written by regime_core.book.sphinx.style. */
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
@media (max-width: 600px) {  /* a name-default-meaning table: one block per row */
  table.regime-choices thead, table.regime-config-defaults thead { display: none; }
  table.regime-choices tr, table.regime-config-defaults tr {
    display: block; padding: 0.4rem 0; border-bottom: 1px solid var(--pst-color-border, #ddd);
  }
  table.regime-choices td, table.regime-config-defaults td {
    display: inline-block; border: none; padding: 0 0.4rem;
  }
  table.regime-choices td:last-child, table.regime-config-defaults td:last-child {
    display: block;
  }
  table.regime-choices td:not(:last-child) p, table.regime-config-defaults td:not(:last-child) p {
    display: inline;
  }
  table.regime-choices td:nth-child(2):not(:last-child)::before,
  table.regime-config-defaults td:nth-child(2)::before { content: "= "; }
}
/* long inline code (dotted names, file names) breaks instead of widening the page */
article p code, article li code, article dd code, dl.field-list dd { overflow-wrap: anywhere; }
article p code span.pre, article li code span.pre, article dd code span.pre {
  white-space: normal;
}
dl.field-list { grid-template-columns: minmax(0, max-content) minmax(0, 1fr); }
/* the previous/next links at the foot of a page share its width */
.prev-next-area { flex-wrap: wrap; gap: 0.5rem; }
.prev-next-area a { max-width: 100%; min-width: 0; }
.prev-next-area a p.prev-next-title, .prev-next-area a .prev-next-info { overflow-wrap: anywhere; }
/* an inline formula wider than a phone scrolls in its own box */
mjx-container[jax="CHTML"]:not([display="true"]) {
  display: inline-block; max-width: 100%; overflow-x: auto; overflow-y: hidden;
  vertical-align: middle;
}
mjx-container[display="true"] { max-width: 100%; overflow-x: auto; overflow-y: hidden; }
h1 code, h2 code, h3 code, dl.py > dt { overflow-wrap: anywhere; }
h1 code span.pre, h2 code span.pre, h3 code span.pre, dl.py > dt span.pre {
  white-space: normal;
}
"""


def link_css(app: Sphinx) -> None:
    """Link ``_static/regime.css`` from every page (written by :func:`write_css`)."""
    app.add_css_file(CSS_FILE)


def write_css(app: Sphinx, exception: BaseException | None) -> None:
    """Write :data:`BOOK_CSS` into the HTML output's ``_static`` once the build is done."""
    if exception is None and app.builder.format == "html":
        static = Path(app.outdir) / "_static"
        static.mkdir(parents=True, exist_ok=True)
        (static / CSS_FILE).write_text(BOOK_CSS, encoding="utf-8")
