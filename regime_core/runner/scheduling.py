"""How many runs execute at once, and how many threads each run's kernel may use.

``regime reproduce --jobs N`` runs up to ``N`` independent runs concurrently. Without ``--jobs``
the runner takes one job per core, but never more jobs than the selection has independent runs
(:func:`default_jobs`): on 2 cores, two notebooks at a time. Each run's kernel then gets
``cores // jobs`` threads for OpenMP, BLAS and torch (:func:`thread_environment`), so two
kernels never oversubscribe two cores (each would otherwise start one thread per core).

Pure functions of the dependency graph and the core count; the runner reads the machine's
cores once (:func:`available_cores`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

#: The variables that size a child's thread pools: OpenMP (torch's intra-op threads read it at
#: start-up), the BLAS builds numpy or scipy may load, numexpr, and Apple's Accelerate.
THREAD_VARIABLES: tuple[str, ...] = (
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
)


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity where the OS tells it), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # no affinity API (macOS): every core
        return max(1, os.cpu_count() or 1)


def independent_width(depends_on: Mapping[str, Sequence[str]], selected: Sequence[str]) -> int:
    """The most runs of ``selected`` that can execute at once: the widest level when each run
    sits one level below its deepest selected upstream run (runs of one level never depend on
    each other). 0 for no runs.

    >>> independent_width({"a": [], "b": ["a"], "c": ["a"], "d": ["b", "c"]}, ["a", "b", "c", "d"])
    2
    """
    chosen = set(selected)
    level: dict[str, int] = {}

    def depth(run_id: str) -> int:
        if run_id not in level:
            ups = [u for u in depends_on.get(run_id, ()) if u in chosen]
            level[run_id] = 1 + max((depth(u) for u in ups), default=-1)
        return level[run_id]

    widths: dict[int, int] = {}
    for run_id in chosen:
        widths[depth(run_id)] = widths.get(depth(run_id), 0) + 1
    return max(widths.values(), default=0)


def default_jobs(cores: int, width: int) -> int:
    """One job per core, at most ``width`` (the independent runs available), at least 1."""
    return max(1, min(cores, width))


def threads_per_job(cores: int, jobs: int) -> int:
    """The threads each of ``jobs`` concurrent kernels may use on ``cores`` cores (at least 1);
    ``jobs`` is at least 1 (:func:`regime_core.runner.reproduce.reproduce` checks ``--jobs``)."""
    return max(1, cores // jobs)


def thread_environment(threads: int, inherited: Mapping[str, str]) -> dict[str, str]:
    """The child's thread variables: ``threads`` for each of :data:`THREAD_VARIABLES` the
    caller's environment ``inherited`` does not set (a user's own setting wins)."""
    return {name: str(threads) for name in THREAD_VARIABLES if not inherited.get(name)}
