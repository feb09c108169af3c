"""The book wing: building the Jupyter Book, its Sphinx extension, the figures, the router page.

``from regime_core.book import build_book`` (the names of :mod:`regime_core.book.build`) keeps
working; they are loaded on first use so that Sphinx can import ``regime_core.book.sphinx`` alone.
"""

from __future__ import annotations

from regime_core._moved import lazy_attributes

__getattr__ = lazy_attributes("regime_core.book", "regime_core.book.build")
