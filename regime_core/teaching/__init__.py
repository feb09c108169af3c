"""The teaching kit: the two-regime demo on the toy world and its sweeps, the annotation kit.

The toy world itself is a dataset (:mod:`regime_core.data.toyworld`): ``load_examples("toyworld")``
generates it, so it lives in the data layer that every wing may import.
``from regime_core.teaching import run_demo`` (the names of :mod:`regime_core.teaching.demo`) keeps
working; they are loaded on first use.
"""

from __future__ import annotations

from regime_core._moved import lazy_attributes

__getattr__ = lazy_attributes("regime_core.teaching", "regime_core.teaching.demo")
