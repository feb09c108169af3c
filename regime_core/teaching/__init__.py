"""The teaching kit: the synthetic toy world, the two-regime demo and its sweeps, the annotation
kit.

``from regime_core.teaching import run_demo`` (the names of :mod:`regime_core.teaching.demo`) keeps
working; they are loaded on first use so that ``regime_core.teaching.toyworld`` stays light.
"""

from __future__ import annotations

from regime_core._moved import lazy_attributes

__getattr__ = lazy_attributes("regime_core.teaching", "regime_core.teaching.demo")
