"""One function per claim of the paper, each returning a typed result that its notebook plots
and records (see :mod:`regime_core.experiments.common` for the shared flow)."""
