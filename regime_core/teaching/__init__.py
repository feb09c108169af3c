"""The teaching kit: the synthetic toy world, the two-regime demo, its knob sweeps, the teaching
notebooks' helpers and the annotation kit.

Modules: :mod:`~regime_core.teaching.demo` (``regime demo``), :mod:`~regime_core.teaching.sweeps`
(the knobs), :mod:`~regime_core.teaching.lesson` (the notebooks' parameters, real-data sample and
exercises), :mod:`~regime_core.teaching.annotate`, :mod:`~regime_core.teaching.toyworld`. Their
plots are in :mod:`regime_core.book.figures`.

``from regime_core.teaching import run_demo`` (any name of the demo, sweeps or lesson modules)
keeps working; names are loaded on first use so that ``regime_core.teaching.toyworld`` stays light.
"""

from __future__ import annotations

import importlib
from typing import Any


def __getattr__(name: str) -> Any:
    demo = importlib.import_module("regime_core.teaching.demo")
    try:
        return getattr(demo, name)
    except AttributeError:
        raise AttributeError(f"module 'regime_core.teaching' has no attribute {name!r}") from None
