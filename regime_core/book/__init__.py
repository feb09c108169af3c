"""The book wing: building the Jupyter Book, its Sphinx extension, the figures, the router page.

``from regime_core.book import build_book`` (the names of :mod:`regime_core.book.build`) keeps
working; they are loaded on first use so that Sphinx can import ``regime_core.book.sphinx`` alone.
"""

from __future__ import annotations

import importlib
from typing import Any


def __getattr__(name: str) -> Any:
    build = importlib.import_module("regime_core.book.build")
    try:
        return getattr(build, name)
    except AttributeError:
        raise AttributeError(f"module 'regime_core.book' has no attribute {name!r}") from None
