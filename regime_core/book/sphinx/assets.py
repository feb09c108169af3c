"""The book's static files: its style sheet and, when ``regime book`` has vendored it, MathJax.

- ``static/`` (beside this module) holds the book's style sheets, plain CSS files: every page
  links ``regime.css`` and ``regime-claims.css`` (the claims' chart and tables); only the pages
  with the live router link ``regime-router.css``
  (:func:`~regime_core.book.sphinx.router_page.router_assets_on_demo_pages`).
- MathJax: ``regime book`` vendors it under ``<work>/vendor/mathjax``
  (:mod:`regime_core.vendor`); the work directory is only known when the book is built, so this
  hook adds it to ``html_static_path`` and points Sphinx's own ``mathjax_path`` at the copy.
  Without it, Sphinx keeps its default (the CDN).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sphinx.application import Sphinx

from regime_core.book.sphinx.records import work_dir

STATIC_DIR = Path(__file__).resolve().parent / "static"
CSS_FILES: tuple[str, ...] = ("regime.css", "regime-claims.css")


def static_files(app: Sphinx, config: Any) -> None:
    """Serve ``static/`` and the vendored MathJax (``config-inited``); link the style sheets."""
    from regime_core.vendor import MATHJAX_ENTRY

    config.html_static_path = [*config.html_static_path, str(STATIC_DIR)]
    for css in CSS_FILES:
        app.add_css_file(css)
    vendored = work_dir(app) / "vendor"
    if (vendored / "mathjax" / MATHJAX_ENTRY).is_file():
        config.html_static_path = [*config.html_static_path, str(vendored)]
        config.mathjax_path = f"mathjax/{MATHJAX_ENTRY}"
