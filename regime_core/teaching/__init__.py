"""The teaching kit: the two-regime demo, its knob sweeps, the teaching notebooks' helpers and the
annotation kit.

Modules: :mod:`~regime_core.teaching.demo` (``regime demo``), :mod:`~regime_core.teaching.sweeps`
(the knobs), :mod:`~regime_core.teaching.lesson` (the notebooks' parameters, real-data sample and
exercises), :mod:`~regime_core.teaching.annotate`. The toy world itself is a dataset
(:mod:`regime_core.data.toyworld`: ``load_examples("toyworld")`` generates it), so it lives in the
data layer; the plots are in :mod:`regime_core.book.figures`.

``from regime_core.teaching import run_demo`` (any name of the demo, sweeps or lesson modules, which
the demo module re-exports) keeps working; names are loaded on first use.
"""

from __future__ import annotations

from regime_core._moved import lazy_attributes

__getattr__ = lazy_attributes("regime_core.teaching", "regime_core.teaching.demo")
