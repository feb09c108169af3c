"""MathJax served from the book itself, so its maths renders offline.

``regime book`` vendors MathJax under ``<work>/vendor/mathjax`` (:mod:`regime_core.vendor`);
when it is there, the pages load it from ``_static/mathjax``, else from Sphinx's default CDN.
"""

from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx

from regime_core.book.sphinx.records import work_dir


def serve_vendored_mathjax(app: Sphinx, config: Any) -> None:
    """Serve MathJax from ``<work>/vendor/mathjax`` when ``regime book`` has vendored it."""
    from regime_core.vendor import MATHJAX_ENTRY

    vendored = work_dir(app) / "vendor"
    if (vendored / "mathjax" / MATHJAX_ENTRY).is_file():
        config.html_static_path = [*config.html_static_path, str(vendored)]
        config.mathjax_path = f"mathjax/{MATHJAX_ENTRY}"
