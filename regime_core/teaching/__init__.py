"""The teaching kit: the synthetic toy world, the two-regime demo and its sweeps, the annotation
kit.

``from regime_core.teaching import run_demo`` (the names of :mod:`regime_core.teaching.demo`) keeps
working; they are loaded on first use so that ``regime_core.teaching.toyworld`` stays light.
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
