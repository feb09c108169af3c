"""How long routing takes: the packaged router timed on the dev questions of every dataset.

The paper says routing takes under a millisecond. This run routes every prepared two-hop
question of the ``split`` of each of ``datasets`` (or a seeded sample of ``sample_size`` per
dataset) with the packaged router, in Python and in JavaScript (``router.js`` under Node), warm
and cold, by :func:`regime_core.router.latency.measure_latency`, which defines what is timed and
what is not. The claim of ``paper_claims.yml`` judged on this run reads
``worst_warm_p99_seconds``: the larger of the two languages' warm 99th percentiles.

Routing needs no pool and no retrieval, so no question is left out: unlike the retrieval runs,
the sample takes tiny-pool questions too (:meth:`Context.samples
<regime_core.experiments.context.Context.samples>` of a config without retrieval settings).
Timings describe the machine (the record holds it), never the data: the expected-number checks
leave them out (:func:`regime_core.runner.expected.is_timing_key`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from regime_core import config
from regime_core.config import ConfigMixin
from regime_core.experiments.common import check_datasets
from regime_core.experiments.context import Context, resolve
from regime_core.experiments.sampling import Sample, sample_numbers
from regime_core.inputs import Choice, Flag, Nullable
from regime_core.inputs.configs import NAMES, declared, integer
from regime_core.router import latency
from regime_core.router.io import load_router
from regime_core.router.model import default_router_path
from regime_core.schema import SPLITS


@dataclass(frozen=True)
class LatencyConfig(ConfigMixin):
    """The questions the router is timed on and how many calls each measurement makes."""

    NONE_IS_VALUE: ClassVar[frozenset[str]] = frozenset({"sample_size"})  # None = all

    datasets: tuple[str, ...] = declared(config.DATASETS, NAMES)
    """the datasets whose questions are routed, every one of them timed"""
    split: str = declared(config.SPLIT, Choice(SPLITS))
    """the split of each dataset that is read: dev or train"""
    sample_size: int | None = declared(None, Nullable(integer(1)))
    """questions drawn per dataset, seeded; None times every two-hop one"""
    seed: int = declared(config.SEED, integer())
    """seed of the question sample"""
    warmup_calls: int = declared(latency.WARMUP_CALLS, integer())
    """untimed routing calls before the warm measurement (the interpreter's caches filled)"""
    warm_passes: int = declared(latency.WARM_PASSES, integer(1))
    """timed passes over every question in the warm measurement; a question's time is the median
    of its passes (an interruption by another process only ever adds time to one call)
    """
    cold_processes: int = declared(latency.COLD_PROCESSES, integer(1))
    """fresh processes per language in the cold measurement, each timing its first routing call"""
    javascript: bool = declared(True, Flag())
    """time router.js under Node too (Node must then be on PATH)"""

    def validate(self) -> None:
        check_datasets(self.datasets, f"{type(self).__name__}.datasets")


@dataclass(frozen=True)
class RoutingLatencyResult:
    """The timings (:class:`~regime_core.router.latency.LatencyResult`), the questions they were
    taken on (one sample per dataset) and the router file timed."""

    config: LatencyConfig
    samples: Mapping[str, Sample]
    timings: latency.LatencyResult
    router_file: Path

    def to_numbers(self) -> dict[str, Any]:
        """The record's numbers: the split, the timings'
        (:meth:`~regime_core.router.latency.LatencyResult.to_numbers`) and, per dataset, the
        sample (questions available, timed, the ids' hash)."""
        return {
            "split": self.config.split,
            **self.timings.to_numbers(),
            "samples": {name: sample_numbers(s) for name, s in self.samples.items()},
        }


def run_latency(
    cfg: LatencyConfig | None = None, context: Context | None = None
) -> RoutingLatencyResult:
    """Time the packaged router on the questions of ``cfg`` (read through ``context``)."""
    cfg = cfg or LatencyConfig()
    context = resolve(context)
    samples = context.samples(cfg, cfg.datasets)
    items = {name: latency.routing_items(s.examples) for name, s in samples.items()}
    model_file = default_router_path()
    timings = latency.measure_latency(
        items,
        load_router(model_file),
        model_file,
        warmup=cfg.warmup_calls,
        passes=cfg.warm_passes,
        processes=cfg.cold_processes,
        javascript=cfg.javascript,
    )
    return RoutingLatencyResult(cfg, samples, timings, model_file)
