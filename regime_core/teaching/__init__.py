"""The teaching kit: the two-regime demo, its knob sweeps, the teaching notebooks' helpers and the
annotation kit.

Modules: :mod:`~regime_core.teaching.demo` (``regime demo``), :mod:`~regime_core.teaching.sweeps`
(the knobs), :mod:`~regime_core.teaching.lesson` (the notebooks' parameters, real-data sample and
exercises), :mod:`~regime_core.teaching.plan` (the teachers' lesson plan and its measured
times), :mod:`~regime_core.teaching.annotate`. The toy world itself is a dataset
(:mod:`regime_core.data.toyworld`: ``load_examples("toyworld")`` generates it), so it lives in the
data layer; the plots are in :mod:`regime_core.book.figures`.
"""
