"""The routing-latency run: its config, and the run on the toy world through a Context."""

from __future__ import annotations

import shutil

import pytest
from helpers import refused

from regime_core.data.toyworld import ToyWorldConfig, generate
from regime_core.experiments.context import Context
from regime_core.experiments.routing_latency import LatencyConfig, run_latency
from regime_core.experiments.sampling import ids_hash
from regime_core.router import latency
from regime_core.router.model import default_router_path
from regime_core.runner.expected import freeze, is_timing_key


def test_the_defaults_are_the_measurement_modules() -> None:
    cfg = LatencyConfig()
    assert cfg.datasets == ("hotpotqa", "2wikimultihopqa", "musique")
    assert (cfg.warmup_calls, cfg.warm_passes, cfg.cold_processes) == (
        latency.WARMUP_CALLS,
        latency.WARM_PASSES,
        latency.COLD_PROCESSES,
    )
    assert cfg.sample_size is None and cfg.javascript is True


def test_an_unknown_dataset_is_named() -> None:
    # each field's kind is refused as every config's is (tests/test_inputs_configs.py)
    with refused(ValueError, names=["LatencyConfig", "datasets", "nope"]):
        LatencyConfig(datasets=["nope"])


def test_parameters_build_the_config() -> None:
    cfg = LatencyConfig.from_parameters(
        datasets=["musique"], sample_size=None, warm_passes=None, cold_processes=3
    )
    assert cfg.datasets == ("musique",) and cfg.sample_size is None
    assert (cfg.warm_passes, cfg.cold_processes) == (latency.WARM_PASSES, 3)


@pytest.mark.parametrize("javascript", [False, True])
def test_the_run_times_every_sampled_question_and_records_the_sample(javascript: bool) -> None:
    if javascript and shutil.which("node") is None:
        pytest.skip("node is not installed")
    world = generate(ToyWorldConfig(n_questions=30))
    cfg = LatencyConfig(
        datasets=("toyworld",),
        sample_size=12,
        warmup_calls=3,
        warm_passes=2,
        cold_processes=1,
        javascript=javascript,
    )
    result = run_latency(cfg, Context(examples={"toyworld": world}))
    sample = result.samples["toyworld"]
    assert sample.n == 12 and sample.n_available == 30
    assert result.router_file == default_router_path()
    assert result.timings.python_warm.shape == (2, 12)
    numbers = result.to_numbers()
    assert numbers["split"] == "dev" and numbers["n_total"] == 12
    assert numbers["samples"]["toyworld"]["ids_hash"] == ids_hash([ex.id for ex in sample.examples])
    assert numbers["javascript_measured"] is javascript
    assert set(numbers["timings"]) == ({"python", "javascript"} if javascript else {"python"})
    # the same seed draws the same questions; the timings are the only thing that differs
    again = run_latency(cfg, Context(examples={"toyworld": world}))
    assert again.samples["toyworld"].ids_hash == sample.ids_hash
    record = {"name": "routing_latency", "numbers": numbers}
    kept = {e.key for e in freeze({"routing_latency": record})}
    assert not any(is_timing_key(key) for key in kept)
    assert {"n_total", "split", "warm_passes"} <= kept  # the first two levels, no timing
    assert "worst_warm_p99_seconds" not in kept and "machine.cores" not in kept


def test_every_question_is_timed_tiny_pools_included() -> None:
    # routing needs no pool: questions whose pool is too small for hit@5 (two distractors) are
    # left out of the retrieval runs, but routed and timed here like any other
    from regime_core.experiments.common import RunConfig

    world = generate(ToyWorldConfig(n_questions=10, distractors_per_question=2))
    assert all(RunConfig().retrieval.is_tiny_pool(ex) for ex in world)
    cfg = LatencyConfig(
        datasets=("toyworld",), warmup_calls=0, warm_passes=1, cold_processes=1, javascript=False
    )
    result = run_latency(cfg, Context(examples={"toyworld": world}))
    assert result.samples["toyworld"].n == 10 and result.samples["toyworld"].n_tiny_pool == 0
    assert result.to_numbers()["timings"]["python"]["warm"]["n"] == 10
